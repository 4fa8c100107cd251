package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// testIndexPages checks the pages a list reads as a range of one index (a
// cluster; a cluster and a phase or health; a phase; a health): with the
// clusters' pools interleaved in time, some created at the same instant,
// every filter and caller pages through exactly the pools it selects, in
// (created_at, id) order, by cursor and by offset, with the right total.
func testIndexPages(t *testing.T, s *service.Service) {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var tick int
	s.Now = func() time.Time { return start.Add(time.Duration(tick/3) * time.Second) } // three pools per instant
	a, b, bobs := NewCluster(t, s, Alice, "a"), NewCluster(t, s, Alice, "b"), NewCluster(t, s, Bob, "bobs")
	for i := range 18 {
		c := []*kpool.Cluster{a, b, bobs, a}[i%4]
		p := NewPool(t, s, c, fmt.Sprintf("p%d", i))
		tick++
		if i%3 == 0 {
			ok(s.ReportNodePoolStatus(Ctx(Controller), p.ID, ready("gcp-nodepool-controller", 1)))(t)
		}
	}
	all := ok(s.NodePools(Ctx(Admin), service.ListOptions{Limit: kpool.MaxLimit}))(t).Items
	for _, who := range []string{Alice, Bob, Admin} {
		for _, c := range []*kpool.Cluster{nil, a, b, bobs} {
			for _, ph := range []kpool.Phase{"", kpool.PhasePending, kpool.PhaseReady} {
				for _, h := range []kpool.Health{"", kpool.HealthHealthy, kpool.HealthUnknown} {
					o := service.ListOptions{Phase: ph, Health: h}
					if c != nil {
						o.ClusterID = c.ID
					}
					checkPages(t, s, who, o, selected(all, who, o))
				}
			}
		}
	}
}

// selected is what o selects of all (in list order) for who.
func selected(all []*kpool.NodePool, who string, o service.ListOptions) []string {
	ids := []string{}
	for _, p := range all {
		seen := who == Admin || p.ClusterOwner == who
		if seen && (o.ClusterID == "" || p.ClusterID == o.ClusterID) &&
			(o.Phase == "" || p.Status.Phase == o.Phase) && (o.Health == "" || p.Status.Health == o.Health) {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// checkPages pages through o for who, two at a time, by cursor and by
// offset, and compares both and the totals with want.
func checkPages(t *testing.T, s *service.Service, who string, o service.ListOptions, want []string) {
	t.Helper()
	var byCursor, byOffset []string
	pages := 0
	page := func() *service.List[*kpool.NodePool] {
		if pages++; pages > 2*len(want)+4 {
			t.Fatalf("%s, %+v: no last page after %d pages", who, o, pages)
		}
		return ok(s.NodePools(Ctx(who), o))(t)
	}
	for o.Limit, o.Offset = 2, 0; ; o.Offset += 2 {
		l := page()
		if l.Total != len(want) {
			t.Fatalf("%s, %+v: total %d, want %d", who, o, l.Total, len(want))
		}
		for _, p := range l.Items {
			byOffset = append(byOffset, p.ID)
		}
		if l.Next == "" {
			break
		}
	}
	for o.Offset = 0; ; {
		l := page()
		for _, p := range l.Items {
			byCursor = append(byCursor, p.ID)
		}
		if o.After = l.Next; o.After == "" {
			break
		}
	}
	if !slices.Equal(byCursor, want) || !slices.Equal(byOffset, want) {
		t.Fatalf("%s, %+v:\n cursor %v\n offset %v\n want   %v", who, o, byCursor, byOffset, want)
	}
}

// testOffsetCap checks that an offset up to kpool.MaxOffset pages, and a
// deeper one is refused on the offset field, pointing at the cursor.
func testOffsetCap(t *testing.T, s *service.Service) {
	NewPool(t, s, NewCluster(t, s, Alice, "prod"), "workers")
	l := ok(s.NodePools(Ctx(Alice), service.ListOptions{Offset: kpool.MaxOffset}))(t)
	if len(l.Items) != 0 || l.Total != 1 {
		t.Fatalf("offset %d: %d items, total %d", kpool.MaxOffset, len(l.Items), l.Total)
	}
	for _, list := range []func() error{
		func() error {
			_, err := s.NodePools(Ctx(Alice), service.ListOptions{Offset: kpool.MaxOffset + 1})
			return err
		},
		func() error {
			_, err := s.Clusters(Ctx(Alice), service.ListOptions{Offset: kpool.MaxOffset + 1})
			return err
		},
	} {
		err := list()
		wantCode(t, err, kpool.CodeValidation)
		if e := err.(*kpool.Error); len(e.Fields) != 1 || e.Fields[0].Field != "offset" {
			t.Fatalf("offset beyond the cap: %v", err)
		}
	}
}
