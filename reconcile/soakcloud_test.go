package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// soakEmulator is what the soak needs of a cloud's emulator: every one is
// built on the cloudsim engine.
type soakEmulator interface {
	cloudsim.Emulator
	Calls() []sim.Call
	SetFaultRate(rate float64)
	SetRateLimit(perSecond float64, burst int)
}

// soakCluster is one cluster of the soak: a cloud of provider/catalog/clouds,
// its emulator (its Demo, on the soak's timings) served on loopback with
// its demo cluster, and the pools that were there before the soak.
type soakCluster struct {
	cloud clouds.Cloud
	emu   soakEmulator
	srv   *httptest.Server
	spec  kpool.ClusterSpec
	// before are the pools the demo cluster had (the cloud's own, such as
	// AKS's system pool): not orphans of the soak's.
	before map[string]bool
	// The emulator's fault rate and rate limit (set), while not held
	// (quiet).
	faults, rate float64
	burst        int
}

// soakRetry scales the drivers' SDK retry delays down to the soak's
// seconds-long operations (Retry-After stays the emulator's).
func soakRetry() *provider.Retry {
	r := provider.DefaultRetry()
	r.Delay = 10 * time.Millisecond
	return &r
}

// soakCloudsNamed are the clouds of -soak.clouds.
func soakCloudsNamed(t *testing.T) []clouds.Cloud {
	var out []clouds.Cloud
	for _, name := range strings.Split(*soakClouds, ",") {
		i := slices.IndexFunc(clouds.All(), func(c clouds.Cloud) bool { return c.Name == strings.TrimSpace(name) })
		if i < 0 {
			t.Fatalf("-soak.clouds: no cloud %q (%s)", name, strings.Join(clouds.Names(), ", "))
		}
		out = append(out, clouds.All()[i])
	}
	return out
}

// startSoakCluster serves cloud's emulator and returns its demo cluster at
// the emulator, or, for the hung cluster, at tarpit.
func startSoakCluster(t *testing.T, cloud clouds.Cloud, tarpit string) *soakCluster {
	e, err := cloud.Emulator(soakOperations)
	if err != nil {
		t.Fatal(err)
	}
	c := &soakCluster{cloud: cloud, emu: e.(soakEmulator), srv: httptest.NewUnstartedServer(e)}
	c.srv.StartTLS()
	t.Cleanup(c.srv.Close)
	endpoint := c.srv.URL
	if tarpit != "" {
		endpoint = tarpit
	}
	c.spec = e.Clusters(endpoint)[0].Spec
	return c
}

// soakPool is the spec of the i-th pool of a cloud: nodeCount and, where
// the cloud has zones, one; its block the example kpool dev suggests (the
// profile's machine type and example flags).
func soakPool(p provider.Profile, i int) string {
	block := p.CLI().ExampleBlock()
	spec := map[string]any{"platform": map[string]any{string(p.Type()): block}, "nodeCount": 1 + i%3}
	if p.Capabilities().Zones != provider.ZonesNone {
		spec["zones"] = []string{strconv.Itoa(1 + i%3)}
	}
	b, _ := json.Marshal(spec)
	return string(b)
}

// soakCall is a call in an emulator's log, and the emulator's endpoint.
type soakCall struct {
	sim.Call
	emulator string
}

// allCalls is every emulator's call log.
func allCalls(scs []*soakCluster) []soakCall {
	var out []soakCall
	for _, c := range scs {
		for _, call := range c.emu.Calls() {
			out = append(out, soakCall{call, c.srv.URL})
		}
	}
	return out
}

func throttledCalls(emu soakEmulator) int {
	n := 0
	for _, c := range emu.Calls() {
		if c.Status == http.StatusTooManyRequests {
			n++
		}
	}
	return n
}

// set sets the emulator's fault rate and rate limit, kept for quiet.
func (c *soakCluster) set(faults, rate float64, burst int) {
	c.faults, c.rate, c.burst = faults, rate, burst
	c.emu.SetFaultRate(faults)
	c.emu.SetRateLimit(rate, burst)
}

