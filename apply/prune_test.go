package apply

import (
	"testing"

	"github.com/kpool/kpool"
)

// TestOwner: a pool is a logical pool's when it is in its placement pool
// under a name the logical pool makes, or when the logical pool's status
// lists it as made; a pool that joined by placementPool alone is not.
func TestOwner(t *testing.T) {
	t.Parallel()
	lps := owners{
		{Name: "web"},
		{Name: "cache", Status: kpool.LogicalPoolStatus{Members: []kpool.LogicalMember{{ID: "p-odd", Made: true}, {ID: "p-joined"}}}},
	}
	pool := func(id, name, placement string) *kpool.NodePool {
		return &kpool.NodePool{ID: id, Name: name, Spec: kpool.NodePoolSpec{PlacementPool: placement}}
	}
	for _, tt := range []struct {
		p    *kpool.NodePool
		want string
	}{
		{pool("1", "web", "web"), "web"},
		{pool("2", "web-1", "web"), "web"},
		{pool("3", "web-2-f1", "web"), "web"},
		{pool("4", "web-f3", "web"), "web"},
		{pool("5", "web-gpu", "web"), ""}, // joined under its own name
		{pool("6", "web-1", ""), ""},      // not in the placement pool
		{pool("7", "web-1", "cache"), ""}, // another's placement pool, not its name
		{pool("p-odd", "odd", "cache"), "cache"},
		{pool("p-joined", "joined", "cache"), ""},
		{pool("8", "webby", "web"), ""},
	} {
		if got := lps.owner(tt.p); got != tt.want {
			t.Errorf("owner of %s (placementPool %q): %q, want %q", tt.p.Name, tt.p.Spec.PlacementPool, got, tt.want)
		}
	}
}
