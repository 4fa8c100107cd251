package driver_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	ekssim "github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks/driver"
	"github.com/kpool/kpool/provider/providertest"
)

// atRest is setup on an emulator that pages lists at EKS's default size
// (100), so that one ListNodegroups lists 10 node groups or 30.
var atRest = func() providertest.Setup[*ekssim.Server, *driver.Driver] {
	s := setup
	s.Emulator = func(o sim.Options) *ekssim.Server {
		emu := ekssim.New(ekssim.Options{Engine: o, Keys: map[string]string{accessKey: secretKey}})
		emu.AddCluster(ekssim.Cluster{Name: clusterName, Region: region, Account: account, Version: "1.31", Subnets: subnets})
		return emu
	}
	return s
}()

// settled starts the emulator with n node groups, settled and listed
// once (every one read), and returns their specs by provider name.
func settled(t *testing.T, n int) (*fixture, map[string]provider.PoolSpec) {
	t.Helper()
	e := atRest.Start(t)
	specs := map[string]provider.PoolSpec{}
	for i := range n {
		s := atRest.Spec(e, fmt.Sprintf("pool-%02d", i))
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
// answered for it by operation, and the node groups it described.
func listPass(t *testing.T, e *fixture) ([]provider.Pool, map[string]int, []string) {
	t.Helper()
	return e.ListPass(t, describeOp)
}

// describeOp is DescribeNodegroup as the emulator counts it.
const describeOp = "GET /clusters/{cluster}/node-groups/{nodegroup}"

// TestListAtRest: once settled, a list pass of 10 node groups costs the
// same calls as one of 30, pass after pass: the list, the templates to
// collect and provider.RefreshPerList describes.
func TestListAtRest(t *testing.T) {
	cost := map[int]map[string]int{}
	for _, n := range []int{10, 30} {
		e, _ := settled(t, n)
		for pass := range 4 {
			pools, c, _ := listPass(t, e)
			if len(pools) != n {
				t.Fatalf("%d node groups: listed %d", n, len(pools))
			}
			for _, p := range pools {
				if !provider.Settled(&p) {
					t.Fatalf("%d node groups, pass %d: %s not settled: %+v", n, pass, p.ProviderName, p)
				}
			}
			if pass > 0 && !maps.Equal(c, cost[n]) {
				t.Fatalf("%d node groups: pass %d cost %v, the one before %v", n, pass, c, cost[n])
			}
			cost[n] = c
		}
	}
	if !maps.Equal(cost[10], cost[30]) || cost[10][describeOp] != provider.RefreshPerList {
		t.Fatalf("a pass of 10 node groups cost %v, of 30 %v; want the same, with %d describes", cost[10], cost[30], provider.RefreshPerList)
	}
	t.Logf("a pass at rest costs %v", cost[30])
}

// TestListSeesDrift: a change made at EKS behind kpool's back to every
// settled node group (a label) is seen on each within
// ceil(n/RefreshPerList) passes, none reading more than RefreshPerList.
func TestListSeesDrift(t *testing.T) {
	const n = 11
	e, specs := settled(t, n)
	for pn := range specs {
		if err := e.Sim.Mutate(region, clusterName, pn, func(ng *ekssim.Nodegroup) { ng.Labels["drift"] = "yes" }); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	passes := (n + provider.RefreshPerList - 1) / provider.RefreshPerList
	for range passes {
		pools, _, described := listPass(t, e)
		if len(described) > provider.RefreshPerList {
			t.Fatalf("a pass at rest described %v", described)
		}
		for _, p := range pools {
			if p.Labels["drift"] == "yes" {
				seen[p.ProviderName] = true
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("after %d passes, the change is seen on %d node groups of %d", passes, len(seen), n)
	}
}

// TestListAfterWrite: a node group kpool writes to is read on the next
// pass, though it was read on the last; one made behind kpool's back is
// read at once.
func TestListAfterWrite(t *testing.T) {
	e, specs := settled(t, 10)
	_, _, described := listPass(t, e)
	pn := described[len(described)-1] // the last to have had its turn
	s := specs[pn]
	s.Labels["team"] = "ml"
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	pools, _, described := listPass(t, e)
	p, _ := provider.Find(pools, pn)
	if p == nil || p.State != provider.StateUpdating || p.Labels["team"] != "ml" || len(described) != provider.RefreshPerList+1 {
		t.Fatalf("the pass after an update described %v and lists %+v", described, p)
	}

	other := atRest.Driver(t, e.Client.Transport, providertest.FastRetry(), e.URL)
	late := atRest.Spec(e, "late")
	if _, err := other.NodePoolCreate(ctx, e.Cluster, late); err != nil {
		t.Fatal(err)
	}
	pools, _, _ = listPass(t, e)
	if p, ok := provider.Find(pools, late.ProviderName); !ok || p.State != provider.StateCreating {
		t.Fatalf("a node group made behind kpool's back lists as %+v", p)
	}
}
