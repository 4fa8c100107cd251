package providertest

import (
	"maps"
	"testing"

	"github.com/kpool/kpool/provider"
)

// Marks of the owner tests: this kpool's pool, and another kpool's.
var (
	mine   = provider.Owner{Installation: "0123456789abcdef0123456789abcdef", Pool: "01950000-0000-7000-8000-000000000001"}
	theirs = provider.Owner{Installation: "fedcba9876543210fedcba9876543210", Pool: "01950000-0000-7000-8000-0000000000ff"}
)

// testOwnerMark: a create writes the spec's owner's mark, the list reads
// it back apart from the user's tags and labels, a create of the same
// pool by its owner adopts it, and another owner's create or update is
// refused (KindForeign, never retried) and leaves the mark as it was.
func testOwnerMark(t *testing.T, h *Harness) {
	s := h.Spec("marked")
	s.Owner = mine
	if h.Driver.Capabilities().Tags {
		s.Tags = map[string]string{"team": "web"}
	}
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	p, ok := find(t, h, s.ProviderName)
	if !ok || p.Owner != mine {
		t.Fatalf("listed after create: mark %+v, want %+v", p.Owner, mine)
	}
	checkUserMaps(t, p, s)
	if _, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s); err != nil {
		t.Fatalf("its owner's second create: %v, want it adopted", err)
	}

	other := s
	other.Owner = theirs
	if _, err := h.Driver.NodePoolCreate(ctx, h.Cluster, other); !provider.IsForeign(err) || provider.Retryable(err) {
		t.Fatalf("another owner's create: %v, want a foreign pool refused", err)
	}
	other.Count++
	if _, err := h.Driver.NodePoolUpdate(ctx, h.Cluster, other); !provider.IsForeign(err) {
		t.Fatalf("another owner's update: %v, want a foreign pool refused", err)
	}
	h.Settle()
	if p, _ := find(t, h, s.ProviderName); p.Owner != mine || p.Count != s.Count {
		t.Fatalf("after another owner's update: mark %+v, count %d; want %+v, %d", p.Owner, p.Count, mine, s.Count)
	}
	if n := h.Creates(s.ProviderName); n != 1 {
		t.Fatalf("the provider saw %d creates, want 1", n)
	}

	// Its owner's update keeps the mark.
	s.Labels = maps.Clone(s.Labels)
	s.Labels["team"] = "web"
	_, err = h.Driver.NodePoolUpdate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	if p, _ := find(t, h, s.ProviderName); p.Owner != mine || p.Labels["team"] != "web" {
		t.Fatalf("after its owner's update: mark %+v, labels %v", p.Owner, p.Labels)
	}
}

// testUnmarkedPoolIsMarked: a pool made without a mark (before marks)
// lists as unmarked, is adopted by a create that carries one, and takes
// the mark of its next update.
func testUnmarkedPoolIsMarked(t *testing.T, h *Harness) {
	s := h.Spec("legacy")
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	if p, _ := find(t, h, s.ProviderName); !p.Owner.IsZero() {
		t.Fatalf("a pool made without a mark lists with %+v", p.Owner)
	}
	s.Owner = mine
	if _, err := h.Driver.NodePoolCreate(ctx, h.Cluster, s); err != nil {
		t.Fatalf("adopting an unmarked pool: %v", err)
	}
	_, err = h.Driver.NodePoolUpdate(ctx, h.Cluster, s)
	must(t, err)
	h.Settle()
	p, _ := find(t, h, s.ProviderName)
	if p.Owner != mine {
		t.Fatalf("after an update: mark %+v, want %+v", p.Owner, mine)
	}
	checkUserMaps(t, p, s)
}

// checkUserMaps checks that the mark is in neither a listed pool's tags
// nor its labels, which hold the user's alone.
func checkUserMaps(t *testing.T, p *provider.Pool, s provider.PoolSpec) {
	t.Helper()
	for _, keys := range []provider.MarkKeys{provider.TagKeys, provider.LabelKeys} {
		for k := range p.Tags {
			if keys.Has(k) {
				t.Fatalf("the mark is in the listed tags: %v", p.Tags)
			}
		}
		for k := range p.Labels {
			if keys.Has(k) {
				t.Fatalf("the mark is in the listed labels: %v", p.Labels)
			}
		}
	}
	if len(s.Tags) > 0 && !maps.Equal(p.Tags, s.Tags) {
		t.Fatalf("listed tags %v, want %v", p.Tags, s.Tags)
	}
}
