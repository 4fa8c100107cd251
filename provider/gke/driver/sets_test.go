package driver_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool"
	gkesim "github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// bodies records the bodies of the requests a driver sends with method.
func bodies(e *emulated, method string, into *[]string) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Method == method && r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			*into = append(*into, string(b))
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		return e.driverTransport().RoundTrip(r)
	})
}

// TestTaintSets: an update sends only the sets that changed, never GKE's
// own GPU taint as the user's, and refuses to remove a pool's last taint,
// which GKE's nodePools.update cannot do (an empty set is no set): before,
// the driver sent {"taints":{"taints":[]}}, GKE kept the taint, and the
// pool stayed drifted however often the update was sent.
func TestTaintSets(t *testing.T) {
	e := newEmulated(t)
	if err := e.Sim.AddPool(project, location, clusterName, container.NodePool{Name: "cpu", InitialNodeCount: 1, Locations: []string{"us-central1-a"}}); err != nil {
		t.Fatal(err)
	}
	s := e.spec("gpu", "1")
	s.MachineType = "n1-standard-4"
	s.Accelerators = []kpool.Accelerator{{Type: "nvidia-tesla-v100", Count: 1}}
	s.Taints = []kpool.Taint{{Key: "a", Value: "1", Effect: kpool.EffectNoSchedule}, {Key: "b", Value: "2", Effect: kpool.EffectNoExecute}}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	var sent []string
	d := setup.Driver(t, bodies(e, http.MethodPut, &sent), providertest.FastRetry(), e.URL)

	s.Taints = s.Taints[:1] // one of two goes: sent, without GKE's taint
	if _, err := d.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if len(sent) != 1 || strings.Contains(sent[0], "nvidia.com/gpu") || !strings.Contains(sent[0], `"taints":{"taints":[{"effect":"NO_SCHEDULE","key":"a","value":"1"}]}`) ||
		strings.Contains(sent[0], `"labels"`) || strings.Contains(sent[0], `"resourceLabels"`) {
		t.Fatalf("sent %q", sent)
	}
	st, _ := e.Sim.Pool(project, location, clusterName, "gpu")
	if len(st.Config.Taints) != 2 || st.Config.Taints[1].Key != "nvidia.com/gpu" {
		t.Fatalf("taints at GKE: %+v", st.Config.Taints)
	}

	s.Taints = nil // the last one cannot go in place
	_, err := d.NodePoolUpdate(ctx, e.Cluster, s)
	var pe *provider.Error
	if !provider.IsValidation(err) || !errorsAs(err, &pe) || pe.Field != "spec.taints" {
		t.Fatalf("removing the last taint: %v, want a validation error on spec.taints", err)
	}
	if len(sent) != 1 {
		t.Fatalf("sent %q for an update GKE would ignore", sent[1:])
	}
}

// TestQuotaErrors: GKE's quota and limit answers are quota errors (tried
// again slowly), not validation, permission or throttling; the request
// rate stays throttling.
func TestQuotaErrors(t *testing.T) {
	qs := setup
	qs.Emulator = func(o sim.Options) *gkesim.Server {
		emu := gkesim.New(gkesim.Options{Engine: o, Token: "kpool-cloudsim", Limits: gkesim.Limits{Pools: 1, ClusterNodes: 5000, RegionalCPUs: 16}})
		emu.AddCluster(project, location, clusterName, version)
		return emu
	}
	e := &emulated{qs.Start(t)}
	big := e.spec("big", "1", "2")
	big.Count, big.MachineType = 4, "n2-standard-8"
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, big)
	if !provider.IsQuota(err) || provider.IsPermissionDenied(err) {
		t.Fatalf("32 CPUs over a regional quota of 16: %v, want a quota error", err)
	}
	// Google's status (PERMISSION_DENIED, as Google answers a quota), for the controllers' log.
	if pe := (*provider.Error)(nil); !errors.As(err, &pe) || pe.Code != "PERMISSION_DENIED" {
		t.Errorf("32 CPUs over a regional quota of 16: %+v, want code PERMISSION_DENIED (how Google words a quota)", pe)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("one", "1")); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("two", "1")); !provider.IsQuota(err) || provider.IsThrottled(err) {
		t.Fatalf("a second pool over a limit of one: %v, want a quota error", err)
	}
	e.Sim.SetRateLimit(0.001, 1)
	_, _ = e.Driver.NodePoolList(ctx, e.Cluster)
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); !provider.IsThrottled(err) || provider.IsQuota(err) {
		t.Fatalf("over the request rate: %v, want throttled", err)
	}
}
