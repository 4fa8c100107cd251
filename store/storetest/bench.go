package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
)

// BenchPools is the size of the big cluster the benchmarks compare with an
// empty one.
const BenchPools = 10000

// Bench measures the store through the service and guards the complexity of
// its hot paths: creating a pool into an empty cluster and into one of
// BenchPools pools (after as many older pools of another cluster), reading
// one, and listing a page of 50 at the start of that cluster and deep in it,
// by offset and by keyset. The Complexity run reports the ratios that must
// stay near 1 (a create into a big cluster ÷ into an empty one; a deep
// keyset page ÷ the first, and the first ÷ a deep one); they are measured
// here, in the benchmark's output, not asserted by a timed test.
func Bench(b *testing.B, open Opener) {
	s := service.New(open(b), Platforms)
	ctx := Ctx(Alice)
	empty := NewCluster(b, s, Alice, "empty")
	// Another cluster's pools, all older than big's: big's first page must
	// not walk them (PostgreSQL once read it from the global order index).
	fill(b, s, NewCluster(b, s, Alice, "older"), BenchPools)
	big := NewCluster(b, s, Alice, "big")
	fill(b, s, big, BenchPools)
	var n atomic.Int64
	create := func(c *kpool.Cluster) func() error {
		return func() error {
			_, err := s.CreateNodePool(ctx, service.NodePoolCreate{Name: fmt.Sprintf("create-%d", n.Add(1)), ClusterID: c.ID, Spec: json.RawMessage(GCPPool)})
			return err
		}
	}
	deep := cursorAt(b, s, big, BenchPools-1000)
	page := func(o service.ListOptions) func() error {
		return func() error {
			o.ClusterID, o.Limit = big.ID, 50
			l, err := s.RawNodePools(ctx, o)
			if err == nil && len(l.Items) != 50 {
				err = fmt.Errorf("page of %d", len(l.Items))
			}
			return err
		}
	}
	last := NewPool(b, s, big, "last")
	checked := NewCluster(b, s, Alice, "checked")
	catalogue(b, s, checked, 800)
	ops := []struct {
		name string
		fn   func() error
	}{
		{"CreateIntoEmpty", create(empty)},
		{"CreatePreflight800Types", create(checked)},
		{fmt.Sprintf("CreateInto%d", BenchPools), create(big)},
		{"Get", func() error { _, err := s.RawNodePool(ctx, last.ID); return err }},
		{"PageFirst", page(service.ListOptions{})},
		{"PageDeepKeyset", page(service.ListOptions{After: deep})},
		{"PageDeepOffset", page(service.ListOptions{Offset: BenchPools - 1000})},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			for b.Loop() {
				if err := op.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The ratios are measured once, with runs of their own, whatever -benchtime.
	b.Run("Complexity", func(b *testing.B) {
		create := ratio(b, ops[2].fn, ops[0].fn)
		deep := ratio(b, ops[5].fn, ops[4].fn)
		offset := ratio(b, ops[6].fn, ops[4].fn)
		first := ratio(b, ops[4].fn, ops[5].fn)
		preflight := ratio(b, ops[1].fn, ops[0].fn)
		for b.Loop() {
		}
		b.ReportMetric(create, "create-big/create-empty")
		b.ReportMetric(deep, "page-deep/page-first")
		b.ReportMetric(offset, "offset-deep/page-first")
		b.ReportMetric(first, "page-first/page-deep")
		b.ReportMetric(preflight, "create-preflight/create-empty")
	})
}

// ratio is the time of a over the time of b, each run 500 times in
// alternating rounds of 50 so that drift in the machine falls on both.
func ratio(tb *testing.B, a, b func() error) float64 {
	var ta, tbb time.Duration
	run := func(fn func() error) time.Duration {
		start := time.Now()
		for range 50 {
			if err := fn(); err != nil {
				tb.Fatal(err)
			}
		}
		return time.Since(start)
	}
	for range 10 {
		ta += run(a)
		tbb += run(b)
	}
	return ta.Seconds() / tbb.Seconds()
}

// fill creates n pools in c, 32 at a time.
func fill(b *testing.B, s *service.Service, c *kpool.Cluster, n int) {
	var next atomic.Int64
	for _, err := range parallel(32, func(int) error {
		for i := next.Add(1); i <= int64(n); i = next.Add(1) {
			if _, err := s.CreateNodePool(Ctx(c.CreatedBy), service.NodePoolCreate{Name: fmt.Sprintf("fill-%d", i), ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}); err != nil {
				return err
			}
		}
		return nil
	}) {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// cursorAt returns the keyset cursor of the page that starts after position
// n of c's pools.
func cursorAt(b *testing.B, s *service.Service, c *kpool.Cluster, n int) string {
	l, _, err := s.Store.RawNodePools(context.Background(), kpool.NodePoolFilter{ClusterID: c.ID, Page: kpool.Page{Limit: 1, Offset: n - 1}})
	if err != nil || len(l) != 1 {
		b.Fatalf("position %d: %v", n, err)
	}
	return kpool.EncodeCursor(kpool.Cursor{CreatedAt: l[0].CreatedAt, ID: l[0].ID})
}

// catalogue reports facts of n machine types for c (a region's EC2
// catalogue is about 800), the bench pool's type among them: creates into
// c are checked against them.
func catalogue(b *testing.B, s *service.Service, c *kpool.Cluster, n int) {
	f := &kpool.ClusterFacts{LearnedAt: time.Now(), Version: "1.31.2", Zones: []string{"1", "2", "3"}}
	for i := range n - 1 {
		f.MachineTypes = append(f.MachineTypes, kpool.MachineType{Name: fmt.Sprintf("x%d-standard-%d", i, i%64), CPUs: i%64 + 1, MemoryMiB: 4096})
	}
	f.MachineTypes = append(f.MachineTypes, kpool.MachineType{Name: "n1-standard-4", CPUs: 4, MemoryMiB: 15360})
	if err := s.ReportClusterFacts(Ctx(Controller), c.ID, f); err != nil {
		b.Fatal(err)
	}
}
