package aks_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
)

// Concurrent clients see consistent answers (run with -race).
func TestConcurrentClients(t *testing.T) {
	e := newEnv(t, aks.Options{PageSize: 3, Engine: sim.Options{MaxCalls: 50}})
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		name := "c" + string(rune('a'+i))
		go func() {
			_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, name, armcontainerservice.AgentPool{Properties: basic(2)}, nil)
			for j := 0; err == nil && j < 5; j++ {
				pager := e.pools.NewListPager(group, cluster, nil)
				for err == nil && pager.More() {
					_, err = pager.NextPage(ctx)
				}
				e.clock.Advance(time.Second)
			}
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	e.settle()
	n := 0
	pager := e.pools.NewListPager(group, cluster, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Value {
			n++
			if ptr.Deref(ap.Properties.ProvisioningState, "") != "Succeeded" {
				t.Fatalf("%s: %s", *ap.Name, ptr.Deref(ap.Properties.ProvisioningState, ""))
			}
		}
	}
	if n != 8 {
		t.Fatalf("%d pools", n)
	}
	if calls := len(e.sim.Calls()); calls > 50 {
		t.Fatalf("the call log holds %d calls, more than MaxCalls", calls)
	}
}

// TestEntraClientSecret: a registered application gets access tokens from
// the emulator's Entra ID token endpoint with azidentity's own
// ClientSecretCredential, and ARM then takes only those: a wrong secret
// gets no token, and a token the emulator did not issue is refused.
func TestEntraClientSecret(t *testing.T) {
	const tenant, client, secret = "00000000-0000-0000-0000-0000000000aa", "00000000-0000-0000-0000-0000000000bb", "s3cret-of-the-app"
	e := newEnv(t, aks.Options{})
	e.sim.AddApp(aks.App{TenantID: tenant, ClientID: client, Secret: secret})
	cred := func(secret string) azcore.TokenCredential {
		c, err := azidentity.NewClientSecretCredential(tenant, client, secret, &azidentity.ClientSecretCredentialOptions{
			DisableInstanceDiscovery: true,
			ClientOptions: policy.ClientOptions{Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: e.ep.URL + "/"},
				Transport: e.http, Retry: policy.RetryOptions{MaxRetries: -1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := e.client(cred(secret), e.http).Get(ctx, group, cluster, "none", nil); err == nil {
		t.Fatal("a missing pool was found")
	} else {
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	}
	issued := e.sim.IssuedTokens()
	if len(issued) != 1 || issued[0] == "" {
		t.Fatalf("issued %q, want one token", issued)
	}
	if _, err := e.client(cred("wrong"), e.http).Get(ctx, group, cluster, "none", nil); err == nil || !strings.Contains(err.Error(), "AADSTS7000215") {
		t.Fatalf("a wrong secret: %v, want the token endpoint's refusal", err)
	}
	_, err := e.client(staticToken("not-issued"), e.http).Get(ctx, group, cluster, "none", nil)
	wantError(t, err, http.StatusUnauthorized, "InvalidAuthenticationToken")
	e.clock.Advance(2 * time.Hour) // the issued token expires
	_, err = e.client(staticToken(issued[0]), e.http).Get(ctx, group, cluster, "none", nil)
	wantError(t, err, http.StatusUnauthorized, "InvalidAuthenticationToken")
	if got := len(e.sim.IssuedTokens()); got != 1 {
		t.Fatalf("%d tokens issued, want 1", got)
	}
}
