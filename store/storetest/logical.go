package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// newLogical is a logical pool of cluster c as the store takes it.
func newLogical(c *kpool.Cluster, name string, at time.Time) *kpool.LogicalPool {
	n := 3
	return &kpool.LogicalPool{ID: fmt.Sprintf("01950000-0000-7000-8000-%012x", at.UnixNano()%1e12), Name: name, ClusterID: c.ID,
		Generation: 1, ResourceVersion: service.NewResourceVersion(), CreatedAt: at, UpdatedAt: at, CreatedBy: c.CreatedBy,
		Spec:   kpool.LogicalPoolSpec{NodeCount: &n, Template: kpool.NodePoolSpec{Zones: []string{"1", "2"}}},
		Status: kpool.LogicalPoolStatus{NodeCount: n, LastUpdateTime: at}}
}

func putLogical(t testing.TB, s *service.Service, lp *kpool.LogicalPool) error {
	t.Helper()
	return s.Store.Write(context.Background(), func(tx kpool.Tx) error { return tx.CreateLogicalPool(lp) })
}

// testLogicalPools: a logical pool's row round-trips (spec, status,
// times, the cluster's owner), its name is unique in its cluster only, an
// update needs the stored resource version, and it goes when deleted or
// with its cluster.
func testLogicalPools(t *testing.T, s *service.Service) {
	ctx := context.Background()
	a, b := NewCluster(t, s, Alice, "a"), NewCluster(t, s, Bob, "b")
	at := time.Date(2026, 11, 1, 12, 0, 0, 123456000, time.UTC)
	web := newLogical(a, "web", at)
	if err := putLogical(t, s, web); err != nil {
		t.Fatal(err)
	}
	got := ok(s.Store.LogicalPool(ctx, web.ID))(t)
	if got.Name != "web" || got.ClusterOwner != Alice || *got.Spec.NodeCount != 3 || len(got.Spec.Template.Zones) != 2 ||
		!got.CreatedAt.Equal(at) || got.Status.NodeCount != 3 || !got.Status.LastUpdateTime.Equal(at) {
		t.Fatalf("read back %+v", got)
	}
	wantCode(t, putLogical(t, s, newLogical(a, "web", at.Add(time.Second))), kpool.CodeConflict)
	dup := newLogical(a, "other", at.Add(2*time.Second))
	dup.ID = web.ID
	wantCode(t, putLogical(t, s, dup), kpool.CodeConflict)
	if err := putLogical(t, s, newLogical(b, "web", at.Add(3*time.Second))); err != nil {
		t.Fatalf("same name in another cluster: %v", err)
	}
	ghost := newLogical(&kpool.Cluster{ID: "01950000-0000-7000-8000-00000000dead"}, "ghost", at.Add(4*time.Second))
	wantCode(t, putLogical(t, s, ghost), kpool.CodeNotFound)
	_, err := s.Store.LogicalPool(ctx, ghost.ID)
	wantCode(t, err, kpool.CodeNotFound)

	checkLogicalUpdate(t, s, web)
	checkLogicalList(t, s, a, at)

	if err := s.Store.Write(ctx, func(tx kpool.Tx) error { return tx.DeleteLogicalPool(web.ID) }); err != nil {
		t.Fatal(err)
	}
	_, err = s.Store.LogicalPool(ctx, web.ID)
	wantCode(t, err, kpool.CodeNotFound)
	if _, gone, err := s.DeleteCluster(Ctx(Alice), a.ID, service.Delete{}); err != nil || !gone {
		t.Fatalf("delete the cluster: gone %v, %v", gone, err)
	}
	if _, n, err := s.Store.LogicalPools(ctx, kpool.LogicalPoolFilter{ClusterID: a.ID, Page: kpool.Page{Limit: 10}}); err != nil || n != 0 {
		t.Fatalf("after the cluster's delete: %d logical pools, %v", n, err)
	}
}