// quiet holds the emulator's faults and rate limit (on), or sets them
// again (off).
func (c *soakCluster) quiet(on bool) {
	if on {
		c.emu.SetFaultRate(0)
		c.emu.SetRateLimit(0, 0)
		return
	}
	c.emu.SetFaultRate(c.faults)
	c.emu.SetRateLimit(c.rate, c.burst)
}

// listed lists a cluster's pools through its driver, by provider name.
func listed(t *testing.T, drivers *provider.Registry, c *kpool.Cluster) map[string]bool {
	pools, err := drivers.Driver(c.Spec.Platform.Type).NodePoolList(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range pools {
		out[p.ProviderName] = true
	}
	return out
}

// soakReady: every pool of the healthy clusters is Ready at its
// generation, as kpool shows it, and the deleted ones are gone from kpool.
func soakReady(svc *service.Service, cls []*kpool.Cluster, hung int, gone map[string]string, lat *latencies) (bool, string) {
	bg := context.Background()
	now := time.Now()
	ok, why := true, ""
	for i, c := range cls {
		if i == hung {
			continue
		}
		pools, _, err := svc.Store.NodePools(bg, kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: 1000}})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pools {
			switch {
			case p.Status.Phase == kpool.PhaseReady && p.Status.ObservedGeneration == p.Generation:
				lat.ready(p.ID, now)
				if _, del := gone[p.ID]; del && ok {
					ok, why = false, p.Name+" still in kpool"
				}
			case ok:
				ok, why = false, fmt.Sprintf("%s is %s at %d/%d: %s", p.Name, p.Status.Phase, p.Status.ObservedGeneration, p.Generation, p.Status.Message)
			}
		}
	}
	return ok, why
}

// soakAtClouds: every pool of the healthy clusters is at its cloud with
// its spec's count and no operation running, and the deleted ones are gone
// from their cloud and from kpool. The clouds are read through the
// drivers with the emulators' faults and limits held, so that what is
// read is what they hold.
func soakAtClouds(svc *service.Service, drivers *provider.Registry, scs []*soakCluster, cls []*kpool.Cluster, hung int, gone map[string]string) (bool, string) {
	for _, c := range scs {
		c.quiet(true)
		defer c.quiet(false)
	}
	bg := context.Background()
	for i, c := range cls {
		if i == hung {
			continue
		}
		at, err := drivers.Driver(c.Spec.Platform.Type).NodePoolList(bg, c)
		if err != nil {
			return false, "listing " + c.Name + ": " + err.Error()
		}
		pools, _, err := svc.Store.NodePools(bg, kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: 1000}})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pools {
			got, ok := provider.Find(at, p.ProviderName)
			switch {
			case !ok:
				return false, fmt.Sprintf("%s missing at %s", p.Name, c.Name)
			case got.Count != p.Spec.Count() || got.State != provider.StateReady:
				return false, fmt.Sprintf("%s at %s: count %d, %s", p.Name, c.Name, got.Count, got.State)
			}
		}
		for id, path := range gone {
			cl, pn, _ := strings.Cut(path, "/")
			if cl != c.Name {
				continue
			}
			if _, ok := provider.Find(at, pn); ok {
				return false, path + " still at its cloud"
			}
			if _, err := svc.Store.NodePool(bg, id); err == nil {
				return false, path + " still in kpool"
			}
		}
	}
	return true, ""
}

// soakOrphans lists the pools at the clouds that no stored pool owns, as
// the drivers list them, but those the clusters had before the soak.
func soakOrphans(t *testing.T, svc *service.Service, drivers *provider.Registry, scs []*soakCluster, cls []*kpool.Cluster, hung int) []string {
	var out []string
	for i, c := range cls {
		if i == hung {
			continue
		}
		pools, _, err := svc.Store.NodePools(context.Background(), kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		owned := maps.Clone(scs[i].before)
		for _, p := range pools {
			owned[p.ProviderName] = true
		}
		for name := range listed(t, drivers, c) {
			if !owned[name] {
				out = append(out, c.Name+"/"+name)
			}
		}
	}
	return out
}
