package driver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	"github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// TestNoToken checks that a driver without a valid token is refused with
// a permission error, not a transient one.
func TestNoToken(t *testing.T) {
	e := newEmulated(t)
	d := driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, aks.Profile{}, azcore.TokenCredential(badToken{}), e.URL), Transport: e.Client.Transport})
	_, err := d.NodePoolList(context.Background(), e.Cluster)
	if !provider.IsPermissionDenied(err) {
		t.Fatalf("wrong token: %v", err)
	}
}

type badToken struct{}

func (badToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "wrong", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// tokenEndpoint serves an Entra ID tenant on loopback whose token
// endpoint answers status with body.
func tokenEndpoint(t *testing.T, status int, body string) (authority string, client *http.Client) {
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") {
			base := srv.URL + "/" + strings.Split(strings.Trim(r.URL.Path, "/"), "/")[0]
			fmt.Fprintf(w, `{"token_endpoint":%q,"authorization_endpoint":%q,"issuer":%q}`,
				base+"/oauth2/v2.0/token", base+"/oauth2/v2.0/authorize", base+"/v2.0")
			return
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL + "/", srv.Client()
}

// TestCredentialErrors: a real client-secret credential whose token
// endpoint refuses it is permission denied; one whose endpoint is down or
// failing is transient (an identity outage, retried), never the reverse.
func TestCredentialErrors(t *testing.T) {
	e := newEmulated(t)
	closed := func() (string, *http.Client) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close() // nothing listens there now
		return "https://" + addr + "/", http.DefaultClient
	}
	for _, tc := range []struct {
		name     string
		endpoint func() (string, *http.Client)
		kind     provider.Kind
	}{
		{"bad client secret (401)", func() (string, *http.Client) {
			return tokenEndpoint(t, 401, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)
		}, provider.KindPermissionDenied},
		{"unknown tenant (400)", func() (string, *http.Client) {
			return tokenEndpoint(t, 400, `{"error":"invalid_request","error_description":"AADSTS90002: Tenant not found."}`)
		}, provider.KindPermissionDenied},
		{"token endpoint failing (500)", func() (string, *http.Client) {
			return tokenEndpoint(t, 500, `{"error":"server_error","error_description":"AADSTS50000: There was an error issuing a token."}`)
		}, provider.KindTransient},
		{"token endpoint unreachable", closed, provider.KindTransient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authority, client := tc.endpoint()
			cred, err := azidentity.NewClientSecretCredential("00000000-0000-0000-0000-0000000000aa", "00000000-0000-0000-0000-0000000000bb", "wrong",
				&azidentity.ClientSecretCredentialOptions{DisableInstanceDiscovery: true, ClientOptions: policy.ClientOptions{
					Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: authority},
					Transport: client,
					Retry:     policy.RetryOptions{MaxRetries: -1},
				}})
			if err != nil {
				t.Fatal(err)
			}
			d := driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, aks.Profile{}, azcore.TokenCredential(cred), e.URL), Transport: e.Client.Transport})
			_, err = d.NodePoolList(context.Background(), e.Cluster)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind {
				t.Fatalf("got %v, want %s", err, tc.kind)
			}
			t.Log(pe.Reason)
			if n := len(e.Sim.Calls()); n != 0 {
				t.Fatalf("%d calls reached ARM without a token", n)
			}
		})
	}
}

// TestClientSecretAuthority: a client-secret credential of the operator's
// file gets its tokens from the authority it names (here the emulator's
// Entra ID endpoint, through the driver's transport), and ARM is called
// with the token issued there.
func TestClientSecretAuthority(t *testing.T) {
	e := newEmulated(t)
	const tenant, client = "00000000-0000-0000-0000-0000000000aa", "00000000-0000-0000-0000-0000000000bb"
	e.Sim.AddApp(aksim.App{TenantID: tenant, ClientID: client, Secret: "the-apps-secret"})
	t.Setenv("KPOOL_TEST_APP_SECRET", "the-apps-secret")
	creds, err := provider.ParseCredentials([]byte(fmt.Sprintf(`
defaults: {azure: app}
credentials:
  app: {type: azure, kind: client-secret, tenantId: %s, clientId: %s, secretEnv: KPOOL_TEST_APP_SECRET,
        authority: %s, scopes: [%s], endpoints: [%s]}
`, tenant, client, e.Cluster.Spec.Endpoint, subscription, e.Cluster.Spec.Endpoint)), []provider.Profile{aks.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	d := driver.New(provider.DriverOptions{Credentials: creds, Transport: e.Client.Transport})
	if _, err := d.NodePoolList(context.Background(), e.Cluster); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Sim.IssuedTokens()); n != 1 {
		t.Fatalf("%d tokens issued, want 1", n)
	}
	t.Setenv("KPOOL_TEST_APP_SECRET", "wrong")
	d = driver.New(provider.DriverOptions{Credentials: creds, Transport: e.Client.Transport})
	_, err = d.NodePoolList(context.Background(), e.Cluster)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindPermissionDenied || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("a wrong secret: %v, want permission denied without the secret", err)
	}
}
