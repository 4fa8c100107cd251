package driver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	gkesim "github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke/driver"
	"github.com/kpool/kpool/reconcile/reconciletest"
	"github.com/kpool/kpool/service"
)

// TestE2EReplacementSuccessorFails: a replacement whose successor's create
// fails at the emulator (an operation made to fail: the pool is left in
// ERROR, as GKE leaves a stocked-out create) stops with the old pool
// serving and its nodes Ready and schedulable, the pool saying why; a
// rollback deletes the failed successor at the emulator; a second rollback
// is a conflict.
func TestE2EReplacementSuccessorFails(t *testing.T) {
	emu, err := gkesim.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := reconciletest.New(t, emu, func(o provider.DriverOptions) provider.Driver { return driver.New(o) })
	w.Start(50 * time.Millisecond)
	spec := `{"nodeCount":2,"zones":["1"],"platform":{"gcp":{"machineType":"n2-standard-4"}},"updateStrategy":{"replacement":"Surge"}}`
	p, err := w.Svc.CreateNodePool(w.Ctx(), service.NodePoolCreate{Name: "web", ClusterID: w.Cluster.ID, Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatal(err)
	}
	w.WaitFor(time.Minute, func() (bool, string) {
		got := w.Pool(p.ID).Status
		return got.Phase == kpool.PhaseReady && got.ObservedGeneration == 1 && got.Nodes != nil && got.Nodes.Ready == 2,
			fmt.Sprintf("%s, nodes %+v", got.Phase, got.Nodes)
	})
	emu.FailNextOperations(1) // the next operation is the successor's create
	if _, err := w.Svc.UpdateNodePool(w.Ctx(), p.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"platform":{"gcp":{"preemptible":true}}}`)}); err != nil {
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
