package providertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// A settled cluster's list must cost what the cluster costs, not what its
// pools do (issue 37): the drift pass lists every cluster at that interval,
// and a call per pool would spend a fleet's API quota on watching it.
const (
	restFew    = 3 // pools of the first measure
	restMany   = 9 // pools of the second
	restPasses = 3 // list passes measured at each size
)

// runAtRest checks that the calls of a list pass, read from the emulator's
// own counts (GET /_cloudsim/calls), are the same for a settled cluster of
// restFew pools as of restMany: a driver may read a fixed number of things
// per pass, never one more per pool. The further pages of a paged list
// (the same path asked again with the token of the next page) are counted
// and shown apart: they grow with pools by the cloud's page size, which a
// setup may set small to test paging, not by the driver's reads.
func (s Setup[E, D]) runAtRest(t *testing.T) {
	e := s.Start(t)
	made := 0
	measure := func(n int) restCost {
		for ; made < n; made++ {
			if _, err := e.Driver.NodePoolCreate(context.Background(), e.Cluster, s.Spec(e, fmt.Sprintf("rest%d", made))); err != nil {
				t.Fatalf("create pool %d: %v", made, err)
			}
			// Some clouds take one operation on a cluster at a time.
			e.Clock.Advance(time.Hour)
		}
		return e.restCost(t, n)
	}
	few, many := measure(restFew), measure(restMany)
	t.Logf("a list pass at rest: %d pools: %s; %d pools: %s", restFew, few, restMany, many)
	if few.perPass != many.perPass {
		t.Errorf("a list pass at rest costs %d calls (less further pages) with %d pools and %d with %d: the cost grows with pools (%d pools: %s; %d pools: %s)",
			few.perPass, restFew, many.perPass, restMany, restFew, few, restMany, many)
	}
}

// restCost is what the list passes of a settled cluster cost: the calls
// of each pass less further pages (all equal at rest), the further pages
// of a pass, and the calls of all passes by operation.
type restCost struct {
	perPass, pages int
	passes         []int
	ops            map[string]int
}

func (c restCost) String() string {
	var ops []string
	for op, n := range c.ops {
		ops = append(ops, fmt.Sprintf("%s ×%d", op, n))
	}
	slices.Sort(ops)
	return fmt.Sprintf("%d calls per pass %v and %d further pages (%d passes: %s)", c.perPass, c.passes, c.pages, restPasses, strings.Join(ops, ", "))
}

// restCost lists the cluster once to settle what the driver follows (the
// operations it started), checks it holds n pools, then counts the calls
// of restPasses more lists: their total from the emulator's counts, their
// further pages from its call log.
func (e *Emulated[E, D]) restCost(t *testing.T, n int) restCost {
	t.Helper()
	list := func() {
		pools, err := e.Driver.NodePoolList(context.Background(), e.Cluster)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(pools) != n {
			t.Fatalf("the cluster lists %d pools, want %d", len(pools), n)
		}
	}
	list()
	c := restCost{ops: map[string]int{}}
	start := e.callCounts(t)
	last := start
	for range restPasses {
		logged := len(e.Sim.Calls())
		list()
		now, calls := e.callCounts(t), e.Sim.Calls()[logged:]
		if now.Total-last.Total != len(calls) {
			t.Fatalf("the emulator counts %d calls of a pass, its log holds %d", now.Total-last.Total, len(calls))
		}
		pages := furtherPages(calls)
		c.passes, c.pages = append(c.passes, len(calls)-pages), pages
		last = now
	}
	for _, o := range last.Operations {
		if d := o.Calls - start.calls(o.Operation); d > 0 {
			c.ops[o.Operation] = d
		}
	}
	c.perPass = c.passes[0]
	if slices.Max(c.passes) != slices.Min(c.passes) {
		t.Errorf("%d pools at rest: passes cost %v calls, not the same each", n, c.passes)
	}
	return c
}

// furtherPages counts the calls that asked a path the pass had asked
// already with another query: the next pages of a list.
func furtherPages(calls []sim.Call) int {
	seen, n := map[string]string{}, 0
	for _, c := range calls {
		k := c.Method + " " + c.Path
		if q, ok := seen[k]; ok && q != c.Query {
			n++
		}
		seen[k] = c.Query
	}
	return n
}

// callCounts reads the emulator's counts where a benchmark reads them,
// GET <endpoint>/_cloudsim/calls (not counted itself).
func (e *Emulated[E, D]) callCounts(t *testing.T) counts {
	t.Helper()
	res, err := e.Client.Get(e.URL + sim.AdminPrefix + "calls")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got sim.CallCounts
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET calls: %d %v", res.StatusCode, err)
	}
	return counts(got)
}

// counts are an emulator's call counts.
type counts sim.CallCounts

// calls are the calls of one operation.
func (c counts) calls(op string) int {
	for _, o := range c.Operations {
		if o.Operation == op {
			return o.Calls
		}
	}
	return 0
}
