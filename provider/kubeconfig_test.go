package provider_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// kubeconfigEntry is a good kubeconfig entry of the credentials file.
const kubeconfigEntry = "  kube: {type: azure, kind: kubeconfig, kubeconfigEnv: PROD_KUBECONFIG, scopes: ['*'], endpoints: ['https://kube.example:6443'], users: [alice@example.com]}\n"

// TestParseKubeconfigCredentials: kind kubeconfig is every credential
// platform's; its kubeconfig is never inline, comes from exactly one of a
// variable and a file, and its entry lists the endpoints its server may be
// at. Neither a cluster's spec.credential nor a default may name one.
func TestParseKubeconfigCredentials(t *testing.T) {
	for _, typ := range []string{"azure", "aws", "gcp", "oci", "civo"} {
		file := "credentials:\n  kube: {type: " + typ + ", kind: kubeconfig, kubeconfigFile: /etc/kpool/kube.yaml, scopes: ['*'], endpoints: ['https://kube.example']}\n"
		if _, err := provider.ParseCredentials([]byte(file), catalog.Profiles()); err != nil {
			t.Fatalf("a %s kubeconfig: %v", typ, err)
		}
	}
	for _, tc := range []struct{ name, file, want string }{
		{"inline", "credentials:\n  k: {type: azure, kind: kubeconfig, kubeconfig: 'apiVersion: v1 s3cret', scopes: ['*'], endpoints: ['https://kube.example']}", "a secret is never written in the credentials file"},
		{"from nowhere", "credentials:\n  k: {type: azure, kind: kubeconfig, scopes: ['*'], endpoints: ['https://kube.example']}", "exactly one of kubeconfigEnv and kubeconfigFile"},
		{"from both", "credentials:\n  k: {type: azure, kind: kubeconfig, kubeconfigEnv: K, kubeconfigFile: /k, scopes: ['*'], endpoints: ['https://kube.example']}", "exactly one of kubeconfigEnv and kubeconfigFile"},
		{"no endpoints", "credentials:\n  k: {type: azure, kind: kubeconfig, kubeconfigEnv: K, scopes: ['*']}", "credentials.k.endpoints: required for kind kubeconfig"},
		{"http endpoint", "credentials:\n  k: {type: azure, kind: kubeconfig, kubeconfigEnv: K, scopes: ['*'], endpoints: ['http://kube.example']}", "credentials.k.endpoints"},
		{"no scopes", "credentials:\n  k: {type: azure, kind: kubeconfig, kubeconfigEnv: K, endpoints: ['https://kube.example']}", "credentials.k.scopes: required"},
		{"another kind's setting", "credentials:\n  k: {type: azure, kind: kubeconfig, kubeconfigEnv: K, tenantId: t, scopes: ['*'], endpoints: ['https://kube.example']}", "kind kubeconfig takes no"},
		{"platform without credentials", "credentials:\n  k: {type: k3s, kind: kubeconfig, kubeconfigEnv: K, scopes: ['*'], endpoints: ['https://kube.example']}", "takes no credentials"},
		{"env not a name", "credentials:\n  k: {type: azure, kind: kubeconfig, kubeconfigEnv: 's3cret token', scopes: ['*'], endpoints: ['https://kube.example']}", "credentials.k.kubeconfigEnv: not an environment variable name"},
		{"a default", "defaults: {azure: kube}\ncredentials:\n" + kubeconfigEntry, "defaults.azure: credential \"kube\" is a kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.ParseCredentials([]byte(tc.file), catalog.Profiles())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the error echoes what may be a secret: %v", err)
			}
		})
	}
}

