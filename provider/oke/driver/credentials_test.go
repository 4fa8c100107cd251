package driver_test

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
	"github.com/kpool/kpool/provider/oke/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// TestAPIKeyCredential: an api-key credential's PEM is read from its file
// and signs the requests; another key is permission denied, and neither
// the key nor its path's content reaches the error.
func TestAPIKeyCredential(t *testing.T) {
	e := newEmulated(t)
	dir := t.TempDir()
	pemFile := filepath.Join(dir, "oci_api_key.pem")
	if err := os.WriteFile(pemFile, []byte(okesim.PEM(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := func(fp, file string) provider.Credentials {
		set, err := provider.ParseCredentials([]byte(`
defaults: {oci: key}
credentials:
  key: {type: oci, kind: api-key, tenantId: `+tenancy+`, clientId: `+user+`, fingerprint: "`+fp+`", secretFile: `+file+`, scopes: ["`+compartment+`"], endpoints: ["`+e.Cluster.Spec.Endpoint+`"]}
`), []provider.Profile{oke.Profile{}})
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	d := driver.New(provider.DriverOptions{Credentials: creds(okesim.Fingerprint(&key.PublicKey), pemFile), Transport: e.Client.Transport})
	if _, err := d.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	otherFile := filepath.Join(dir, "other.pem")
	if err := os.WriteFile(otherFile, []byte(okesim.PEM(other)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, fp := range []string{okesim.Fingerprint(&key.PublicKey), okesim.Fingerprint(&other.PublicKey)} {
		d = driver.New(provider.DriverOptions{Credentials: creds(fp, otherFile), Transport: e.Client.Transport})
		_, err := d.NodePoolList(ctx, e.Cluster)
		if !provider.IsPermissionDenied(err) || strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Fatalf("another key: %v, want permission denied", err)
		}
	}
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d = driver.New(provider.DriverOptions{Credentials: creds(okesim.Fingerprint(&key.PublicKey), garbage), Transport: e.Client.Transport})
	_, err := d.NodePoolList(ctx, e.Cluster)
	if !provider.IsPermissionDenied(err) || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Fatalf("a key that is no key: %v", err)
	}
	// Another compartment is refused by scope, before any request.
	foreign := clusterAt(e.Cluster.Spec.Endpoint)
	foreign.Spec.Platform.OCI.CompartmentID = "ocid1.compartment.oc1..other"
	var pe *provider.Error
	if _, err := d.NodePoolList(ctx, foreign); !errors.As(err, &pe) || pe.Field != "spec.credential" {
		t.Fatalf("another compartment: %v", err)
	}
}

// TestNoCredentialToOtherHosts: a cluster whose endpoint the credential
// may not go to is refused before any request; the wire check refuses the
// public endpoint for a credential that lists only the emulator
// (providertest's RunOtherHosts).
func TestNoCredentialToOtherHosts(t *testing.T) {
	e := newEmulated(t)
	// Of kind default: the SDK's default chain, here the test's key.
	driver.UseDefaultConfig(t, identity(key))
	creds, err := provider.ParseCredentials([]byte(`
defaults: {oci: emu}
credentials:
  emu: {type: oci, kind: default, scopes: ["*"], endpoints: ["`+e.URL+`"]}
`), []provider.Profile{oke.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	setup.RunOtherHosts(t, e.fixture, creds, "containerengine.us-phoenix-1.oraclecloud.com")
}

// TestErrorMapping: throttling carries OKE's Retry-After; faults are
// transient; an unreachable endpoint is transient.
func TestErrorMapping(t *testing.T) {
	e := newEmulated(t)
	e.Sim.SetRateLimit(0.001, 1)
	_, _ = e.Driver.NodePoolList(ctx, e.Cluster)
	_, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if d, ok := provider.RetryAfter(err); !provider.IsThrottled(err) || !ok || d < time.Second {
		t.Fatalf("throttled: %v", err)
	}
	e.Sim.SetRateLimit(0, 0)
	e.Sim.SetFaultRate(1)
	for range 10 {
		if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil && !provider.IsTransient(err) {
			t.Fatalf("fault: %v", err)
		}
	}
	e.Sim.SetFaultRate(0)
	// A closed port on loopback.
	l := httptest.NewUnstartedServer(http.NotFoundHandler())
	l.StartTLS()
	closed := l.URL
	l.Close()
	d := setup.Driver(t, e.Client.Transport, providertest.FastRetry(), closed)
	if _, err := d.NodePoolList(ctx, clusterAt(closed)); !provider.IsTransient(err) {
		t.Fatalf("closed port: %v", err)
	}
}
