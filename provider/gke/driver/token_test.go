package driver_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// TestNoToken: without a token the emulator answers 401 UNAUTHENTICATED,
// which is permission denied.
func TestNoToken(t *testing.T) {
	e := newEmulated(t)
	d := driver.New(provider.DriverOptions{Credentials: allow(t, "wrong", e.URL), Transport: e.driverTransport(), Retry: providertest.FastRetry()})
	if _, err := d.NodePoolList(ctx, e.Cluster); !provider.IsPermissionDenied(err) {
		t.Fatalf("list with a wrong token: %v", err)
	}
}

func (e *emulated) driverTransport() http.RoundTripper {
	return &http.Transport{TLSClientConfig: tlsTrusting(e.Server)}
}

// tlsTrusting trusts the test servers' certificates.
func tlsTrusting(srvs ...*httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	for _, s := range srvs {
		pool.AddCert(s.Certificate())
	}
	return &tls.Config{RootCAs: pool}
}

// TestTokenOnlyToAllowedHosts: a cluster whose endpoint the credential
// does not allow is refused before any request, and a request the SDK
// would send elsewhere (an instance group URL on another host) is stopped
// at the wire, its token unsent.
func TestTokenOnlyToAllowedHosts(t *testing.T) {
	e := newEmulated(t)
	var seen []string
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	elsewhere := *e.Cluster
	elsewhere.Spec.Endpoint = other.URL
	_, err := e.Driver.NodePoolList(ctx, &elsewhere)
	var pe *provider.Error
	if !provider.IsValidation(err) || !errorsAs(err, &pe) || pe.Field != "spec.endpoint" {
		t.Fatalf("an endpoint the credential does not allow: %v", err)
	}
	// An instance group URL on another host: the guard refuses it.
	redirect := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"nodePools":[{"name":"web","status":"RUNNING","instanceGroupUrls":["` + other.URL + `/compute/v1/projects/p/zones/us-central1-a/instanceGroupManagers/g"]}]}`))
	}))
	defer redirect.Close()
	d := driver.New(provider.DriverOptions{Credentials: allow(t, "secret-token", redirect.URL), Transport: &http.Transport{TLSClientConfig: tlsTrusting(redirect, other)},
		Retry: providertest.FastRetry()})
	c := *e.Cluster
	c.Spec.Endpoint = redirect.URL
	_, err = d.NodePoolList(ctx, &c)
	if !provider.IsValidation(err) || !errorsAs(err, &pe) || pe.Field != "spec.endpoint" {
		t.Fatalf("an instance group on another host: %v", err)
	}
	// Only the allowed host saw a request (and the token).
	if len(seen) != 1 || seen[0] != "Bearer secret-token" {
		t.Fatalf("requests seen by the servers: %q, want one, the allowed host's", seen)
	}
}
