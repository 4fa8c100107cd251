package driver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/kpool/kpool"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	"github.com/kpool/kpool/provider/aks/driver"
)

// attacker is a stand-in HTTPS server on loopback that records every
// request's Authorization header: where a stolen token would land.
type attacker struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newAttacker(t *testing.T) *attacker {
	a := &attacker{}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen = append(a.seen, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization"))
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"value":[]}`))
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *attacker) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// lenient is a Credentials that forgets to check the endpoint: the wire
// guard must still refuse.
type lenient struct{ provider.Credentials }

func (l lenient) Resolve(c *kpool.Cluster) (*provider.Credential, error) {
	cc := *c
	cc.Spec.Endpoint = ""
	return l.Credentials.Resolve(&cc)
}

// TestTokenNeverLeaves is issue 12's first attack at the driver: a cluster
// record that points at a host of the attacker's choosing (written around
// the API, as an old record would be), or at a subscription the credential
// is not for, is refused before any request; the attacker sees nothing.
func TestTokenNeverLeaves(t *testing.T) {
	e := newEmulated(t)
	evil := newAttacker(t)
	// One transport trusts both servers' certificates, as a system that
	// trusted the attacker's would.
	trust := e.Client.Transport.(*http.Transport).Clone()
	trust.TLSClientConfig.RootCAs = trust.TLSClientConfig.RootCAs.Clone()
	trust.TLSClientConfig.RootCAs.AddCert(evil.srv.Certificate())
	client := &http.Client{Transport: trust}
	// The operator's credential is of kind default: the default chain's
	// identity, here a token the emulator takes.
	driver.UseDefaultCredential(t, aksim.Credential{})
	creds, err := provider.ParseCredentials([]byte(fmt.Sprintf(`
defaults: {azure: prod}
credentials:
  prod:
    type: azure
    kind: default
    scopes: [%q]
    endpoints: [%q]
`, subscription, e.Cluster.Spec.Endpoint)), []provider.Profile{aks.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	otherSub := clusterAt(e.Cluster.Spec.Endpoint)
	otherSub.Spec.Platform.Azure.SubscriptionID = "99999999-9999-9999-9999-999999999999"
	unknown := clusterAt(e.Cluster.Spec.Endpoint)
	unknown.Spec.Credential = "nope"
	spec := e.Harness(t).Spec("pool1", "1")
	for _, tc := range []struct {
		name    string
		creds   provider.Credentials
		cluster *kpool.Cluster
		field   string
	}{
		{"endpoint the credential does not allow (ARM's host, another port)", creds, clusterAt(evil.srv.URL), "spec.endpoint"},
		{"subscription the credential is not for", creds, otherSub, "spec.credential"},
		{"credential that does not exist", creds, unknown, "spec.credential"},
		{"resolver that forgets the endpoint: the wire guard", lenient{creds}, clusterAt(evil.srv.URL), "spec.endpoint"},
		{"no credentials configured: public ARM only", nil, clusterAt(evil.srv.URL), "spec.endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.Sim.Calls())
			d := driver.New(provider.DriverOptions{Credentials: tc.creds, Transport: trust})
			ctx := context.Background()
			_, listErr := d.NodePoolList(ctx, tc.cluster)
			_, createErr := d.NodePoolCreate(ctx, tc.cluster, spec)
			deleteErr := d.NodePoolDelete(ctx, tc.cluster, "pool1")
			for _, err := range []error{listErr, createErr, deleteErr} {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != tc.field {
					t.Fatalf("got %v, want a validation error on %s", err, tc.field)
				}
			}
			if got := evil.requests(); len(got) != 0 {
				t.Fatalf("the attacker received %v", got)
			}
			if n := len(e.Sim.Calls()) - before; n != 0 {
				t.Fatalf("%d calls reached ARM for a refused cluster", n)
			}
		})
	}
	// The same driver and transport reach the allowed endpoint: what is
	// refused above is refused for its host, not for want of a connection.
	d := driver.New(provider.DriverOptions{Credentials: creds, Transport: trust})
	if _, err := d.NodePoolList(context.Background(), e.Cluster); err != nil {
		t.Fatalf("allowed endpoint: %v", err)
	}
	// And the attacker's server does answer when asked without a token:
	// the refusals above were not a dead server.
	resp, err := client.Get(evil.srv.URL + "/probe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := evil.requests(); len(got) != 1 || got[0] != "GET /probe Authorization=" {
		t.Fatalf("attacker saw %v", got)
	}
}
