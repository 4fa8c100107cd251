// Package storetest is the conformance suite every kpool.Store must pass.
// Each store's tests call Run with a function that opens an empty store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
)

// Platforms are every platform kpool knows, as the services of the suite
// check pools against them (as kpool serve does).
var Platforms = catalog.Registry()

// Opener returns a new, empty, migrated store; the store is closed by the
// test's cleanup.
type Opener func(t testing.TB) kpool.Store

// Users of the suite.
const (
	Alice      = "alice@example.com"
	Bob        = "bob@example.com"
	Admin      = "admin@example.com"
	Controller = "gcp-controller@example.com"
)

// Ctx returns a context carrying the identity of email.
func Ctx(email string) context.Context {
	id := &kpool.Identity{Email: email, Admin: email == Admin, Controller: email == Controller}
	return kpool.WithIdentity(context.Background(), id)
}

// GCPCluster is a valid GKE cluster spec.
const GCPCluster = `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}}}`

// GCPPool is a valid pool spec for GCPCluster.
const GCPPool = `{"platform":{"type":"gcp","gcp":{"machineType":"n1-standard-4","diskSize":100,"zones":["us-central1-a"]}},"nodeCount":3}`

// Run runs the whole suite against the stores open returns.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, *kpool.Service)
	}{
		{"ClusterLifecycle", testClusterLifecycle},
		{"UniqueNames", testUniqueNames},
		{"ClientChosenID", testClientChosenID},
		{"GenerationAndResourceVersion", testGeneration},
		{"StaleResourceVersion", testStaleResourceVersion},
		{"ConcurrentSameResourceVersion", testConcurrentSameRV},
		{"ConcurrentWithoutResourceVersion", testConcurrentNoRV},
		{"RollbackLeavesNothing", testRollback},
		{"EventsCommitWithWrites", testEvents},
		{"AuditTrail", testAuditTrail},
		{"ListOrderPagingFilters", testList},
		{"Visibility", testVisibility},
		{"StatusReports", testStatusReports},
		{"ClusterStatus", testClusterStatus},
		{"CloudClusterOnce", testCloudClusterOnce},
		{"ObservedPoolsRefuseWrites", testObservedPoolsRefuseWrites},
		{"ReportsScrubbed", testReportsScrubbed},
		{"TwoPhaseDelete", testTwoPhaseDelete},
		{"ClusterForceDelete", testClusterForceDelete},
		{"TimesRoundTrip", testTimes},
		{"Leases", testLeases},
		{"SubscribeWakesOnCommit", testSubscribe},
		{"Totals", testTotals},
		{"CreateRacesClusterDelete", testCreateRacesClusterDelete},
		{"ProviderNamesUnique", testProviderNamesUnique},
		{"CreateSeesClusterChanges", testCreateSeesClusterChanges},
		{"UpdateBatchOutcomes", testUpdateBatchOutcomes},
		{"DryRunMeetsConflicts", testDryRunMeetsConflicts},
		{"FeedSeesEveryEvent", testFeedSeesEveryEvent},
		{"ConcurrentCreates", testConcurrentCreates},
		{"EventRetention", testEventRetention},
		{"Tokens", testTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, kpool.NewService(open(t), Platforms))
		})
	}
}

// ok returns v, or fails the test that it is applied to when err is set:
// ok(s.Cluster(ctx, id))(t).
func ok[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := kpool.ErrorCode(err); got != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}

// NewCluster registers a GCP cluster for owner: a cloud cluster of the
// owner's and the name's own, as a cloud cluster is registered once.
func NewCluster(t testing.TB, s *kpool.Service, owner, name string) *kpool.Cluster {
	t.Helper()
	return ok(s.CreateCluster(Ctx(owner), kpool.ClusterCreate{Name: name, Spec: ClusterSpec(owner, name)}))(t)
}

// ClusterSpec is GCPCluster for a cloud cluster of owner's and name's own.
func ClusterSpec(owner, name string) json.RawMessage {
	unique := fmt.Sprintf(`"clusterName":"c%08x"`, crc32.ChecksumIEEE([]byte(owner+" "+name)))
	return json.RawMessage(strings.Replace(GCPCluster, `"clusterName":"prod"`, unique, 1))
}

// NewPool creates a GCP pool in cluster c as c's owner.
func NewPool(t testing.TB, s *kpool.Service, c *kpool.Cluster, name string) *kpool.NodePool {
	t.Helper()
	return ok(s.CreateNodePool(Ctx(c.CreatedBy), kpool.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}))(t)
}

