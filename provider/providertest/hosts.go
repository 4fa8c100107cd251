package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// RunOtherHosts checks that a driver sends its credential nowhere but
// where it may go. A cluster at another endpoint (the same emulator,
// served elsewhere) is refused before any request, a validation error on
// spec.endpoint. With creds, an operator's credential that lists e's
// endpoint alone: a cluster that names no endpoint, whose calls go to the
// cloud's public endpoint (publicHost), is refused at the wire; e's
// cluster is reached; one over plain http sends nothing. It returns the
// driver with creds, for the cloud's own checks (its scopes).
func (s Setup[E, D]) RunOtherHosts(t *testing.T, e *Emulated[E, D], creds provider.Credentials, publicHost string) D {
	t.Helper()
	ctx := context.Background()
	other := httptest.NewUnstartedServer(e.Sim)
	other.StartTLS()
	t.Cleanup(other.Close)
	d := s.Driver(t, other.Client().Transport, nil, e.URL) // allowed: the first emulator only
	_, err := d.NodePoolList(ctx, s.Cluster(other.URL))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.endpoint" {
		t.Fatalf("got %v, want a validation error on spec.endpoint", err)
	}
	d = s.New(provider.DriverOptions{Credentials: creds, Transport: e.Client.Transport})
	_, err = d.NodePoolList(ctx, s.Cluster(""))
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.endpoint" || !strings.Contains(pe.Reason, publicHost) {
		t.Fatalf("got %v, want the public endpoint refused at the wire", err)
	}
	if _, err := d.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatalf("the allowed endpoint: %v", err)
	}
	before := len(e.Sim.Calls())
	_, _ = d.NodePoolList(ctx, s.Cluster("http://"+strings.TrimPrefix(e.URL, "https://")))
	if n := len(e.Sim.Calls()) - before; n != 0 {
		t.Fatalf("%d calls over plain http", n)
	}
	return d
}

// ClusterAt is a cluster named prod at endpoint, on platform.
func ClusterAt(endpoint string, platform kpool.ClusterPlatform) *kpool.Cluster {
	return &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{Endpoint: endpoint, Platform: platform}}
}

// ListFailingReads creates pools a, b and c, lets them settle, and lists
// them through a driver whose every request to a path holding part fails
// at the emulator, every other one answered: a driver that reads each pool
// after listing their names (EKS's describes, OKE's gets) reports each such
// pool rather than failing the list, which the caller checks.
func (s Setup[E, D]) ListFailingReads(t *testing.T, part string) []provider.Pool {
	t.Helper()
	e := s.Start(t)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := e.Driver.NodePoolCreate(context.Background(), e.Cluster, s.Spec(e, n)); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(time.Hour)
	d := s.Driver(t, failingReads{base: e.Client.Transport, part: part, sim: e.Sim}, FastRetry(), e.URL)
	pools, err := d.NodePoolList(context.Background(), e.Cluster)
	if err != nil {
		t.Fatalf("a list whose reads of %s fail: %v", part, err)
	}
	return pools
}

// failingReads sets the emulator's fault rate to 1 for each request to a
// path holding part, and to 0 for every other.
type failingReads struct {
	base http.RoundTripper
	part string
	sim  Emulator
}

func (f failingReads) RoundTrip(r *http.Request) (*http.Response, error) {
	rate := 0.0
	if strings.Contains(r.URL.Path, f.part) {
		rate = 1
	}
	f.sim.SetFaultRate(rate)
	return f.base.RoundTrip(r)
}
