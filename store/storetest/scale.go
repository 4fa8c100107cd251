package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/provider"
)

// The tests below guard what lets writes and lists cost the same at any
// size: totals from counters, creates that check names and the cluster in
// the database, updates of one pool applied in batches.

// testTotals checks that a list's total (kept by counters, not counted)
// matches the pools a full listing returns, for every filter, through
// creates, phase changes, deletes and a cluster's force delete.
func testTotals(t *testing.T, s *service.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	a := NewCluster(t, s, Alice, "a")
	b := NewCluster(t, s, Alice, "b")
	bobs := NewCluster(t, s, Bob, "bobs")
	var pools []*kpool.NodePool
	for i := range 9 {
		c := []*kpool.Cluster{a, b, bobs}[i%3]
		pools = append(pools, NewPool(t, s, c, fmt.Sprintf("p%d", i)))
	}
	check := func(step string) {
		t.Helper()
		for _, who := range []string{Alice, Bob, Admin} {
			for _, o := range []service.ListOptions{
				{}, {ClusterID: a.ID}, {ClusterID: b.ID}, {ClusterID: bobs.ID},
				{Phase: kpool.PhasePending}, {Phase: kpool.PhaseReady}, {Phase: kpool.PhaseDeleting},
				{Health: kpool.HealthHealthy}, {Health: kpool.HealthUnknown}, {ClusterID: a.ID, Phase: kpool.PhaseReady},
			} {
				want := 0
				for after := ""; ; {
					o.Limit, o.After = 2, after
					l := ok(s.NodePools(Ctx(who), o))(t)
					want += len(l.Items)
					if l.Next == "" {
						if l.Total != want {
							t.Fatalf("%s: %s lists %+v: total %d, but %d pools listed", step, who, o, l.Total, want)
						}
						break
					}
					after = l.Next
				}
			}
		}
		checkCounts(t, s, step, a, b, bobs)
	}
	check("after creates")
	ok(s.ReportNodePoolStatus(ctl, pools[0].ID, ready("gcp-nodepool-controller", 1)))(t)
	ok(s.ReportNodePoolStatus(ctl, pools[1].ID, ready("gcp-nodepool-controller", 1)))(t)
	ok(s.ReportNodePoolStatus(ctl, pools[3].ID, ready("gcp-nodepool-controller", 1)))(t)
	check("after reports")
	ok(s.UpdateNodePool(ctx, pools[0].ID, service.Update{Spec: count(5)}))(t)          // Ready -> Updating
	if _, _, err := s.DeleteNodePool(ctx, pools[3].ID, service.Delete{}); err != nil { // Ready -> Deleting
		t.Fatal(err)
	}
	if _, _, err := s.DeleteNodePool(ctx, pools[6].ID, service.Delete{}); err != nil { // gone at once
		t.Fatal(err)
	}
	check("after an update and deletes")
	if _, _, err := s.DeleteCluster(ctx, b.ID, service.Delete{Force: true}); err != nil {
		t.Fatal(err)
	}
	check("after a force delete")
	ok(s.ReportNodePoolStatus(ctl, pools[1].ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: kpool.ConditionDeleted, Status: kpool.ConditionTrue}}}))(t)
	check("after the cluster went")
}

