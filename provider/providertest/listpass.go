package providertest

import (
	"context"
	"path"
	"testing"

	"github.com/kpool/kpool/provider"
)

// ListPass lists the emulated cluster's pools once, and returns them, the
// calls the emulator answered for the list by operation, and the last
// path segment (the pool's name or id) of each call of operation readOp:
// which pools the pass read one by one.
func (e *Emulated[E, D]) ListPass(t *testing.T, readOp string) ([]provider.Pool, map[string]int, []string) {
	t.Helper()
	before, seen := e.opCounts(t), len(e.Sim.Calls())
	pools, err := e.Driver.NodePoolList(context.Background(), e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	cost := e.opCounts(t)
	for op, n := range before {
		if cost[op] -= n; cost[op] == 0 {
			delete(cost, op)
		}
	}
	var read []string
	for _, c := range e.Sim.Calls()[seen:] {
		if c.Operation == readOp {
			read = append(read, path.Base(c.Path))
		}
	}
	return pools, cost, read
}

// opCounts are the emulator's calls so far, by operation.
func (e *Emulated[E, D]) opCounts(t *testing.T) map[string]int {
	out := map[string]int{}
	for _, o := range e.callCounts(t).Operations {
		out[o.Operation] = o.Calls
	}
	return out
}