// checkLogicalUpdate: an update under the row's lock with the stored
// resource version is written; one from a stale version is a CONFLICT.
func checkLogicalUpdate(t *testing.T, s *service.Service, web *kpool.LogicalPool) {
	t.Helper()
	ctx := context.Background()
	from := web.ResourceVersion
	err := s.Store.Write(ctx, func(tx kpool.Tx) error {
		lp, err := tx.LogicalPool(web.ID)
		if err != nil {
			return err
		}
		n := 5
		lp.Spec.NodeCount, lp.Generation, lp.ResourceVersion = &n, 2, service.NewResourceVersion()
		lp.Status.Message = "zone 2 out of capacity"
		return tx.UpdateLogicalPool(lp, from)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := ok(s.Store.LogicalPool(ctx, web.ID))(t)
	if *got.Spec.NodeCount != 5 || got.Generation != 2 || got.Status.Message != "zone 2 out of capacity" || got.ResourceVersion == from {
		t.Fatalf("after update %+v", got)
	}
	err = s.Store.Write(ctx, func(tx kpool.Tx) error {
		stale := *got
		stale.ResourceVersion = service.NewResourceVersion()
		return tx.UpdateLogicalPool(&stale, from)
	})
	wantCode(t, err, kpool.CodeConflict)
	err = s.Store.Write(ctx, func(tx kpool.Tx) error {
		_, err := tx.LogicalPool("01950000-0000-7000-8000-00000000beef")
		return err
	})
	wantCode(t, err, kpool.CodeNotFound)
}

// checkLogicalList: lists are in (created_at, id) order, filter by
// cluster, name and owner, and page by offset and keyset.
func checkLogicalList(t *testing.T, s *service.Service, a *kpool.Cluster, at time.Time) {
	t.Helper()
	ctx := context.Background()
	for i := range 3 {
		if err := putLogical(t, s, newLogical(a, fmt.Sprintf("lp-%d", i), at.Add(time.Duration(10+i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	list := func(f kpool.LogicalPoolFilter) ([]string, int) {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 10
		}
		items, total := ok2(s.Store.LogicalPools(ctx, f))(t)
		var names []string
		for _, lp := range items {
			names = append(names, lp.Name)
		}
		return names, total
	}
	for _, tc := range []struct {
		name  string
		f     kpool.LogicalPoolFilter
		want  string
		total int
	}{
		{"all", kpool.LogicalPoolFilter{}, "[web web lp-0 lp-1 lp-2]", 5},
		{"cluster", kpool.LogicalPoolFilter{ClusterID: a.ID}, "[web lp-0 lp-1 lp-2]", 4},
		{"name", kpool.LogicalPoolFilter{Name: "web"}, "[web web]", 2},
		{"owner", kpool.LogicalPoolFilter{Owner: Bob}, "[web]", 1},
		{"owner's team", kpool.LogicalPoolFilter{Owner: "carol@example.com", Teams: []string{"none"}}, "[]", 0},
		{"offset", kpool.LogicalPoolFilter{ClusterID: a.ID, Page: kpool.Page{Limit: 2, Offset: 1}}, "[lp-0 lp-1]", 4},
		{"after", kpool.LogicalPoolFilter{ClusterID: a.ID, Page: kpool.Page{Limit: 2, After: &kpool.Cursor{CreatedAt: at.Add(10 * time.Second), ID: kpool.NilUUID}}}, "[lp-0 lp-1]", 4},
	} {
		names, total := list(tc.f)
		if fmt.Sprint(names) != tc.want || total != tc.total {
			t.Errorf("%s: %v (total %d), want %s (total %d)", tc.name, names, total, tc.want, tc.total)
		}
	}
}

// ok2 is ok for a call that returns two values and an error.
func ok2[A, B any](a A, b B, err error) func(testing.TB) (A, B) {
	return func(t testing.TB) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return a, b
	}
}

// GCPLogical is a valid logical pool spec for GCPCluster: six nodes over
// zones 1-3, falling back to another machine type, then to zones 1 and 2
// of the template's.
const GCPLogical = `{"nodeCount":6,"template":{"platform":{"gcp":{"machineType":"n1-standard-4","diskSize":100}},"zones":["1","2","3"],
"labels":{"tier":"web"}},"fallbacks":[{"machineType":"n2-standard-4"},{"zones":["1","2"],"machineType":"e2-standard-4"}],
"capacity":{"unavailableFor":"5m","minMoveInterval":"30s"}}`
