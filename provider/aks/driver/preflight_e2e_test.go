package driver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	akssim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/reconcile/reconciletest"
	"github.com/kpool/kpool/service"
)

// TestE2EPreflight: the controllers learn what the demo AKS cluster
// offers; a create and its dry run with a VM size westeurope lacks are
// refused at once, naming the field and the fact; once the emulator stops
// answering (the cluster unreachable), the same create is taken, with a
// warning that preflight was skipped and why.
func TestE2EPreflight(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test (emulator, wall clock); -short leaves it out")
	}
	emu, err := akssim.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := reconciletest.New(t, emu, func(o provider.DriverOptions) provider.Driver { return driver.New(o) })
	w.Start(50*time.Millisecond, func(c *reconcile.Config) { c.UnreachableAfter = 100 * time.Millisecond })
	w.WaitFor(time.Minute, func() (bool, string) {
		f, err := w.Svc.ClusterFacts(w.Ctx(), w.Cluster.ID)
		return err == nil && f != nil, fmt.Sprint("no facts yet: ", err)
	})
	create := func(dry bool) (kpool.Plan, error) {
		_, plan, err := w.Svc.CreateNodePoolPlan(w.Ctx(), service.NodePoolCreate{Name: "bogus", ClusterID: w.Cluster.ID, DryRun: dry,
			Spec: json.RawMessage(`{"platform":{"azure":{"vmSize":"Standard_Bogus_v9"}},"nodeCount":1}`)})
		return plan, err
	}
	for _, dry := range []bool{true, false} {
		_, err := create(dry)
		var e *kpool.Error
		if !errors.As(err, &e) || e.Code != kpool.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Field != "spec.platform.azure.vmSize" ||
			!strings.Contains(e.Fields[0].Reason, "is not offered in westeurope (as AKS told kpool") {
			t.Fatalf("dry run %v: %v", dry, err)
		}
	}
	w.StopEmulator()
	w.WaitFor(time.Minute, func() (bool, string) {
		c, err := w.Svc.Cluster(w.Ctx(), w.Cluster.ID)
		return err == nil && c.Status.Unreachable() != "", "the cluster is still reachable"
	})
	// The service checks creates against its cached cluster, which may be
	// up to a minute behind the controllers: until then the create is
	// still refused.
	w.WaitFor(2*time.Minute, func() (bool, string) {
		plan, err := create(true)
		return err == nil && slices.ContainsFunc(plan.Warnings, func(s string) bool { return strings.Contains(s, "preflight skipped: cluster prod is not reachable") }),
			fmt.Sprintf("%v, warnings %q", err, plan.Warnings)
	})
}
