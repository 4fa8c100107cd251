package driver_test

import (
	"errors"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo"
	"github.com/kpool/kpool/provider/civo/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// TestCredentials: an api-key credential reads its key from the variable
// the operator's file names; the default one from CIVO_TOKEN; the key
// goes only where the credential allows.
func TestCredentials(t *testing.T) {
	e := newEmulated(t)
	t.Setenv("KPOOL_TEST_CIVO_KEY", apiKey)
	creds, err := provider.ParseCredentials([]byte(`
defaults: {civo: key}
credentials:
  key: {type: civo, kind: api-key, secretEnv: KPOOL_TEST_CIVO_KEY, scopes: ["`+region+`"], endpoints: ["`+e.Cluster.Spec.Endpoint+`"]}
`), []provider.Profile{civo.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	d := driver.New(provider.DriverOptions{Credentials: creds, Transport: e.Client.Transport})
	if _, err := d.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KPOOL_TEST_CIVO_KEY", "wrong-secret-key")
	_, err = d.NodePoolList(ctx, e.Cluster)
	if !provider.IsPermissionDenied(err) || strings.Contains(err.Error(), "wrong-secret-key") {
		t.Fatalf("a wrong key: %v, want permission denied without the key", err)
	}
	// Another region is refused by scope.
	other := clusterAt(e.Cluster.Spec.Endpoint)
	other.Spec.Platform.Civo.Region = "NYC1"
	var pe *provider.Error
	if _, err := d.NodePoolList(ctx, other); !errors.As(err, &pe) || pe.Field != "spec.credential" {
		t.Fatalf("another region: %v", err)
	}
	// No endpoint: Civo's public API, which this credential may not reach;
	// refused before any request.
	before := len(e.Sim.Calls())
	if _, err := d.NodePoolList(ctx, clusterAt("")); !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.endpoint" || !strings.Contains(pe.Reason, "api.civo.com") {
		t.Fatalf("the public endpoint: %v", err)
	}

	// The default kind: CIVO_TOKEN.
	t.Setenv(driver.TokenEnv, apiKey)
	d = driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, civo.Profile{}, nil, e.URL), Transport: e.Client.Transport})
	if _, err := d.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatalf("CIVO_TOKEN: %v", err)
	}
	t.Setenv(driver.TokenEnv, "")
	if _, err := d.NodePoolList(ctx, e.Cluster); !provider.IsPermissionDenied(err) {
		t.Fatalf("no CIVO_TOKEN: %v", err)
	}
	// An endpoint the default credential does not allow, and plain http.
	srv := httptest.NewUnstartedServer(e.Sim)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	d = setup.Driver(t, srv.Client().Transport, nil, e.URL)
	if _, err := d.NodePoolList(ctx, clusterAt(srv.URL)); !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.endpoint" {
		t.Fatalf("an endpoint not allowed: %v", err)
	}
	if _, err := d.NodePoolList(ctx, clusterAt("http://"+strings.TrimPrefix(e.Cluster.Spec.Endpoint, "https://"))); !provider.IsValidation(err) {
		t.Fatalf("plain http: %v", err)
	}
	if n := len(e.Sim.Calls()) - before - 2; n != 0 { // the CIVO_TOKEN list only: its pools, then its cluster (the autoscaler's)
		t.Fatalf("%d calls that should have been refused reached the emulator", n)
	}
}

// TestErrorMapping: Civo's answers map to kinds: 404 not found, 401
// permission denied, 429 throttled with its Retry-After.
func TestErrorMapping(t *testing.T) {
	e := newEmulated(t)
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, e.spec("ghost", 1, "g4s.kube.small")); !provider.IsNotFound(err) {
		t.Fatalf("404: %v", err)
	}
	wrong := driver.New(provider.DriverOptions{Credentials: providertest.Allow(t, civo.Profile{}, "not-the-key", e.URL), Transport: e.Client.Transport})
	_, err := wrong.NodePoolList(ctx, e.Cluster)
	if !provider.IsPermissionDenied(err) || provider.Retryable(err) || strings.Contains(err.Error(), "not-the-key") {
		t.Fatalf("401: %v", err)
	}
	e.Sim.SetRateLimit(0.001, 1)
	_, _ = e.Driver.NodePoolList(ctx, e.Cluster)
	_, err = e.Driver.NodePoolList(ctx, e.Cluster)
	if d, ok := provider.RetryAfter(err); !provider.IsThrottled(err) || !ok || d < time.Second {
		t.Fatalf("429: %v", err)
	}
	e.Sim.SetRateLimit(0, 0)
	// A closed port on loopback: transient.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	_ = l.Close()
	d := setup.Driver(t, e.Client.Transport, providertest.FastRetry(), closed)
	if _, err := d.NodePoolList(ctx, clusterAt(closed)); !provider.IsTransient(err) {
		t.Fatalf("closed port: %v", err)
	}
}
