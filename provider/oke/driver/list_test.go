package driver_test

import (
	"crypto/rsa"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// atRest is setup on an emulator that pages lists at OKE's default size
// (100), so that one ListNodePools lists 10 pools or 30.
var atRest = func() providertest.Setup[*okesim.Server, *driver.Driver] {
	s := setup
	s.Emulator = func(o sim.Options) *okesim.Server {
		emu := okesim.New(okesim.Options{Engine: o, Keys: map[string]*rsa.PublicKey{okesim.KeyID(tenancy, user, &key.PublicKey): &key.PublicKey}})
		emu.AddCluster(okesim.Cluster{ID: clusterID, Name: "prod", Region: region, CompartmentID: compartment, Version: "v1.31.1", ImageID: image, Subnets: subnets})
		return emu
	}
	return s
}()

// getOp is GetNodePool as the emulator counts it.
const getOp = "GET /20180222/nodePools/{id}"

// settled starts the emulator with n pools, settled and listed once
// (every one read), and returns their specs by provider name.
func settled(t *testing.T, n int) (*fixture, map[string]provider.PoolSpec) {
	t.Helper()
	e := atRest.Start(t)
	specs := map[string]provider.PoolSpec{}
	for i := range n {
		s := (&emulated{e}).spec(fmt.Sprintf("pool-%02d", i))
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
			t.Fatal(err)
		}
		specs[s.ProviderName] = s
	}
	e.Clock.Advance(time.Hour)
	listPass(t, e)
	return e, specs
}

// listPass lists once, and returns the pools, the calls the emulator
// answered for it by operation, and the OCIDs of the pools it read.
func listPass(t *testing.T, e *fixture) ([]provider.Pool, map[string]int, []string) {
	t.Helper()
	return e.ListPass(t, getOp)
}

// TestListAtRest: once settled, a list pass of 10 pools costs the same
// calls as one of 30, pass after pass: the list, the autoscaler add-on and
// provider.RefreshPerList reads; and every pool is read within
// ceil(n/RefreshPerList) passes, which finds what a summary does not show.
func TestListAtRest(t *testing.T) {
	cost := map[int]map[string]int{}
	for _, n := range []int{10, 30} {
		e, _ := settled(t, n)
		read := map[string]bool{}
		passes := (n + provider.RefreshPerList - 1) / provider.RefreshPerList
		for pass := range passes {
			pools, c, got := listPass(t, e)
			if len(pools) != n {
				t.Fatalf("%d pools: listed %d", n, len(pools))
			}
			for _, p := range pools {
				if !provider.Settled(&p) {
					t.Fatalf("%d pools, pass %d: %s not settled: %+v", n, pass, p.ProviderName, p)
				}
			}
			if pass > 0 && !maps.Equal(c, cost[n]) {
				t.Fatalf("%d pools: pass %d cost %v, the one before %v", n, pass, c, cost[n])
			}
			cost[n] = c
			for _, id := range got {
				read[id] = true
			}
		}
		if len(read) != n {
			t.Fatalf("%d pools: %d passes read %d of them", n, passes, len(read))
		}
	}
	if !maps.Equal(cost[10], cost[30]) || cost[10][getOp] != provider.RefreshPerList {
		t.Fatalf("a pass of 10 pools cost %v, of 30 %v; want the same, with %d reads", cost[10], cost[30], provider.RefreshPerList)
	}
	t.Logf("a pass at rest costs %v", cost[30])
}

// TestListSeesDrift: a change made at OKE behind kpool's back that the
// pools' summaries show (their labels) is seen on every pool on the next
// pass, which reads those pools; the pass after is back to
// RefreshPerList reads.
func TestListSeesDrift(t *testing.T) {
	const n = 10
	e, specs := settled(t, n)
	for pn := range specs {
		if err := e.Sim.Mutate(clusterID, pn, func(np *ce.NodePool) {
			np.InitialNodeLabels = append(np.InitialNodeLabels, ce.KeyValue{Key: ptr.To("drift"), Value: ptr.To("yes")})
		}); err != nil {
			t.Fatal(err)
		}
	}
	pools, _, read := listPass(t, e)
	for _, p := range pools {
		if p.Labels["drift"] != "yes" {
			t.Fatalf("the change is not seen on %s: %v", p.ProviderName, p.Labels)
		}
	}
	if len(read) != n {
		t.Fatalf("the pass after a change of every summary read %d pools", len(read))
	}
	if _, _, read = listPass(t, e); len(read) != provider.RefreshPerList {
		t.Fatalf("the pass after read %d pools", len(read))
	}
}

// TestListAfterWrite: a pool kpool writes to is read on the next pass,
// though it was read on the last; one made behind kpool's back is read at
// once.
func TestListAfterWrite(t *testing.T) {
	e, specs := settled(t, 10)
	_, _, read := listPass(t, e)
	var s provider.PoolSpec
	for pn, spec := range specs {
		if st, _ := e.Sim.PoolOf(clusterID, pn); *st.Id == read[len(read)-1] { // the last to have had its turn
			s = spec
		}
	}
	s.Labels["team"] = "ml"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	pools, _, read := listPass(t, e)
	p, _ := provider.Find(pools, s.ProviderName)
	if p == nil || p.State != provider.StateUpdating || p.Labels["team"] != "ml" || len(read) != provider.RefreshPerList+1 {
		t.Fatalf("the pass after an update read %v and lists %+v", read, p)
	}

	e.Sim.AddPool(clusterID, "late", "VM.Standard.E4.Flex", 1, 16, 2)
	pools, _, read = listPass(t, e)
	late, _ := e.Sim.PoolOf(clusterID, "late")
	// Read: the new pool, the one still updating, and the settled ones'
	// turn.
	if _, ok := provider.Find(pools, "late"); !ok || len(read) != provider.RefreshPerList+2 || !slices.Contains(read, *late.Id) {
		t.Fatalf("a pool made behind kpool's back: listed %v, the pass read %v", ok, read)
	}
}
