package providertest

import (
	"testing"

	"github.com/kpool/kpool/provider"
)

// testBusy: while a pool's create runs, a change to it and a second
// pool's create are either accepted or refused busy (IsBusy, and so
// transient), never as the spec's fault or a failure to back off from;
// once the operation ends, what was refused goes. The controllers follow
// a busy cluster at the pace of its operation (reconcile: TestBusyCluster).
func testBusy(t *testing.T, h *Harness) {
	first, second := h.Spec("busy-first"), h.Spec("busy-second")
	_, err := h.Driver.NodePoolCreate(ctx, h.Cluster, first)
	must(t, err)
	scaled := first
	scaled.Count *= 2 // still a multiple of its zones (GKE)
	refused := map[string]error{}
	if _, err := h.Driver.NodePoolUpdate(ctx, h.Cluster, scaled); err != nil {
		refused["update of the pool being created"] = err
	}
	if _, err := h.Driver.NodePoolCreate(ctx, h.Cluster, second); err != nil {
		refused["create beside it"] = err
	}
	for what, err := range refused {
		if !provider.IsBusy(err) || !provider.IsTransient(err) || provider.IsValidation(err) {
			t.Fatalf("%s while an operation runs: %v, want accepted or refused busy", what, err)
		}
		t.Logf("%s: refused busy: %v", what, err)
	}
	// Once the operation ends, each refused call goes (one at a time: on
	// GKE the update is itself an operation that holds the cluster).
	if _, ok := refused["update of the pool being created"]; ok {
		h.Settle()
		_, err = h.Driver.NodePoolUpdate(ctx, h.Cluster, scaled)
		must(t, err)
	}
	if _, ok := refused["create beside it"]; ok {
		h.Settle()
		_, err = h.Driver.NodePoolCreate(ctx, h.Cluster, second)
		must(t, err)
	}
	h.Settle()
	if p, ok := find(t, h, first.ProviderName); !ok || p.Count != scaled.Count {
		t.Fatalf("after the operations: %+v, want %d nodes", p, scaled.Count)
	}
	if _, ok := find(t, h, second.ProviderName); !ok {
		t.Fatalf("the second pool was never created")
	}
}
