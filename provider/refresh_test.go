package provider_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool/provider"
)

// pass runs one list pass as a driver does: the pools Plan reads are read
// (their value is the pass's number) and kept, settled unless named in
// unsettled; it returns the names read, sorted.
func pass(r *provider.Refresh[int], key string, n int, listed []provider.Listed, unsettled ...string) []string {
	p := r.Plan(key, listed)
	var read []string
	for _, l := range listed {
		if _, ok := p.Kept(l.Name); ok {
			continue
		}
		read = append(read, l.Name)
		p.Keep(l.Name, n, !slices.Contains(unsettled, l.Name))
	}
	slices.Sort(read)
	return read
}

func names(ns ...string) []provider.Listed {
	out := make([]provider.Listed, len(ns))
	for i, n := range ns {
		out[i] = provider.Listed{Name: n}
	}
	return out
}

// TestRefreshPlan: which pools each pass reads.
func TestRefreshPlan(t *testing.T) {
	five := names("a", "b", "c", "d", "e")
	for _, tc := range []struct {
		name string
		// each step: the list, then what happens before the pass
		steps []step
	}{
		{"new pools are read, then two settled a pass, longest unread first", []step{
			{listed: five, want: "a b c d e"},
			{listed: five, want: "a b"},
			{listed: five, want: "c d"},
			{listed: five, want: "a e"},
			{listed: five, want: "b c"},
		}},
		{"an unsettled read is read every pass", []step{
			{listed: five, unsettled: "c", want: "a b c d e"},
			{listed: five, unsettled: "c", want: "a b c"},
			{listed: five, want: "c d e"},
			{listed: five, want: "a b"},
		}},
		{"a changed fingerprint is read at once", []step{
			{listed: five, want: "a b c d e"},
			{listed: fp(five, "e", "v2"), want: "a b e"},
			{listed: fp(five, "e", "v2"), want: "c d"},
		}},
		{"a write is read on the next pass", []step{
			{listed: five, want: "a b c d e"},
			{listed: five, invalidate: "e", want: "a b e"},
			{listed: five, want: "c d"},
		}},
		{"a new pool is read at once, a gone one forgotten", []step{
			{listed: five, want: "a b c d e"},
			{listed: names("a", "b", "c", "d", "f"), want: "a b f"},
			{listed: five, want: "c d e"},
		}},
		{"a lone pool is read every pass, and forgotten when not listed", []step{
			{listed: names("a"), want: "a"},
			{listed: names("a"), want: "a"},
			{listed: nil, want: ""},
			{listed: names("a"), want: "a"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := provider.NewRefresh[int](provider.RefreshPools)
			for i, s := range tc.steps {
				if s.invalidate != "" {
					r.Invalidate("c1", s.invalidate)
				}
				got := strings.Join(pass(r, "c1", i, s.listed, strings.Fields(s.unsettled)...), " ")
				if got != s.want {
					t.Fatalf("pass %d read %q, want %q", i, got, s.want)
				}
			}
		})
	}
}

type step struct {
	listed     []provider.Listed
	unsettled  string // names, space-separated
	invalidate string
	want       string
}

// fp is listed with name's fingerprint set.
func fp(listed []provider.Listed, name, f string) []provider.Listed {
	out := slices.Clone(listed)
	for i := range out {
		if out[i].Name == name {
			out[i].Fingerprint = f
		}
	}
	return out
}

// TestRefreshAtRest: at rest, a pass reads RefreshPerList pools whatever
// their number, and each is read again within ceil(pools/RefreshPerList)
// passes.
func TestRefreshAtRest(t *testing.T) {
	for _, n := range []int{10, 31, 100} {
		var listed []provider.Listed
		for i := range n {
			listed = append(listed, provider.Listed{Name: fmt.Sprintf("p%03d", i)})
		}
		r := provider.NewRefresh[int](provider.RefreshPools)
		pass(r, "c1", 0, listed)
		last := map[string]int{}
		period := (n + provider.RefreshPerList - 1) / provider.RefreshPerList
		for i := 1; i <= 3*period; i++ {
			read := pass(r, "c1", i, listed)
			if len(read) != provider.RefreshPerList {
				t.Fatalf("%d pools: pass %d read %v", n, i, read)
			}
			for _, name := range read {
				last[name] = i
			}
			if i < period {
				continue
			}
			for _, l := range listed {
				if i-last[l.Name] >= period {
					t.Fatalf("%d pools: %s last read at pass %d, now %d", n, l.Name, last[l.Name], i)
				}
			}
		}
	}
}

// TestRefreshWriteDuringPass: a write made after a pass planned is not
// cleared by that pass's read, which may predate it.
func TestRefreshWriteDuringPass(t *testing.T) {
	r := provider.NewRefresh[int](provider.RefreshPools)
	listed := names("a", "b", "c", "d")
	pass(r, "c1", 0, listed)
	p := r.Plan("c1", listed) // reads a and b
	r.Invalidate("c1", "a")
	p.Keep("a", 1, true)
	p.Keep("b", 1, true)
	if got := strings.Join(pass(r, "c1", 2, listed), " "); got != "a c d" {
		t.Fatalf("after a write during a pass: read %q, want a c d", got)
	}
	// An older pass's read never replaces a newer one.
	old := r.Plan("c1", listed)
	pass(r, "c1", 4, listed)
	old.Keep("a", 3, false)
	if v, ok := r.Plan("c1", listed).Kept("a"); !ok || v != 4 {
		t.Fatalf("kept a = %d, %v; want pass 4's read", v, ok)
	}
}

// TestRefreshBound: past its bound, the least recently listed cluster is
// forgotten, and its next pass reads every pool.
func TestRefreshBound(t *testing.T) {
	r := provider.NewRefresh[int](12) // three clusters of three pools, and their entries
	listed := names("a", "b", "c")
	for _, k := range []string{"c1", "c2", "c3"} {
		pass(r, k, 0, listed)
	}
	pass(r, "c1", 1, listed) // c2 is now the least recently listed
	pass(r, "c4", 0, listed)
	if got := len(pass(r, "c1", 2, listed)); got != provider.RefreshPerList {
		t.Fatalf("c1 read %d pools, want %d", got, provider.RefreshPerList)
	}
	if got := len(pass(r, "c2", 1, listed)); got != 3 {
		t.Fatalf("c2, forgotten, read %d pools, want 3", got)
	}
}

// TestSettled: only a Ready pool with every node up and no shortage is
// settled.
func TestSettled(t *testing.T) {
	ready := provider.Pool{PoolSpec: provider.PoolSpec{Count: 3}, State: provider.StateReady, Nodes: 3, ReadyNodes: 3}
	for _, tc := range []struct {
		name string
		edit func(p *provider.Pool)
		want bool
	}{
		{"ready", func(*provider.Pool) {}, true},
		{"updating", func(p *provider.Pool) { p.State = provider.StateUpdating }, false},
		{"failed", func(p *provider.Pool) { p.State = provider.StateFailed }, false},
		{"unknown", func(p *provider.Pool) { p.State = provider.StateUnknown }, false},
		{"a node down", func(p *provider.Pool) { p.ReadyNodes = 2 }, false},
		{"a node missing", func(p *provider.Pool) { p.Nodes, p.ReadyNodes = 2, 2 }, false},
		{"ready count unknown", func(p *provider.Pool) { p.ReadyUnknown = true }, false},
		{"short", func(p *provider.Pool) { p.Shortage = &provider.Shortage{Code: "x"} }, false},
		{"stale nodes", func(p *provider.Pool) { p.StaleNodes = 1 }, true},
	} {
		p := ready
		tc.edit(&p)
		if got := provider.Settled(&p); got != tc.want {
			t.Errorf("%s: settled %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRefreshLast: a pass gives the last read of a pool it reads again,
// and none of a new one.
func TestRefreshLast(t *testing.T) {
	r := provider.NewRefresh[int](provider.RefreshPools)
	pass(r, "c1", 7, names("a"))
	p := r.Plan("c1", names("a", "b"))
	if _, kept := p.Kept("a"); kept {
		t.Fatal("a, the only settled pool, is kept instead of read in its turn")
	}
	if v, ok := p.Last("a"); !ok || v != 7 {
		t.Fatalf("last read of a: %d, %v", v, ok)
	}
	if _, ok := p.Last("b"); ok {
		t.Fatal("a new pool has a last read")
	}
}
