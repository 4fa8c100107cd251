package reconcile

import (
	"testing"
	"time"

	"github.com/kpool/kpool"
)

func TestPlanLayout(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 32, 0, 0, time.UTC)
	long := t0.Add(-time.Hour)
	short := &kpool.Shortage{Code: "ZonalAllocationFailed", Since: t0}
	off := func(zone, mt string) kpool.Offering { return kpool.Offering{Zone: zone, MachineType: mt} }
	zoneTwo := kpool.UnavailableOffering{Offering: off("2", "m"), Since: t0, Until: t0.Add(3 * time.Minute), Times: 1}
	type in struct {
		rank, count, ready int
		short              bool
		zone, mt           string
	}
	cases := []struct {
		name       string
		total      int
		cells      []in
		prev       []kpool.UnavailableOffering
		lastMove   *time.Time
		now        time.Time
		want       []int // targets, in cell order
		away, back bool
		unavail    int // entries after
		times      int // Times of zone 2's entry, when there is one
	}{
		{name: "spread evenly", total: 9, now: t0,
			cells: []in{{0, 2, 2, false, "1", "m"}, {0, 2, 2, false, "2", "m"}, {0, 2, 2, false, "3", "m"}},
			want:  []int{3, 3, 3}},
		{name: "zone 2 runs out: capped at what it has, the rest to the least loaded zone", total: 9, now: t0,
			cells: []in{{0, 3, 3, false, "1", "m"}, {0, 3, 2, true, "2", "m"}, {0, 3, 3, false, "3", "m"}, {1, 0, 0, false, "2", "f"}},
			want:  []int{4, 2, 3, 0}, away: true, unavail: 1, times: 1},
		{name: "while it waits nothing moves", total: 9, now: t0.Add(time.Minute), prev: []kpool.UnavailableOffering{zoneTwo}, lastMove: &t0,
			cells: []in{{0, 4, 4, false, "1", "m"}, {0, 2, 2, false, "2", "m"}, {0, 3, 3, false, "3", "m"}},
			want:  []int{4, 2, 3}, unavail: 1, times: 1},
		{name: "its wait over: asked again, nothing leaves zone 1 yet", total: 9, now: t0.Add(4 * time.Minute), prev: []kpool.UnavailableOffering{zoneTwo}, lastMove: &t0,
			cells: []in{{0, 4, 4, false, "1", "m"}, {0, 2, 2, false, "2", "m"}, {0, 3, 3, false, "3", "m"}},
			want:  []int{4, 3, 3}, back: true, unavail: 1, times: 1},
		{name: "it got them: zone 1 gives its extra node back, the mark goes", total: 9, now: t0.Add(5 * time.Minute), prev: []kpool.UnavailableOffering{zoneTwo}, lastMove: &t0,
			cells: []in{{0, 4, 4, false, "1", "m"}, {0, 3, 3, false, "2", "m"}, {0, 3, 3, false, "3", "m"}},
			want:  []int{3, 3, 3}},
		{name: "asked again and still out: the wait doubles", total: 9, now: t0.Add(4 * time.Minute), prev: []kpool.UnavailableOffering{zoneTwo}, lastMove: &t0,
			cells: []in{{0, 4, 4, false, "1", "m"}, {0, 3, 2, true, "2", "m"}, {0, 3, 3, false, "3", "m"}},
			want:  []int{4, 2, 3}, away: true, unavail: 1, times: 2},
		{name: "no return within the least time between moves", total: 9, now: t0.Add(4 * time.Minute), prev: []kpool.UnavailableOffering{zoneTwo}, lastMove: ptr(t0.Add(3*time.Minute + 30*time.Second)),
			cells: []in{{0, 4, 4, false, "1", "m"}, {0, 2, 2, false, "2", "m"}, {0, 3, 3, false, "3", "m"}},
			want:  []int{4, 2, 3}, unavail: 1, times: 1},
		{name: "every zone of the template out: the fallback machine type", total: 4, now: t0,
			cells: []in{{0, 2, 1, true, "1", "m"}, {0, 2, 0, true, "2", "m"}, {1, 0, 0, false, "1", "f"}, {1, 0, 0, false, "2", "f"}},
			want:  []int{1, 0, 2, 1}, away: true, unavail: 2},
		{name: "the fallback drains only as far as Ready nodes allow", total: 4, now: t0, lastMove: &long,
			cells: []in{{0, 2, 2, false, "1", "m"}, {0, 2, 1, false, "2", "m"}, {1, 2, 2, false, "1", "f"}},
			want:  []int{2, 2, 1}, back: true},
		{name: "nothing anywhere: the rest is unplaced", total: 3, now: t0,
			cells: []in{{0, 3, 1, true, "", "m"}},
			want:  []int{1}, away: true, unavail: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cells []*cell
			for _, c := range tc.cells {
				x := &cell{Offering: off(c.zone, c.mt), rank: c.rank, count: c.count, ready: c.ready, member: &kpool.NodePool{}}
				if c.short {
					x.short = short
				}
				cells = append(cells, x)
			}
			l := plan(tc.total, cells, tc.prev, tc.lastMove, nil, tc.now)
			for i, c := range cells {
				if c.target != tc.want[i] {
					t.Errorf("cell %d (%v): target %d, want %d", i, c.Offering, c.target, tc.want[i])
				}
			}
			if l.away != tc.away || l.back != tc.back {
				t.Errorf("away %v back %v, want %v %v", l.away, l.back, tc.away, tc.back)
			}
			if len(l.unavailable) != tc.unavail {
				t.Errorf("unavailable %v, want %d entries", l.unavailable, tc.unavail)
			}
			if u, ok := l.unavailable[off("2", "m")]; ok && tc.times > 0 && u.Times != tc.times {
				t.Errorf("times %d, want %d", u.Times, tc.times)
			}
		})
	}
}

func TestMemberOf(t *testing.T) {
	cases := []struct {
		name string
		zone string
		rank int
		ok   bool
	}{
		{"web-2", "2", 0, true},
		{"web-2-f1", "2", 1, true},
		{"web-f2", "", 2, true},
		{"web-frontend", "", 0, false}, // joined by placementPool, not made
		{"web-2-f0", "", 0, false},
		{"web-x", "", 0, false},
		{"api-2", "", 0, false},
	}
	for _, tc := range cases {
		zone, rank, ok := memberOf("web", tc.name)
		if ok != tc.ok || (ok && (zone != tc.zone || rank != tc.rank)) {
			t.Errorf("memberOf(web, %s) = %q %d %v, want %q %d %v", tc.name, zone, rank, ok, tc.zone, tc.rank, tc.ok)
		}
		if lp := (&kpool.LogicalPool{Name: "web"}); ok && lp.MemberName(zone, rank) != tc.name {
			t.Errorf("MemberName(%q, %d) = %s, want %s", zone, rank, lp.MemberName(zone, rank), tc.name)
		}
	}
}