// TestKubeconfigGrant: spec.kubeconfig is granted as spec.credential is,
// and resolved at use to the entry of the cluster's platform only, while
// the grant it was chosen by holds; a name a user may not use answers as
// one that does not exist.
func TestKubeconfigGrant(t *testing.T) {
	set, err := provider.ParseCredentials([]byte("credentials:\n"+kubeconfigEntry+
		"  cloud: {type: azure, kind: default, scopes: ['*'], users: ['*']}\n"+
		"  other: {type: gcp, kind: kubeconfig, kubeconfigEnv: K, scopes: ['*'], endpoints: ['https://kube.example'], users: ['*']}\n"+
		"  narrow: {type: azure, kind: kubeconfig, kubeconfigEnv: K, scopes: [sub-a], endpoints: ['https://kube.example'], users: ['*']}\n"), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	spec := func(kube string) *kpool.ClusterSpec {
		s := &kpool.ClusterSpec{}
		if err := json.Unmarshal([]byte(`{"platform":{"type":"azure","azure":{"subscriptionId":"sub-b","resourceGroup":"rg","clusterName":"c"}}}`), s); err != nil {
			t.Fatal(err)
		}
		s.Kubeconfig, s.Credential = kube, "cloud"
		return s
	}
	alice, bob := &kpool.Identity{Email: "alice@example.com"}, &kpool.Identity{Email: "bob@example.com"}
	admin := &kpool.Identity{Email: "root@example.com", Admin: true}
	basis, err := set.GrantKubeconfig(alice, "", spec("kube"))
	if err != nil || basis != alice.Email {
		t.Fatalf("alice, granted: %q, %v", basis, err)
	}
	for _, tc := range []struct {
		name string
		id   *kpool.Identity
		kube string
		want string
	}{
		{"not granted", bob, "kube", `no kubeconfig "kube" of azure is available to you`},
		{"unknown, to a user", alice, "nope", `no kubeconfig "nope" of azure is available to you`},
		{"another platform's, to a user", alice, "other", `no kubeconfig "other" of azure is available to you`},
		{"a cloud credential, to a user", alice, "cloud", `no kubeconfig "cloud" of azure is available to you`},
		{"unknown, to an admin", admin, "nope", `no credential named "nope"`},
		{"another platform's, to an admin", admin, "other", `credential "other" is for gcp, not azure`},
		{"a cloud credential, to an admin", admin, "cloud", `credential "cloud" is not a kubeconfig`},
		{"another scope", admin, "narrow", `may not be used for`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := set.GrantKubeconfig(tc.id, "", spec(tc.kube))
			var e *kpool.Error
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &e) || e.Code != kpool.CodeForbidden || e.Fields[0].Field != "spec.kubeconfig" {
				t.Fatalf("got %v, want FORBIDDEN on spec.kubeconfig saying %q", err, tc.want)
			}
		})
	}
	cl := &kpool.Cluster{Name: "c", Spec: *spec("kube"), KubeconfigGrant: basis}
	if c, err := set.Kubeconfig(cl); err != nil || c == nil || c.Name != "kube" {
		t.Fatalf("Kubeconfig at use: %v, %v", c, err)
	}
	// The operator gives it to carol instead: alice's cluster no longer
	// reaches its API through it.
	later, err := provider.ParseCredentials([]byte("credentials:\n"+strings.Replace(kubeconfigEntry, "alice@", "carol@", 1)), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := later.Kubeconfig(cl); !provider.IsValidation(err) || !strings.Contains(err.Error(), "spec.kubeconfig") || !strings.Contains(err.Error(), "no longer granted") {
		t.Fatalf("a grant taken away, at use: %v", err)
	}
	cl.Spec.Kubeconfig = "other"
	if _, err := set.Kubeconfig(cl); !provider.IsValidation(err) || !strings.Contains(err.Error(), "spec.kubeconfig") {
		t.Fatalf("another platform's at use: %v", err)
	}
	cl.Spec.Kubeconfig, cl.Spec.Credential = "", "kube"
	if _, err := set.Resolve(cl); !provider.IsValidation(err) || !strings.Contains(err.Error(), "name it in spec.kubeconfig") {
		t.Fatalf("a kubeconfig as spec.credential: %v", err)
	}
}
