package driver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// TestE2EReplacementSuccessorFails: a replacement whose successor fails at
// the emulator (an operation made to fail) stops with the old pool serving
// and its nodes Ready, the pool saying why; a rollback deletes the failed
// successor at the emulator and the old pool is as it was.
func TestE2EReplacementSuccessorFails(t *testing.T) {
	w := newCivoWorld(t)
	spec := `{"platform":{"civo":{"size":"g4s.kube.small"}},"nodeCount":2,"updateStrategy":{"replacement":"Surge"}}`
	p, err := w.Svc.CreateNodePool(w.Ctx(), service.NodePoolCreate{Name: "web", ClusterID: w.Cluster.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatal(err)
	}
	w.WaitFor(time.Minute, func() (bool, string) {
		got := w.Pool(p.ID).Status
		return got.Phase == kpool.PhaseReady && got.Nodes != nil && got.Nodes.Ready == 2, fmt.Sprintf("%s, nodes %+v", got.Phase, got.Nodes)
	})
	w.sim.FailNextOperations(1)
	if _, err := w.Svc.UpdateNodePool(w.Ctx(), p.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"platform":{"civo":{"size":"g4s.kube.medium"}}}`)}); err != nil {
		t.Fatal(err)
	}
	var to string
	w.WaitFor(time.Minute, func() (bool, string) {
		rp := w.Pool(p.ID).Status.Replacement
		if rp != nil {
			to = rp.To
		}
		return rp != nil && rp.Step == kpool.StepStopped, fmt.Sprintf("replacement %+v", rp)
	})
	got := w.Pool(p.ID)
	if got.ProviderName != p.ProviderName || got.Status.Phase != kpool.PhaseDegraded || !strings.Contains(got.Status.Message, to) {
		t.Fatalf("stopped: provider name %s, phase %s, message %q", got.ProviderName, got.Status.Phase, got.Status.Message)
	}
	if n := got.Status.Nodes; n == nil || n.Ready != 2 || n.Cordoned != 0 {
		t.Fatalf("the old pool's nodes after a failed successor: %+v", n)
	}
	if _, err := w.Svc.RollbackNodePool(w.Ctx(), p.ID); err != nil {
		t.Fatal(err)
	}
	w.WaitFor(time.Minute, func() (bool, string) {
		rp := w.Pool(p.ID).Status.Replacement
		return rp.Step == kpool.StepRolledBack, fmt.Sprintf("replacement %+v", rp)
	})
	pools, err := w.Drivers.Driver(w.Cluster.Spec.Platform.Type).NodePoolList(w.Ctx(), w.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range pools {
		if o.ProviderName == to {
			t.Errorf("the failed successor %s is left at the emulator", to)
		}
	}
	if _, err := w.Svc.RollbackNodePool(w.Ctx(), p.ID); !kpool.IsConflict(err) {
		t.Errorf("a second rollback: %v, want a conflict", err)
	}
}
