package driver_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
)

// handMade is an entry a person wrote for a pool kpool does not manage.
const handMade = "1:3:ocid1.nodepool.oc1.phx.aaaaaaaahandmade"

// TestAutoscalerEntries: a pool's bounds are its entry in the Cluster
// Autoscaler add-on's nodes (MIN:MAX:OCID), written by create and update,
// removed when autoscaling is turned off or the pool deleted; two pools
// changed at once both end up there; the entry a person wrote, and the
// add-on's other keys, stay as they were; the autoscaler then owns the
// count, which drift leaves alone and a bounds change clamps.
func TestAutoscalerEntries(t *testing.T) {
	e := newEmulated(t)
	if err := e.Sim.SetAddon(clusterID, okesim.AutoscalerAddon, map[string]string{"nodes": handMade, "numOfReplicas": "2"}); err != nil {
		t.Fatal(err)
	}
	web := e.spec("web")
	web.Autoscaling, web.MinCount, web.MaxCount = true, 2, 6
	created, err := e.Driver.NodePoolCreate(ctx, e.Cluster, web)
	if err != nil || !created.Autoscaling || created.MinCount != 2 || created.MaxCount != 6 {
		t.Fatalf("create: %+v %v", created, err)
	}
	e.Clock.Advance(time.Hour)
	webID := e.list(t, web.ProviderName).Extra["id"]
	e.wantNodes(t, handMade, "2:6:"+webID)

	// Two pools turned to autoscaling at the same time: one write wins,
	// the other reads again and, while the add-on's work request runs,
	// is told to come back.
	a, b := e.spec("a"), e.spec("b")
	for _, s := range []provider.PoolSpec{a, b} {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(time.Hour)
	a.Autoscaling, a.MinCount, a.MaxCount = true, 1, 4
	b.Autoscaling, b.MinCount, b.MaxCount = true, 2, 5
	pending := []provider.PoolSpec{a, b}
	for round := 0; len(pending) > 0; round++ {
		if round == 5 {
			t.Fatalf("%d updates never got through", len(pending))
		}
		var mu sync.Mutex
		var again []provider.PoolSpec
		var wg sync.WaitGroup
		for _, s := range pending {
			wg.Go(func() {
				if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
					if !provider.IsTransient(err) {
						t.Errorf("update %s: %v", s.Name, err)
					}
					mu.Lock()
					again = append(again, s)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		t.Logf("round %d: %d of %d updates to try again", round, len(again), len(pending))
		e.Clock.Advance(time.Hour)
		pending = again
	}
	aID, bID := e.list(t, a.ProviderName).Extra["id"], e.list(t, b.ProviderName).Extra["id"]
	e.wantNodes(t, handMade, "2:6:"+webID, "1:4:"+aID, "2:5:"+bID)

	// The autoscaler moves web; drift does not fight it.
	if _, err := e.Sim.SetDemand(clusterID, web.ProviderName, 9); err != nil {
		t.Fatal(err)
	}
	got := e.list(t, web.ProviderName)
	if got.Count != 6 || !got.Autoscaling || got.MinCount != 2 || got.MaxCount != 6 {
		t.Fatalf("web after the autoscaler: %+v", got.PoolSpec)
	}
	if d := provider.Compare(oke.Profile{}, web, got); len(d) != 0 {
		t.Fatalf("drift on an autoscaled pool: %v", d)
	}
	// New bounds below the count clamp it.
	web.MinCount, web.MaxCount = 1, 4
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, web); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if got := e.list(t, web.ProviderName); got.Count != 4 || got.MaxCount != 4 {
		t.Fatalf("web after its bounds went to 1-4: %+v", got.PoolSpec)
	}
	e.wantNodes(t, handMade, "1:4:"+webID, "1:4:"+aID, "2:5:"+bID)

	// a stops autoscaling at a fixed count; web is deleted.
	a.Autoscaling, a.Count = false, 2
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, a); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, web.ProviderName); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	e.wantNodes(t, handMade, "2:5:"+bID)
	if got := e.list(t, a.ProviderName); got.Autoscaling || got.Count != 2 {
		t.Fatalf("a after autoscaling off: %+v", got.PoolSpec)
	}
}

// wantNodes wants the add-on's nodes to hold exactly these entries (in
// any order: two writes race), and its other key kept.
func (e *emulated) wantNodes(t *testing.T, want ...string) {
	t.Helper()
	config, ok := e.Sim.AddonConfig(clusterID, okesim.AutoscalerAddon)
	have := strings.Split(config["nodes"], ",")
	slices.Sort(have)
	slices.Sort(want)
	if !ok || !slices.Equal(have, want) || config["numOfReplicas"] != "2" || len(config) != 2 {
		t.Fatalf("the autoscaler's configuration is %q (installed %v), want nodes %q and numOfReplicas 2", config, ok, strings.Join(want, ","))
	}
}

// TestAutoscalerFull: an entry that does not fit in the add-on's nodes
// value (255 characters) is a quota, nothing written.
func TestAutoscalerFull(t *testing.T) {
	e := newEmulated(t)
	full := strings.Repeat(handMade+",", 5)[:5*len(handMade)+4]
	if err := e.Sim.SetAddon(clusterID, okesim.AutoscalerAddon, map[string]string{"nodes": full, "numOfReplicas": "2"}); err != nil {
		t.Fatal(err)
	}
	s := e.spec("web")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.Autoscaling, s.MinCount, s.MaxCount = true, 1, 3
	_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if !provider.IsQuota(err) || !strings.Contains(err.Error(), "255 characters") {
		t.Fatalf("an entry past the add-on's room: %v, want a quota", err)
	}
	if config, _ := e.Sim.AddonConfig(clusterID, okesim.AutoscalerAddon); config["nodes"] != full {
		t.Fatalf("nodes changed to %q", config["nodes"])
	}
}
