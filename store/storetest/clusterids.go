package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/kpool/kpool/service"
)

// testClusterIDs: ClusterIDs is every cluster, whoever owns it, in ID
// order, and no longer one that is gone.
func testClusterIDs(t *testing.T, s *service.Service) {
	ctx := context.Background()
	if ids := ok(s.Store.ClusterIDs(ctx))(t); len(ids) != 0 {
		t.Fatalf("an empty store's clusters: %v", ids)
	}
	a := NewCluster(t, s, Alice, "a")
	b := NewCluster(t, s, Bob, "b")
	c := NewCluster(t, s, Alice, "c")
	NewPool(t, s, a, "web")
	want := []string{a.ID, b.ID, c.ID}
	slices.Sort(want)
	if ids := ok(s.Store.ClusterIDs(ctx))(t); !slices.Equal(ids, want) {
		t.Fatalf("clusters %v, want %v", ids, want)
	}
	if _, _, err := s.DeleteCluster(Ctx(Admin), c.ID, service.Delete{Force: true}); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(id string) bool { return id == c.ID })
	if ids := ok(s.Store.ClusterIDs(ctx))(t); !slices.Equal(ids, want) {
		t.Fatalf("after a delete: clusters %v, want %v", ids, want)
	}
}