func count(n int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"nodeCount":%d}`, n)) }

func testClusterLifecycle(t *testing.T, s *kpool.Service) {
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "prod")
	if c.Generation != 1 || c.ResourceVersion == "" || c.CreatedBy != Alice || c.Status.Phase != kpool.ClusterActive {
		t.Fatalf("created cluster: %+v", c)
	}
	got := ok(s.Cluster(ctx, c.ID))(t)
	if got.Name != "prod" || got.Spec.Platform.GCP.ProjectID != "acme-prod" || !got.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("read back: %+v", got)
	}
	// An admin sets the endpoint: users may set only those the operator allows.
	up := ok(s.UpdateCluster(Ctx(Admin), c.ID, kpool.Update{Spec: json.RawMessage(`{"endpoint":"http://127.0.0.1:9999"}`)}))(t)
	if up.Generation != 2 || up.ResourceVersion == c.ResourceVersion || up.Spec.Endpoint != "http://127.0.0.1:9999" || up.Spec.Platform.GCP == nil {
		t.Fatalf("updated cluster: %+v", up)
	}
	_, err := s.UpdateCluster(ctx, c.ID, kpool.Update{Spec: json.RawMessage(`{"platform":{"gcp":{"clusterName":"other"}}}`)})
	wantCode(t, err, kpool.CodeValidation)
	_, gone, err := s.DeleteCluster(ctx, c.ID, false, "")
	if err != nil || !gone {
		t.Fatalf("delete: gone=%v err=%v", gone, err)
	}
	_, err = s.Cluster(ctx, c.ID)
	wantCode(t, err, kpool.CodeNotFound)
}

func testUniqueNames(t *testing.T, s *kpool.Service) {
	c := NewCluster(t, s, Alice, "prod")
	_, err := s.CreateCluster(Ctx(Alice), kpool.ClusterCreate{Name: "prod", Spec: json.RawMessage(GCPCluster)})
	wantCode(t, err, kpool.CodeConflict)
	NewCluster(t, s, Bob, "prod") // names are per owner

	p := NewPool(t, s, c, "workers")
	_, err = s.CreateNodePool(Ctx(Alice), kpool.NodePoolCreate{Name: "workers", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeConflict)
	other := NewCluster(t, s, Alice, "staging")
	NewPool(t, s, other, "workers") // names are per cluster

	_, gone, err := s.DeleteNodePool(Ctx(Alice), p.ID, "")
	if err != nil || !gone {
		t.Fatalf("delete: gone=%v err=%v", gone, err)
	}
	again := NewPool(t, s, c, "workers") // a deleted name can be used again
	if again.ID == p.ID || again.Generation != 1 {
		t.Fatalf("re-created pool: %+v", again)
	}
}

func testClientChosenID(t *testing.T, s *kpool.Service) {
	const id = "550e8400-e29b-41d4-a716-446655440000"
	c := ok(s.CreateCluster(Ctx(Alice), kpool.ClusterCreate{ID: id, Name: "prod", Spec: json.RawMessage(GCPCluster)}))(t)
	if c.ID != id {
		t.Fatalf("id %s, want %s", c.ID, id)
	}
	_, err := s.CreateCluster(Ctx(Alice), kpool.ClusterCreate{ID: id, Name: "other", Spec: json.RawMessage(GCPCluster)})
	wantCode(t, err, kpool.CodeConflict)
	_, err = s.CreateCluster(Ctx(Alice), kpool.ClusterCreate{ID: "not-a-uuid", Name: "third", Spec: json.RawMessage(GCPCluster)})
	wantCode(t, err, kpool.CodeValidation)
}

func testGeneration(t *testing.T, s *kpool.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	if p.Generation != 1 {
		t.Fatalf("generation %d, want 1", p.Generation)
	}
	up := ok(s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(5)}))(t)
	if up.Generation != 2 || up.ResourceVersion == p.ResourceVersion || up.Spec.Count() != 5 {
		t.Fatalf("after change: %+v", up)
	}
	// The zones and disk were not in the update and are kept.
	if up.Spec.Platform.GCP.DiskSize != 100 || len(up.Spec.Platform.GCP.Zones) != 1 {
		t.Fatalf("update lost fields: %+v", up.Spec.Platform.GCP)
	}
	noop := ok(s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(5)}))(t)
	if noop.Generation != 2 || noop.ResourceVersion != up.ResourceVersion {
		t.Fatalf("no-op changed generation or resource_version: %+v", noop)
	}
	// A status report is a write (new resource_version) but not a spec change.
	doc := ok(s.ReportNodePoolStatus(Ctx(Controller), p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 2}))(t)
	after := ok(s.NodePool(ctx, p.ID))(t)
	if doc.Generation != 2 || after.Generation != 2 || after.ResourceVersion == up.ResourceVersion {
		t.Fatalf("status report: generation %d, resource_version %s", after.Generation, after.ResourceVersion)
	}
	// Moving autoscaling bounds without a count keeps the count inside them.
	bounded := ok(s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: json.RawMessage(`{"autoscaling":{"enabled":true,"minNodes":6,"maxNodes":9}}`)}))(t)
	if bounded.Spec.Count() != 6 || bounded.Generation != 3 {
		t.Fatalf("bounds without a count: count %d generation %d", bounded.Spec.Count(), bounded.Generation)
	}
	_, err := s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: json.RawMessage(`{"nodeCount":10}`)})
	wantCode(t, err, kpool.CodeValidation) // an explicit count must fit
	// Merge patch: null clears.
	patched := ok(s.UpdateNodePool(ctx, p.ID, kpool.Update{Patch: true, Spec: json.RawMessage(`{"platform":{"gcp":{"zones":null}}}`)}))(t)
	if patched.Generation != 4 || patched.Spec.Platform.GCP.Zones != nil {
		t.Fatalf("merge patch: %+v", patched)
	}
}

func testStaleResourceVersion(t *testing.T, s *kpool.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	up := ok(s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(4), ResourceVersion: p.ResourceVersion}))(t)
	_, err := s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(7), ResourceVersion: p.ResourceVersion})
	wantCode(t, err, kpool.CodeConflict)
	got := ok(s.NodePool(ctx, p.ID))(t)
	if got.ResourceVersion != up.ResourceVersion || got.Spec.Count() != 4 || got.Generation != 2 {
		t.Fatalf("a refused write changed the pool: %+v", got)
	}
	_, _, err = s.DeleteNodePool(ctx, p.ID, "stale")
	wantCode(t, err, kpool.CodeConflict)
	ok(s.NodePool(ctx, p.ID))(t)
}

func testConcurrentSameRV(t *testing.T, s *kpool.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	errs := parallel(50, func(i int) error {
		_, err := s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(10 + i), ResourceVersion: p.ResourceVersion})
		return err
	})
	succeeded, conflicts := 0, 0
	for _, err := range errs {
		switch kpool.ErrorCode(err) {
		case "":
			succeeded++
		case kpool.CodeConflict:
			conflicts++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if succeeded != 1 || conflicts != 49 {
		t.Fatalf("%d succeeded and %d conflicted; want 1 and 49", succeeded, conflicts)
	}
	if got := ok(s.NodePool(ctx, p.ID))(t); got.Generation != 2 {
		t.Fatalf("generation %d, want 2", got.Generation)
	}
}

func testConcurrentNoRV(t *testing.T, s *kpool.Service) {
	ctx := Ctx(Alice)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	for _, err := range parallel(50, func(i int) error {
		_, err := s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(100 + i)})
		return err
	}) {
		if err != nil {
			t.Fatalf("update: %v", err)
		}
	}
	if got := ok(s.NodePool(ctx, p.ID))(t); got.Generation != 51 {
		t.Fatalf("generation %d after 50 changes, want 51", got.Generation)
	}
	evs := ok(s.Store.Events(context.Background(), 0, 1000))(t)
	gens := map[int64]bool{}
	for _, e := range evs {
		if e.Type == kpool.EventNodePoolUpdated {
			if gens[e.Generation] {
				t.Fatalf("two updates share generation %d", e.Generation)
			}
			gens[e.Generation] = true
		}
	}
	if len(gens) != 50 {
		t.Fatalf("%d update events, want 50", len(gens))
	}
}

// parallel runs fn(0..n-1) at once and returns their errors.
func parallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

func testRollback(t *testing.T, s *kpool.Service) {
	c := NewCluster(t, s, Alice, "prod")
	before := ok(s.Store.Events(context.Background(), 0, 1000))(t)
	boom := errors.New("boom")
	err := s.Store.Write(context.Background(), func(tx kpool.Tx) error {
		now := time.Now().UTC().Truncate(time.Microsecond)
		p := &kpool.NodePool{ID: "00000000-0000-4000-8000-000000000001", Name: "half", ClusterID: c.ID, CreatedBy: Alice,
			Generation: 1, CreatedAt: now, UpdatedAt: now, Status: kpool.NodePoolStatus{Phase: kpool.PhasePending, Health: kpool.HealthUnknown}}
		if err := tx.CreateNodePool(p, c.Generation); err != nil {
			return err
		}
		if err := tx.AddEvent(&kpool.Event{Type: kpool.EventNodePoolCreated, ObjectID: p.ID, ClusterID: c.ID, Generation: 1, Actor: Alice, CreatedAt: now}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write returned %v, want the function's error", err)
	}
	_, err = s.Store.NodePool(context.Background(), "00000000-0000-4000-8000-000000000001")
	wantCode(t, err, kpool.CodeNotFound)
	after := ok(s.Store.Events(context.Background(), 0, 1000))(t)
	if len(after) != len(before) {
		t.Fatalf("a rolled-back write left %d events", len(after)-len(before))
	}
}

func testEvents(t *testing.T, s *kpool.Service) {
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "prod")
	p := NewPool(t, s, c, "workers")
	ok(s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(4)}))(t)
	if _, _, err := s.DeleteNodePool(ctx, p.ID, ""); err != nil {
		t.Fatal(err)
	}
	evs := ok(s.Store.Events(context.Background(), 0, 100))(t)
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s/%d/%s", e.Type, e.Generation, e.Actor))
		if e.CreatedAt.IsZero() || e.ClusterID != c.ID {
			t.Errorf("event %+v lacks time or cluster", e)
		}
	}
	want := []string{"cluster.created/1/" + Alice, "nodepool.created/1/" + Alice, "nodepool.updated/2/" + Alice, "nodepool.deleted/2/" + Alice}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].ID <= evs[i-1].ID {
			t.Fatalf("event ids not increasing: %v", evs)
		}
	}
	tail := ok(s.Store.Events(context.Background(), evs[1].ID, 1))(t)
	if len(tail) != 1 || tail[0].ID != evs[2].ID {
		t.Fatalf("Events(after, 1) = %v", tail)
	}
}

// testAuditTrail: every field of an event round-trips, each filter
// selects what it says, newest first; updates of one pool written in one
// batch keep each its own request id and generations.
func testAuditTrail(t *testing.T, s *kpool.Service) {
	bg := context.Background()
	in := func(owner, req string) context.Context { return kpool.WithRequestID(Ctx(owner), req) }
	c := ok(s.CreateCluster(in(Alice, "r-cluster"), kpool.ClusterCreate{Name: "prod", Spec: json.RawMessage(GCPCluster)}))(t)
	p := ok(s.CreateNodePool(in(Alice, "r-pool"), kpool.NodePoolCreate{Name: "web", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}))(t)
	theirs := NewCluster(t, s, Bob, "theirs")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok(s.UpdateNodePool(in(Alice, fmt.Sprintf("r-scale-%d", i)), p.ID, kpool.Update{Spec: count(i + 4), Patch: true}))(t) // never 3, the count it has: each is a change
		}()
	}
	wg.Wait()

	all := ok(s.Store.AuditEvents(bg, kpool.EventFilter{ClusterID: c.ID, Limit: 100}))(t)
	if len(all) != 10 {
		t.Fatalf("%d events of the cluster, want 10: %+v", len(all), all)
	}
	first := all[len(all)-1]
	if first.Type != kpool.EventClusterCreated || first.RequestID != "r-cluster" || first.Owner != Alice || first.Actor != Alice ||
		first.GenerationBefore != 0 || first.Generation != 1 || first.ObjectID != c.ID || first.CreatedAt.IsZero() {
		t.Errorf("cluster create recorded as %+v", first)
	}
	// Eight updates: generations 1→2 … 8→9, in id order, each with its
	// own request id once.
	reqs := map[string]bool{}
	gen := int64(1)
	for i := len(all) - 3; i >= 0; i-- {
		e := all[i]
		if e.Type != kpool.EventNodePoolUpdated || e.GenerationBefore != gen || e.Generation != gen+1 || e.Detail != "spec.nodeCount" {
			t.Errorf("update %d recorded as %+v, want generation %d→%d", len(all)-3-i, e, gen, gen+1)
		}
		gen++
		if reqs[e.RequestID] || !strings.HasPrefix(e.RequestID, "r-scale-") {
			t.Errorf("request id %q repeated or not the update's own", e.RequestID)
		}
		reqs[e.RequestID] = true
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Fatalf("not newest first: %d after %d", all[i].ID, all[i-1].ID)
		}
	}

	for _, tc := range []struct {
		name string
		f    kpool.EventFilter
		want int
	}{
		{"owner", kpool.EventFilter{Owner: strings.ToUpper(Bob)}, 1},
		{"object", kpool.EventFilter{ObjectID: p.ID}, 9},
		{"kind", kpool.EventFilter{ClusterID: c.ID, Type: "cluster."}, 1},
		{"type", kpool.EventFilter{Type: kpool.EventNodePoolCreated, ClusterID: c.ID}, 1},
		{"actor", kpool.EventFilter{Actor: Bob}, 1},
		{"other owner's cluster", kpool.EventFilter{Owner: Alice, ClusterID: theirs.ID}, 0},
		{"limit", kpool.EventFilter{ClusterID: c.ID, Limit: 3}, 3},
		{"before", kpool.EventFilter{ClusterID: c.ID, Before: all[1].ID}, 8},
	} {
		if tc.f.Limit == 0 {
			tc.f.Limit = 100
		}
		got := ok(s.Store.AuditEvents(bg, tc.f))(t)
		if len(got) != tc.want {
			t.Errorf("%s: %d events, want %d", tc.name, len(got), tc.want)
		}
	}
}

func testList(t *testing.T, s *kpool.Service) {
	// Every pool gets the same creation time, so that order rests on the id.
	fixed := time.Date(2026, 11, 1, 12, 0, 0, 123456000, time.UTC)
	s.Now = func() time.Time { return fixed }
	ctx := Ctx(Alice)
	a := NewCluster(t, s, Alice, "a")
	b := NewCluster(t, s, Alice, "b")
	var ids []string
	for i := range 7 {
		c := a
		if i%2 == 1 {
			c = b
		}
		ids = append(ids, NewPool(t, s, c, fmt.Sprintf("pool-%d", i)).ID)
	}
	sort.Strings(ids)

	all := ok(s.NodePools(ctx, kpool.ListOptions{}))(t)
	if all.Total != 7 || len(all.Items) != 7 || all.Next != "" || all.Limit != kpool.DefaultLimit {
		t.Fatalf("list: total %d, %d items, next %q", all.Total, len(all.Items), all.Next)
	}
	for i, p := range all.Items {
		if p.ID != ids[i] {
			t.Fatalf("order: item %d is %s, want %s", i, p.ID, ids[i])
		}
	}
	// Offset paging and cursor paging both visit every pool once, in order.
	var byOffset, byCursor []string
	for off := 0; ; off += 3 {
		pg := ok(s.NodePools(ctx, kpool.ListOptions{Limit: 3, Offset: off}))(t)
		for _, p := range pg.Items {
			byOffset = append(byOffset, p.ID)
		}
		if pg.Next == "" {
			break
		}
	}
	for after := ""; ; {
		pg := ok(s.NodePools(ctx, kpool.ListOptions{Limit: 3, After: after}))(t)
		for _, p := range pg.Items {
			byCursor = append(byCursor, p.ID)
		}
		if pg.Next == "" {
			break
		}
		after = pg.Next
	}
	if fmt.Sprint(byOffset) != fmt.Sprint(ids) || fmt.Sprint(byCursor) != fmt.Sprint(ids) {
		t.Fatalf("paging:\n offset %v\n cursor %v\n want   %v", byOffset, byCursor, ids)
	}
	inA := ok(s.NodePools(ctx, kpool.ListOptions{ClusterID: a.ID}))(t)
	if inA.Total != 4 || len(inA.Items) != 4 {
		t.Fatalf("cluster filter: total %d", inA.Total)
	}
	pending := ok(s.NodePools(ctx, kpool.ListOptions{Phase: kpool.PhasePending, Health: kpool.HealthUnknown}))(t)
	if pending.Total != 7 {
		t.Fatalf("phase filter: total %d", pending.Total)
	}
	// Make one pool Ready and filter on it.
	p0 := ids[0]
	ok(s.ReportNodePoolStatus(Ctx(Controller), p0, ready("gcp-nodepool-controller", 1)))(t)
	readyList := ok(s.NodePools(ctx, kpool.ListOptions{Phase: kpool.PhaseReady}))(t)
	healthy := ok(s.NodePools(ctx, kpool.ListOptions{Health: kpool.HealthHealthy}))(t)
	if readyList.Total != 1 || readyList.Items[0].ID != p0 || healthy.Total != 1 {
		t.Fatalf("Ready filter: %d, healthy: %d", readyList.Total, healthy.Total)
	}
	clusters := ok(s.Clusters(ctx, kpool.ListOptions{Limit: 1}))(t)
	if clusters.Total != 2 || len(clusters.Items) != 1 || clusters.Next == "" {
		t.Fatalf("clusters page: %+v", clusters)
	}
	// By name: what the CLI resolves names with.
	named := ok(s.NodePools(ctx, kpool.ListOptions{Name: "pool-3"}))(t)
	if named.Total != 1 || len(named.Items) != 1 || named.Items[0].Name != "pool-3" {
		t.Fatalf("name filter: %+v", named)
	}
	if none := ok(s.NodePools(ctx, kpool.ListOptions{Name: "pool-3", ClusterID: a.ID}))(t); none.Total != 0 || len(none.Items) != 0 {
		t.Fatalf("name in another cluster: %+v", none)
	}
	if byName := ok(s.Clusters(ctx, kpool.ListOptions{Name: "b"}))(t); byName.Total != 1 || byName.Items[0].ID != b.ID {
		t.Fatalf("cluster by name: %+v", byName)
	}
	if other := ok(s.Clusters(Ctx(Bob), kpool.ListOptions{Name: "b"}))(t); other.Total != 0 {
		t.Fatalf("another owner's cluster by name: %+v", other)
	}
	_, err := s.NodePools(ctx, kpool.ListOptions{Limit: 101})
	wantCode(t, err, kpool.CodeValidation)
	_, err = s.NodePools(ctx, kpool.ListOptions{After: "garbage!"})
	wantCode(t, err, kpool.CodeValidation)
}

func ready(controller string, gen int64) kpool.ControllerStatus {
	return kpool.ControllerStatus{ControllerName: controller, ObservedGeneration: gen, Conditions: []kpool.Condition{
		{Type: kpool.ConditionReady, Status: kpool.ConditionTrue, Reason: "NodesReady", Message: "all nodes ready"}}}
}

func testVisibility(t *testing.T, s *kpool.Service) {
	c := NewCluster(t, s, Alice, "prod")
	p := NewPool(t, s, c, "workers")
	NewPool(t, s, NewCluster(t, s, Bob, "bobs"), "bobs-pool")

	bob := Ctx(Bob)
	_, err := s.Cluster(bob, c.ID)
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.NodePool(bob, p.ID)
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.UpdateNodePool(bob, p.ID, kpool.Update{Spec: count(9)})
	wantCode(t, err, kpool.CodeNotFound)
	_, _, err = s.DeleteNodePool(bob, p.ID, "")
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.CreateNodePool(bob, kpool.NodePoolCreate{Name: "x", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.NodePoolStatus(bob, p.ID)
	wantCode(t, err, kpool.CodeNotFound)
	if l := ok(s.NodePools(bob, kpool.ListOptions{ClusterID: c.ID}))(t); l.Total != 0 {
		t.Fatalf("bob sees %d of alice's pools", l.Total)
	}
	if l := ok(s.Clusters(bob, kpool.ListOptions{}))(t); l.Total != 1 {
		t.Fatalf("bob sees %d clusters, want his 1", l.Total)
	}
	// E-mail addresses compare without case.
	ok(s.NodePool(Ctx("ALICE@Example.COM"), p.ID))(t)
	// Admins see and change everything; controllers see everything and change nothing.
	if l := ok(s.NodePools(Ctx(Admin), kpool.ListOptions{}))(t); l.Total != 2 {
		t.Fatalf("admin sees %d pools, want 2", l.Total)
	}
	ok(s.UpdateNodePool(Ctx(Admin), p.ID, kpool.Update{Spec: count(2)}))(t)
	if l := ok(s.NodePools(Ctx(Controller), kpool.ListOptions{}))(t); l.Total != 2 {
		t.Fatalf("controller sees %d pools, want 2", l.Total)
	}
	_, err = s.UpdateNodePool(Ctx(Controller), p.ID, kpool.Update{Spec: count(3)})
	wantCode(t, err, kpool.CodeForbidden)
	// Only controllers write status.
	_, err = s.ReportNodePoolStatus(Ctx(Alice), p.ID, ready("x", 1))
	wantCode(t, err, kpool.CodeForbidden)
	_, err = s.ReportNodePoolStatus(Ctx(Admin), p.ID, ready("x", 1))
	wantCode(t, err, kpool.CodeForbidden)
}

func testStatusReports(t *testing.T, s *kpool.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	if p.Status.Phase != kpool.PhasePending {
		t.Fatalf("new pool phase %s, want Pending", p.Status.Phase)
	}
	_, err := s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 2))
	wantCode(t, err, kpool.CodeValidation) // ahead of generation 1

	doc := ok(s.ReportNodePoolStatus(ctl, p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: "Ready", Status: "False", Reason: "Creating"}, {Type: "Progressing", Status: "True"}},
		Metadata:   json.RawMessage(`{"active_nodes":0,"desired_nodes":3}`)}))(t)
	if doc.Status.Phase != kpool.PhaseProvisioning {
		t.Fatalf("phase %s, want Provisioning", doc.Status.Phase)
	}
	doc = ok(s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 1)))(t)
	if doc.Status.Phase != kpool.PhaseReady || doc.Status.ObservedGeneration != 1 || doc.Status.Health != kpool.HealthHealthy {
		t.Fatalf("after ready report: %+v", doc.Status)
	}
	// A spec change makes the pool not Ready until the controller catches up.
	up := ok(s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(6)}))(t)
	if up.Status.Phase != kpool.PhaseUpdating || up.Status.ObservedGeneration != 1 {
		t.Fatalf("after spec change: %+v", up.Status)
	}
	ok(s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 2)))(t)
	// A stale report is ignored and says so.
	doc = ok(s.ReportNodePoolStatus(ctl, p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1}))(t)
	if doc.Ignored == "" || doc.Status.Phase != kpool.PhaseReady || doc.Status.ObservedGeneration != 2 {
		t.Fatalf("stale report: %+v", doc)
	}
	st := ok(s.NodePoolStatus(ctx, p.ID))(t)
	if len(st.ControllerStatus) != 1 || string(st.ControllerStatus[0].Metadata) != "{}" || st.ControllerStatus[0].ObservedGeneration != 2 {
		t.Fatalf("reports: %+v", st.ControllerStatus)
	}
	// A second controller still at an older generation holds the aggregate back.
	ok(s.ReportNodePoolStatus(ctl, p.ID, ready("dns-controller", 1)))(t)
	st = ok(s.NodePoolStatus(ctx, p.ID))(t)
	if st.Status.Phase != kpool.PhaseUpdating || st.Status.ObservedGeneration != 1 || len(st.ControllerStatus) != 2 {
		t.Fatalf("two controllers: %+v", st.Status)
	}
}

func testTwoPhaseDelete(t *testing.T, s *kpool.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	c := NewCluster(t, s, Alice, "prod")
	p := NewPool(t, s, c, "workers")
	ok(s.ReportNodePoolStatus(ctl, p.ID, ready("gcp-nodepool-controller", 1)))(t)
	out, gone, err := s.DeleteNodePool(ctx, p.ID, "")
	if err != nil || gone || out.Status.Phase != kpool.PhaseDeleting || out.DeletionTimestamp == nil {
		t.Fatalf("delete of a reported pool: gone=%v err=%v status=%+v", gone, err, out)
	}
	// Still listed, name still taken, spec frozen.
	if l := ok(s.NodePools(ctx, kpool.ListOptions{Phase: kpool.PhaseDeleting}))(t); l.Total != 1 {
		t.Fatalf("deleting pools listed: %d", l.Total)
	}
	_, err = s.CreateNodePool(ctx, kpool.NodePoolCreate{Name: "workers", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeConflict)
	_, err = s.UpdateNodePool(ctx, p.ID, kpool.Update{Spec: count(1)})
	wantCode(t, err, kpool.CodeConflict)
	// Deleting again is accepted and changes nothing.
	if _, gone, err := s.DeleteNodePool(ctx, p.ID, ""); err != nil || gone {
		t.Fatalf("second delete: gone=%v err=%v", gone, err)
	}
	doc := ok(s.ReportNodePoolStatus(ctl, p.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: kpool.ConditionDeleted, Status: kpool.ConditionTrue, Reason: "DeletedAtProvider"}}}))(t)
	if !doc.Deleted {
		t.Fatalf("final report did not delete: %+v", doc)
	}
	_, err = s.NodePool(ctx, p.ID)
	wantCode(t, err, kpool.CodeNotFound)
	NewPool(t, s, c, "workers")
}

func testClusterForceDelete(t *testing.T, s *kpool.Service) {
	ctx, ctl := Ctx(Alice), Ctx(Controller)
	c := NewCluster(t, s, Alice, "prod")
	quiet := NewPool(t, s, c, "quiet")
	busy := NewPool(t, s, c, "busy")
	ok(s.ReportNodePoolStatus(ctl, busy.ID, ready("gcp-nodepool-controller", 1)))(t)

	_, _, err := s.DeleteCluster(ctx, c.ID, false, "")
	wantCode(t, err, kpool.CodeConflict)
	out, gone, err := s.DeleteCluster(ctx, c.ID, true, "")
	if err != nil || gone || out.Status.Phase != kpool.ClusterDeleting {
		t.Fatalf("force delete: gone=%v err=%v cluster=%+v", gone, err, out)
	}
	_, err = s.NodePool(ctx, quiet.ID)
	wantCode(t, err, kpool.CodeNotFound)
	if p := ok(s.NodePool(ctx, busy.ID))(t); p.Status.Phase != kpool.PhaseDeleting {
		t.Fatalf("reported pool phase %s, want Deleting", p.Status.Phase)
	}
	_, err = s.CreateNodePool(ctx, kpool.NodePoolCreate{Name: "late", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeConflict)
	ok(s.ReportNodePoolStatus(ctl, busy.ID, kpool.ControllerStatus{ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1,
		Conditions: []kpool.Condition{{Type: kpool.ConditionDeleted, Status: kpool.ConditionTrue}}}))(t)
	_, err = s.Cluster(ctx, c.ID)
	wantCode(t, err, kpool.CodeNotFound) // the cluster went with its last pool
	evs := ok(s.Store.Events(context.Background(), 0, 100))(t)
	if last := evs[len(evs)-1]; last.Type != kpool.EventClusterDeleted || last.ObjectID != c.ID {
		t.Fatalf("last event %+v, want cluster.deleted", last)
	}
}

func testTimes(t *testing.T, s *kpool.Service) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.UTC)
	s.Now = func() time.Time { return at }
	p := NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	got := ok(s.NodePool(Ctx(Alice), p.ID))(t)
	if !got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at) || got.CreatedAt.Location() != time.UTC {
		t.Fatalf("times: created %v updated %v, want %v", got.CreatedAt, got.UpdatedAt, at)
	}
}

func testLeases(t *testing.T, s *kpool.Service) {
	ctx := context.Background()
	st := s.Store
	held := ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t)
	if !held {
		t.Fatal("a free lease was not taken")
	}
	if ok(st.AcquireLease(ctx, "controllers", "b", time.Minute))(t) {
		t.Fatal("b took a lease a holds")
	}
	if !ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t) {
		t.Fatal("a could not renew its lease")
	}
	if !ok(st.AcquireLease(ctx, "other", "b", time.Minute))(t) {
		t.Fatal("leases of other names are independent")
	}
	// An expired lease goes to whoever asks.
	if !ok(st.AcquireLease(ctx, "controllers", "a", -time.Second))(t) {
		t.Fatal("a renewing into the past")
	}
	if !ok(st.AcquireLease(ctx, "controllers", "b", time.Minute))(t) {
		t.Fatal("b could not take an expired lease")
	}
	if ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t) {
		t.Fatal("a took back b's lease")
	}
	// A released lease is free at once.
	if err := st.ReleaseLease(ctx, "controllers", "b"); err != nil {
		t.Fatal(err)
	}
	if !ok(st.AcquireLease(ctx, "controllers", "a", time.Minute))(t) {
		t.Fatal("a could not take a released lease")
	}
	if err := st.ReleaseLease(ctx, "controllers", "b"); err != nil { // not b's: no effect
		t.Fatal(err)
	}
	if ok(st.AcquireLease(ctx, "controllers", "b", time.Minute))(t) {
		t.Fatal("b's release of a's lease freed it")
	}
}

func testSubscribe(t *testing.T, s *kpool.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	wake := s.Store.Subscribe(ctx)
	before := ok(s.Store.LastEventID(ctx))(t)
	c := NewCluster(t, s, Alice, "prod")
	<-wake // the create committed with its event
	after := ok(s.Store.LastEventID(ctx))(t)
	evs := ok(s.Store.Events(ctx, before, 10))(t)
	if after <= before || len(evs) != 1 || evs[0].ObjectID != c.ID {
		t.Fatalf("events after %d: %v (last %d)", before, evs, after)
	}
	cancel()
	for range wake { // closed once ctx ends
	}
}

// testEventRetention checks the outbox's pruning: events older than the
// retention go, oldest first, in batches, always as a run from the bottom
// (an event whose clock says young stops it) and never the newest; a feed
// that fell behind the pruning is told so, one that kept up is not.
func testEventRetention(t *testing.T, s *kpool.Service) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) { s.Now = func() time.Time { return t0.Add(d) } }
	behind, current := &kpool.EventFeed{Store: s.Store}, &kpool.EventFeed{Store: s.Store}
	for _, f := range []*kpool.EventFeed{behind, current} {
		if err := f.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	at(0)
	c := NewCluster(t, s, Alice, "prod") // 1 event
	for i := range 4 {                   // 4 more
		NewPool(t, s, c, fmt.Sprintf("old-%d", i))
	}
	at(90 * time.Minute)
	NewPool(t, s, c, "young")
	at(30 * time.Minute) // a process whose clock is behind
	NewPool(t, s, c, "skewed")
	at(0)
	NewPool(t, s, c, "old-after-skew")
	at(2 * time.Hour)
	NewPool(t, s, c, "newest")
	all := ok(s.Store.Events(ctx, 0, 100))(t)
	if len(all) != 9 {
		t.Fatalf("%d events, want 9", len(all))
	}
	if evs, err := current.Next(ctx); err != nil || len(evs) != 9 {
		t.Fatalf("current feed: %d events, %v", len(evs), err)
	}

	// Older than an hour at 2h: the first five (not "skewed", which says
	// 30m, and not what follows it, though "old-after-skew" is old).
	r := &kpool.EventRetention{Store: s.Store, Retention: time.Hour, Batch: 2, Now: func() time.Time { return t0.Add(2 * time.Hour) }}
	if n := ok(r.Prune(ctx))(t); n != 5 {
		t.Fatalf("pruned %d, want 5", n)
	}
	kept := ok(s.Store.Events(ctx, 0, 100))(t)
	if len(kept) != 4 || kept[0].ID != all[5].ID {
		t.Fatalf("kept %v; want the last 4 of %v", kept, all)
	}
	if n := ok(r.Prune(ctx))(t); n != 0 {
		t.Fatalf("pruning again deleted %d", n)
	}
	evs, err := behind.Next(ctx)
	if !errors.Is(err, kpool.ErrEventsPruned) || len(evs) != 4 || evs[0].ID != kept[0].ID {
		t.Fatalf("feed behind the pruning: %d events, %v; want the 4 kept and ErrEventsPruned", len(evs), err)
	}

	// Much later everything is old: all go but the newest, concurrently
	// pruned by two processes.
	late := func() time.Time { return t0.Add(10 * time.Hour) }
	counts := make([]int, 2)
	errs := parallel(2, func(i int) error {
		var err error
		counts[i], err = (&kpool.EventRetention{Store: s.Store, Retention: time.Hour, Batch: 1, Now: late}).Prune(ctx)
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if counts[0]+counts[1] != 3 {
		t.Fatalf("two pruners deleted %v, want 3 in all", counts)
	}
	kept = ok(s.Store.Events(ctx, 0, 100))(t)
	if len(kept) != 1 || kept[0].ID != all[8].ID || ok(s.Store.LastEventID(ctx))(t) != all[8].ID {
		t.Fatalf("kept %v; want the newest, %d", kept, all[8].ID)
	}
	// Feeds that kept up are not told to resync, and see what comes next.
	at(10 * time.Hour)
	NewPool(t, s, c, "next")
	for name, f := range map[string]*kpool.EventFeed{"behind": behind, "current": current} {
		if evs, err := f.Next(ctx); err != nil || len(evs) != 1 {
			t.Fatalf("%s feed after pruning: %d events, %v", name, len(evs), err)
		}
	}
}