// testCreateRacesClusterDelete checks that no create slips in beside a
// cluster's delete: afterwards no pool of the cluster is left undeleted.
func testCreateRacesClusterDelete(t *testing.T, s *service.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	c := NewCluster(t, s, Alice, "prod")
	held := NewPool(t, s, c, "held") // reported on: keeps the cluster Deleting
	ok(s.ReportNodePoolStatus(ctl, held.ID, ready("gcp-nodepool-controller", 1)))(t)
	errs := parallel(21, func(i int) error {
		if i == 10 {
			_, _, err := s.DeleteCluster(ctx, c.ID, service.Delete{Force: true})
			return err
		}
		_, err := s.CreateNodePool(ctx, service.NodePoolCreate{Name: fmt.Sprintf("racer-%d", i), ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
		if kpool.IsConflict(err) {
			return nil // refused: the cluster was being deleted
		}
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	for _, p := range ok(s.NodePools(ctx, service.ListOptions{ClusterID: c.ID}))(t).Items {
		if !p.Deleting() {
			t.Fatalf("pool %s was created beside the cluster's delete and is not being deleted", p.Name)
		}
	}
}

// sameNames gives every pool the same provider name candidates.
type sameNames struct {
	*provider.Registry
	names []string
}

func (p sameNames) ProviderNames(_ *kpool.Cluster, _ string, n int) ([]string, error) {
	if n > 0 {
		return p.names[:n], nil
	}
	return p.names, nil
}

// testProviderNamesUnique checks that concurrent creates whose names map to
// the same provider names get distinct ones, and that a create finds none
// free once all are taken.
func testProviderNamesUnique(t *testing.T, s *service.Service) {
	ps := service.New(s.Store, sameNames{Platforms, []string{"same", "same-1", "same-2", "same-3"}})
	ps.Now = s.Now
	c := NewCluster(t, ps, Alice, "prod")
	var mu sync.Mutex
	var got []string
	errs := parallel(3, func(i int) error {
		p, err := ps.CreateNodePool(Ctx(Alice), service.NodePoolCreate{Name: fmt.Sprintf("pool-%d", i), ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
		if err == nil {
			mu.Lock()
			got = append(got, p.ProviderName)
			mu.Unlock()
		}
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[same same-1 same-2]" {
		t.Fatalf("provider names %v, want the first three candidates once each", got)
	}
	ok(ps.CreateNodePool(Ctx(Alice), service.NodePoolCreate{Name: "pool-3", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}))(t)
	_, err := ps.CreateNodePool(Ctx(Alice), service.NodePoolCreate{Name: "pool-4", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeConflict)
}

// AWSCluster is a valid EKS cluster spec with a subnet in zone 1 only.
const AWSCluster = `{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"prod","nodeRoleArn":"arn:aws:iam::123456789012:role/nodes","subnets":{"us-west-2a":"subnet-0123456789abcdef0"}}}}`

// testCreateSeesClusterChanges checks that a create is checked against the
// cluster as it is, though the service keeps clusters to save reads: a
// change made through another process (another Service on the store) both
// allows what it allows and refuses what it refuses.
func testCreateSeesClusterChanges(t *testing.T, s *service.Service) {
	here, there := service.New(s.Store, Platforms), service.New(s.Store, Platforms)
	here.Now, there.Now = s.Now, s.Now
	ctx := Ctx(Alice)
	c := ok(here.CreateCluster(ctx, service.ClusterCreate{Name: "prod", Spec: json.RawMessage(AWSCluster)}))(t)
	pool := func(name, zone string) service.NodePoolCreate {
		return service.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: json.RawMessage(
			`{"platform":{"aws":{"instanceType":"m5.large"}},"nodeCount":1,"zones":["` + zone + `"]}`)}
	}
	ok(here.CreateNodePool(ctx, pool("one", "1")))(t) // here now holds the cluster
	_, err := here.CreateNodePool(ctx, pool("early", "2"))
	wantCode(t, err, kpool.CodeValidation) // no subnet in zone 2 yet

	ok(there.UpdateCluster(ctx, c.ID, service.Update{Spec: json.RawMessage(
		`{"platform":{"aws":{"subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`)}))(t)
	ok(here.CreateNodePool(ctx, pool("two", "2")))(t) // allowed by the change made there

	ok(there.UpdateCluster(ctx, c.ID, service.Update{Patch: true, Spec: json.RawMessage(
		`{"platform":{"aws":{"subnets":{"us-west-2a":null}}}}`)}))(t)
	_, err = here.CreateNodePool(ctx, pool("three", "1"))
	wantCode(t, err, kpool.CodeValidation) // refused since the change made there
}

// testUpdateBatchOutcomes sends updates of one pool at once, some invalid,
// some stale, some good, and checks that each gets its own answer as if they
// had run one after another: every good one a generation and event of its
// own, nothing of the others stored.
func testUpdateBatchOutcomes(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	before := ok(s.Store.LastEventID(context.Background()))(t)
	type answer struct {
		p   *kpool.NodePool
		err error
	}
	answers := make([]answer, 60)
	parallel(60, func(i int) error {
		u := service.Update{Spec: count(10 + i)}
		switch i % 4 {
		case 0:
			u.Spec = count(-1)
		case 1:
			u.ResourceVersion = "0123456789abcdef" // never a real one
		}
		got, err := s.UpdateNodePool(ctx, p.ID, u)
		answers[i] = answer{got, err}
		return nil
	})
	gens := map[int64]*kpool.NodePool{}
	for i, a := range answers {
		switch i % 4 {
		case 0:
			wantCode(t, a.err, kpool.CodeValidation)
		case 1:
			wantCode(t, a.err, kpool.CodeConflict)
		default:
			if a.err != nil {
				t.Fatalf("update %d: %v", i, a.err)
			}
			if a.p.Spec.Count() != 10+i || gens[a.p.Generation] != nil {
				t.Fatalf("update %d answered count %d at generation %d (seen before: %v)", i, a.p.Spec.Count(), a.p.Generation, gens[a.p.Generation] != nil)
			}
			gens[a.p.Generation] = a.p
		}
	}
	got := ok(s.NodePool(ctx, p.ID))(t)
	last := gens[got.Generation]
	if got.Generation != 31 || last == nil || last.ResourceVersion != got.ResourceVersion || last.Spec.Count() != got.Spec.Count() {
		t.Fatalf("stored generation %d (%s, count %d); want 31 and the answer of the last update", got.Generation, got.ResourceVersion, got.Spec.Count())
	}
	evs := ok(s.Store.Events(context.Background(), before, 1000))(t)
	if len(evs) != 30 {
		t.Fatalf("%d events for 30 changes", len(evs))
	}
}

// testDryRunMeetsConflicts checks that a dry run meets the conflicts the
// write would and stores nothing.
func testDryRunMeetsConflicts(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "prod")
	NewPool(t, s, c, "workers")
	before := ok(s.Store.LastEventID(context.Background()))(t)
	_, err := s.CreateNodePool(ctx, service.NodePoolCreate{Name: "workers", ClusterID: c.ID, Spec: json.RawMessage(GCPPool), DryRun: true})
	wantCode(t, err, kpool.CodeConflict)
	ok(s.CreateNodePool(ctx, service.NodePoolCreate{Name: "other", ClusterID: c.ID, Spec: json.RawMessage(GCPPool), DryRun: true}))(t)
	if l := ok(s.NodePools(ctx, service.ListOptions{ClusterID: c.ID}))(t); l.Total != 1 || len(l.Items) != 1 {
		t.Fatalf("a dry run stored a pool: total %d", l.Total)
	}
	if evs := ok(s.Store.Events(context.Background(), before, 10))(t); len(evs) != 0 {
		t.Fatalf("a dry run stored events: %v", evs)
	}
}

// testFeedSeesEveryEvent writes from many goroutines at once, so that
// events commit out of id order, while a feed reads along; every event must
// come out of the feed once.
func testFeedSeesEveryEvent(t *testing.T, s *service.Service) {
	ctx := context.Background()
	c := NewCluster(t, s, Alice, "prod")
	f := &audit.Feed{Store: s.Store}
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	read := func() {
		evs, err := f.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		for _, e := range evs {
			seen[e.ID]++
		}
	}
	done := make(chan struct{})
	var writeErrs []error
	go func() {
		defer close(done)
		writeErrs = parallel(40, func(i int) error {
			for j := range 5 {
				if _, err := s.CreateNodePool(Ctx(Alice), service.NodePoolCreate{Name: fmt.Sprintf("p-%d-%d", i, j), ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
			read()
		}
	}
	read() // everything has committed: the rest, late ones included
	for _, err := range writeErrs {
		if err != nil {
			t.Fatal(err)
		}
	}
	all := ok(s.Store.Events(ctx, 0, 10000))(t)
	n := 0
	for _, e := range all {
		if e.Type != kpool.EventNodePoolCreated {
			continue
		}
		n++
		if seen[e.ID] != 1 {
			t.Fatalf("event %d came out of the feed %d times", e.ID, seen[e.ID])
		}
	}
	if n != 200 {
		t.Fatalf("%d create events, want 200", n)
	}
}

// testConcurrentCreates creates pools at once, some under the same name, so
// that a store that commits concurrent creates together must fail each
// duplicate alone: one pool per name, a CONFLICT for every other, an event
// for each pool made.
func testConcurrentCreates(t *testing.T, s *service.Service) {
	c := NewCluster(t, s, Alice, "prod")
	before := ok(s.Store.LastEventID(context.Background()))(t)
	errs := parallel(60, func(i int) error {
		name := fmt.Sprintf("unique-%d", i)
		if i%3 == 0 {
			name = fmt.Sprintf("shared-%d", i%6) // two names, ten creates each
		}
		_, err := s.CreateNodePool(Ctx(Alice), service.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
		return err
	})
	made, conflicts := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			made++
		case kpool.IsConflict(err) && i%3 == 0:
			conflicts++
		default:
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if made != 42 || conflicts != 18 {
		t.Fatalf("%d made and %d conflicts; want 40 unique + 2 shared names, and 18 conflicts", made, conflicts)
	}
	if l := ok(s.NodePools(Ctx(Alice), service.ListOptions{ClusterID: c.ID}))(t); l.Total != 42 {
		t.Fatalf("total %d, want 42", l.Total)
	}
	if evs := ok(s.Store.Events(context.Background(), before, 1000))(t); len(evs) != 42 {
		t.Fatalf("%d events for 42 pools", len(evs))
	}
}
