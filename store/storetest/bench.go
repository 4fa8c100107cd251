package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kpool/kpool"
)

// Bench measures the store through the service: creating a pool (one write
// transaction with its event), reading one, and listing a page of 50 out of
// 1000.
func Bench(b *testing.B, open Opener) {
	s := kpool.NewService(open(b))
	ctx := Ctx(Alice)
	c := NewCluster(b, s, Alice, "bench")
	b.Run("Create", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.CreateNodePool(ctx, kpool.NodePoolCreate{Name: fmt.Sprintf("create-%d", i), ClusterID: c.ID, Spec: json.RawMessage(GCPPool)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	listed := NewCluster(b, s, Alice, "listed")
	var last *kpool.NodePool
	for i := range 1000 {
		last = NewPool(b, s, listed, fmt.Sprintf("pool-%d", i))
	}
	b.Run("Get", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.NodePool(ctx, last.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("List50of1000", func(b *testing.B) {
		for b.Loop() {
			l, err := s.NodePools(ctx, kpool.ListOptions{ClusterID: listed.ID, Offset: 500})
			if err != nil || len(l.Items) != 50 {
				b.Fatal(err)
			}
		}
	})
}
