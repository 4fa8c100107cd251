package driver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	"github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// TestTokenWire: a client-secret credential's secret goes to its
// authority and nowhere else. A token endpoint that redirects, or an
// authority whose discovery document names a token endpoint on another
// origin, gets nothing sent there; the call fails on spec.credential.
func TestTokenWire(t *testing.T) {
	const tenant, app = "00000000-0000-0000-0000-0000000000aa", "00000000-0000-0000-0000-0000000000bb"
	t.Setenv("KPOOL_TEST_APP_SECRET", "the-apps-secret")
	ca := providertest.NewCA(t)
	target := providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {})
	for _, tc := range []struct {
		name string
		// elsewhere: the discovery document names the target's token
		// endpoint; else the authority's own endpoint redirects there.
		elsewhere bool
	}{
		{"token endpoint redirects", false},
		{"discovery names another origin", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var authority *providertest.Listener
			authority = providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") {
					providertest.Redirect(target.URL)(w, r)
					return
				}
				token := authority.URL + "/" + tenant + "/oauth2/v2.0/token"
				if tc.elsewhere {
					token = target.URL + "/" + tenant + "/oauth2/v2.0/token"
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"token_endpoint":%q,"authorization_endpoint":%q,"issuer":%q}`,
					token, authority.URL+"/"+tenant+"/oauth2/v2.0/authorize", authority.URL+"/"+tenant+"/v2.0")
			})
			arm := "https://127.0.0.1:1"
			creds, err := provider.ParseCredentials(fmt.Appendf(nil, `
defaults: {azure: app}
credentials:
  app: {type: azure, kind: client-secret, tenantId: %s, clientId: %s, secretEnv: KPOOL_TEST_APP_SECRET,
        authority: %s, scopes: ["*"], endpoints: [%s]}
`, tenant, app, authority.URL, arm), []provider.Profile{aks.Profile{}})
			if err != nil {
				t.Fatal(err)
			}
			retry := provider.DefaultRetry()
			retry.Delay = time.Millisecond
			d := driver.New(provider.DriverOptions{Credentials: creds, Transport: providertest.NewClient(ca).Transport, Retry: &retry})
			_, err = d.NodePoolList(context.Background(), clusterAt(arm))
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.credential" || provider.Retryable(err) {
				t.Errorf("got %v; want a validation error on spec.credential", err)
			}
			if len(authority.Requests()) == 0 {
				t.Error("the authority got no request")
			}
		})
	}
	if got := target.Requests(); len(got) != 0 {
		t.Fatalf("the secret's redirect target got %d requests: %v", len(got), got)
	}
}
