package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

func testList(t *testing.T, s *service.Service) {
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

	all := ok(s.NodePools(ctx, service.ListOptions{}))(t)
	if all.Total != 7 || len(all.Items) != 7 || all.Next != "" || all.Limit != kpool.DefaultLimit {
		t.Fatalf("list: total %d, %d items, next %q", all.Total, len(all.Items), all.Next)
	}
	for i, p := range all.Items {
		if p.ID != ids[i] {
			t.Fatalf("order: item %d is %s, want %s", i, p.ID, ids[i])
		}
	}
	checkPaging(t, s, ctx, ids)
	checkFilters(t, s, ctx, a, b, ids)
	_, err := s.NodePools(ctx, service.ListOptions{Limit: 101})
	wantCode(t, err, kpool.CodeValidation)
	_, err = s.NodePools(ctx, service.ListOptions{After: "garbage!"})
	wantCode(t, err, kpool.CodeValidation)
}

func testVisibility(t *testing.T, s *service.Service) {
	c := NewCluster(t, s, Alice, "prod")
	p := NewPool(t, s, c, "workers")
	NewPool(t, s, NewCluster(t, s, Bob, "bobs"), "bobs-pool")

	bob := Ctx(Bob)
	_, err := s.Cluster(bob, c.ID)
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.NodePool(bob, p.ID)
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.UpdateNodePool(bob, p.ID, service.Update{Spec: count(9)})
	wantCode(t, err, kpool.CodeNotFound)
	_, _, err = s.DeleteNodePool(bob, p.ID, service.Delete{})
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.CreateNodePool(bob, service.NodePoolCreate{Name: "x", ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
	wantCode(t, err, kpool.CodeNotFound)
	_, err = s.NodePoolStatus(bob, p.ID)
	wantCode(t, err, kpool.CodeNotFound)
	if l := ok(s.NodePools(bob, service.ListOptions{ClusterID: c.ID}))(t); l.Total != 0 {
		t.Fatalf("bob sees %d of alice's pools", l.Total)
	}
	if l := ok(s.Clusters(bob, service.ListOptions{}))(t); l.Total != 1 {
		t.Fatalf("bob sees %d clusters, want his 1", l.Total)
	}
	// E-mail addresses compare without case.
	ok(s.NodePool(Ctx("ALICE@Example.COM"), p.ID))(t)
	// Admins see and change everything; controllers see everything and change nothing.
	if l := ok(s.NodePools(Ctx(Admin), service.ListOptions{}))(t); l.Total != 2 {
		t.Fatalf("admin sees %d pools, want 2", l.Total)
	}
	ok(s.UpdateNodePool(Ctx(Admin), p.ID, service.Update{Spec: count(2)}))(t)
	if l := ok(s.NodePools(Ctx(Controller), service.ListOptions{}))(t); l.Total != 2 {
		t.Fatalf("controller sees %d pools, want 2", l.Total)
	}
	_, err = s.UpdateNodePool(Ctx(Controller), p.ID, service.Update{Spec: count(3)})
	wantCode(t, err, kpool.CodeForbidden)
	// Only controllers write status.
	_, err = s.ReportNodePoolStatus(Ctx(Alice), p.ID, ready("x", 1))
	wantCode(t, err, kpool.CodeForbidden)
	_, err = s.ReportNodePoolStatus(Ctx(Admin), p.ID, ready("x", 1))
	wantCode(t, err, kpool.CodeForbidden)
}

// checkPaging: offset paging and cursor paging both visit every pool once,
// in order.
func checkPaging(t *testing.T, s *service.Service, ctx context.Context, ids []string) {
	t.Helper()
	var byOffset, byCursor []string
	for off := 0; ; off += 3 {
		pg := ok(s.NodePools(ctx, service.ListOptions{Limit: 3, Offset: off}))(t)
		for _, p := range pg.Items {
			byOffset = append(byOffset, p.ID)
		}
		if pg.Next == "" {
			break
		}
	}
	for after := ""; ; {
		pg := ok(s.NodePools(ctx, service.ListOptions{Limit: 3, After: after}))(t)
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
}

// checkFilters: each filter of a list finds what it names, and no more.
func checkFilters(t *testing.T, s *service.Service, ctx context.Context, a, b *kpool.Cluster, ids []string) {
	t.Helper()
	inA := ok(s.NodePools(ctx, service.ListOptions{ClusterID: a.ID}))(t)
	if inA.Total != 4 || len(inA.Items) != 4 {
		t.Fatalf("cluster filter: total %d", inA.Total)
	}
	pending := ok(s.NodePools(ctx, service.ListOptions{Phase: kpool.PhasePending, Health: kpool.HealthUnknown}))(t)
	if pending.Total != 7 {
		t.Fatalf("phase filter: total %d", pending.Total)
	}
	// Make one pool Ready and filter on it.
	p0 := ids[0]
	ok(s.ReportNodePoolStatus(Ctx(Controller), p0, ready("gcp-nodepool-controller", 1)))(t)
	readyList := ok(s.NodePools(ctx, service.ListOptions{Phase: kpool.PhaseReady}))(t)
	healthy := ok(s.NodePools(ctx, service.ListOptions{Health: kpool.HealthHealthy}))(t)
	if readyList.Total != 1 || readyList.Items[0].ID != p0 || healthy.Total != 1 {
		t.Fatalf("Ready filter: %d, healthy: %d", readyList.Total, healthy.Total)
	}
	clusters := ok(s.Clusters(ctx, service.ListOptions{Limit: 1}))(t)
	if clusters.Total != 2 || len(clusters.Items) != 1 || clusters.Next == "" {
		t.Fatalf("clusters page: %+v", clusters)
	}
	// By name: what the CLI resolves names with.
	named := ok(s.NodePools(ctx, service.ListOptions{Name: "pool-3"}))(t)
	if named.Total != 1 || len(named.Items) != 1 || named.Items[0].Name != "pool-3" {
		t.Fatalf("name filter: %+v", named)
	}
	if none := ok(s.NodePools(ctx, service.ListOptions{Name: "pool-3", ClusterID: a.ID}))(t); none.Total != 0 || len(none.Items) != 0 {
		t.Fatalf("name in another cluster: %+v", none)
	}
	if byName := ok(s.Clusters(ctx, service.ListOptions{Name: "b"}))(t); byName.Total != 1 || byName.Items[0].ID != b.ID {
		t.Fatalf("cluster by name: %+v", byName)
	}
	if other := ok(s.Clusters(Ctx(Bob), service.ListOptions{Name: "b"}))(t); other.Total != 0 {
		t.Fatalf("another owner's cluster by name: %+v", other)
	}
}
