package driver_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
	"github.com/kpool/kpool/provider/gke/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// serviceAccountKey returns a service account key file whose token
// endpoint is tokenURI.
func serviceAccountKey(t *testing.T, tokenURI string) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": project, "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "kpool@" + project + ".iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI})
	return string(b)
}

// TestServiceAccountTokenWire: a service-account credential's signed
// assertion goes to its key's token endpoint, through the driver's
// transport, and the token it gets there to the GKE API; a token endpoint
// that redirects gets nothing sent elsewhere, and the call fails on
// spec.credential, never retried.
func TestServiceAccountTokenWire(t *testing.T) {
	e := newEmulated(t)
	ca := providertest.NewCA(t)
	target := providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {})
	good := providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"kpool-cloudsim","token_type":"Bearer","expires_in":3600}`))
	})
	redirecting := providertest.Listen(t, ca, providertest.Redirect(target.URL))
	roots := ca.Pool.Clone()
	roots.AddCert(e.Server.Certificate())
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	for _, tc := range []struct {
		name     string
		endpoint *providertest.Listener
		field    string // "": the list succeeds
	}{
		{"token endpoint", good, ""},
		{"token endpoint that redirects", redirecting, "spec.credential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KPOOL_TEST_SA_KEY", serviceAccountKey(t, tc.endpoint.URL+"/token"))
			creds, err := provider.ParseCredentials([]byte(`
defaults: {gcp: sa}
credentials:
  sa: {type: gcp, kind: service-account, secretEnv: KPOOL_TEST_SA_KEY, scopes: [`+project+`], endpoints: [`+e.URL+`]}
`), []provider.Profile{gke.Profile{}})
			if err != nil {
				t.Fatal(err)
			}
			d := driver.New(provider.DriverOptions{Credentials: creds, Transport: transport, Retry: providertest.FastRetry()})
			_, err = d.NodePoolList(ctx, e.Cluster)
			var pe *provider.Error
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("list with the token endpoint's token: %v", err)
			case tc.field != "" && (!errorsAs(err, &pe) || !provider.IsValidation(err) || pe.Field != tc.field || provider.Retryable(err)):
				t.Fatalf("got %v; want a validation error on %s", err, tc.field)
			}
			if n := len(tc.endpoint.Requests()); n != 1 {
				t.Errorf("the token endpoint got %d requests, want 1", n)
			}
		})
	}
	if got := target.Requests(); len(got) != 0 {
		t.Fatalf("the redirect's target got %v", got)
	}
}
