package provider_test

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// TestWithEmulators: kpool dev's credentials. A cluster on an emulator
// gets the emulator's identity; a cluster elsewhere gets only what the
// operator's file names, and without a file none at all (never a cloud
// SDK's default chain), which the API accepts and the drivers refuse with
// the reason, before any request.
func TestWithEmulators(t *testing.T) {
	const emu, none = "https://127.0.0.1:4443", "no credential: kpool dev does not use cloud credentials unless --credentials names them"
	ids := map[kpool.PlatformType]any{kpool.PlatformAzure: "an identity"}
	azure := func(endpoint, credential string) *kpool.Cluster {
		return &kpool.Cluster{Name: "c", Spec: kpool.ClusterSpec{Endpoint: endpoint, Credential: credential, Platform: kpool.ClusterPlatform{
			Type: kpool.PlatformAzure, Azure: &kpool.AzureCluster{SubscriptionID: "0b1f6471-1bf0-4dda-aec3-111122223333", ResourceGroup: "rg", ClusterName: "c"}}}}
	}
	user := &kpool.Identity{Email: "dev@kpool.example"}

	offline, err := provider.WithEmulators(nil, catalog.Profiles(), ids, []string{emu}, none)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := offline.Resolve(azure(emu+"/", ""))
	if err != nil || cr.Kind != provider.CredentialEmulator || cr.Identity != "an identity" || !cr.AllowsOrigin(emu) {
		t.Fatalf("a cluster on the emulator: %+v, %v", cr, err)
	}
	if id, err := provider.IdentityOf[string](cr); err != nil || id != "an identity" {
		t.Fatalf("IdentityOf: %q, %v", id, err)
	}
	if _, err := provider.IdentityOf[int](cr); err == nil {
		t.Fatal("IdentityOf took an identity of another type")
	}
	_, err = offline.Resolve(azure("", ""))
	if !provider.IsValidation(err) || !strings.Contains(err.Error(), "spec.credential") || !strings.Contains(err.Error(), none) {
		t.Fatalf("a cluster on the real cloud: %v, want %q on spec.credential", err, none)
	}
	if _, err := offline.Grant(user, "", &azure("", "").Spec); err != nil {
		t.Fatalf("registering a cluster on the real cloud is refused: %v", err)
	}

	// With the operator's file, its default goes where the file says.
	file, err := provider.ParseCredentials([]byte("defaults: {azure: team}\ncredentials:\n  team: {type: azure, kind: default, scopes: ['*'], users: ['*']}"), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	withFile, err := provider.WithEmulators(file, catalog.Profiles(), ids, []string{emu}, none)
	if err != nil {
		t.Fatal(err)
	}
	if cr, err := withFile.Resolve(azure("", "")); err != nil || cr.Name != "team" {
		t.Fatalf("a cluster on the real cloud with a file: %+v, %v", cr, err)
	}
	if cr, err := withFile.Resolve(azure(emu, "")); err != nil || cr.Kind != provider.CredentialEmulator {
		t.Fatalf("a cluster on the emulator with a file: %+v, %v", cr, err)
	}
	if _, err := withFile.Resolve(azure(emu, "team")); err == nil || !strings.Contains(err.Error(), "spec.endpoint") {
		t.Fatalf("the file's credential sent to the emulator: %v", err)
	}

	// The file cannot take the emulator's name or kind.
	taken, _ := provider.ParseCredentials([]byte("credentials:\n  azure-emulator: {type: azure, kind: default, scopes: ['*']}"), catalog.Profiles())
	if _, err := provider.WithEmulators(taken, catalog.Profiles(), ids, []string{emu}, none); err == nil || !strings.Contains(err.Error(), "azure-emulator") {
		t.Fatalf("a file credential named azure-emulator: %v", err)
	}
	if _, err := provider.ParseCredentials([]byte("credentials:\n  a: {type: azure, kind: emulator, scopes: ['*']}"), catalog.Profiles()); err == nil || !strings.Contains(err.Error(), "kpool dev's own") {
		t.Fatalf("a file credential of kind emulator: %v", err)
	}
}
