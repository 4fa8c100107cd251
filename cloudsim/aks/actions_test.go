package aks_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

var fast = &runtime.PollUntilDoneOptions{Frequency: time.Millisecond}

// ticked is an SDK client whose requests move the clock, so that its
// pollers see operations end.
func (e *env) ticked() *armcontainerservice.AgentPoolsClient {
	return e.client(staticToken(token), ticking{next: e.http, clock: e.clock, step: 7 * time.Second})
}

// power sends a PUT of powerState alone, as Microsoft's examples
// AgentPools_Stop.json and AgentPools_Start.json do, and waits for it.
func power(t *testing.T, pools *armcontainerservice.AgentPoolsClient, name string, code armcontainerservice.Code) (armcontainerservice.AgentPool, error) {
	t.Helper()
	ap := armcontainerservice.AgentPool{Properties: &poolProps{PowerState: &armcontainerservice.PowerState{Code: ptr.To(code)}}}
	p, err := pools.BeginCreateOrUpdate(ctx, group, cluster, name, ap, nil)
	if err != nil {
		return armcontainerservice.AgentPool{}, err
	}
	res, err := p.PollUntilDone(ctx, fast)
	return res.AgentPool, err
}

// Stop and start: a PUT of powerState.code Stopped deallocates the nodes
// (provisioningState Stopping meanwhile) and keeps the count; Running
// brings them back. A System pool cannot be stopped.
func TestStopStart(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pools := e.ticked()
	e.create("workers", basic(3))
	e.settle()
	p, err := pools.BeginCreateOrUpdate(ctx, group, cluster, "workers",
		armcontainerservice.AgentPool{Properties: &poolProps{PowerState: &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeStopped)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := e.state("workers"); st.Operation != "Stopping" {
		t.Fatalf("while stopping: %q", st.Operation)
	}
	res, err := p.PollUntilDone(ctx, fast)
	if err != nil {
		t.Fatal(err)
	}
	st := e.state("workers")
	if ptr.Deref(res.Properties.PowerState.Code, "") != armcontainerservice.CodeStopped || st.ReadyNodes != 0 || ptr.Deref(st.Properties.Count, 0) != 3 {
		t.Fatalf("stopped: %+v, %d ready", res.Properties.PowerState, st.ReadyNodes)
	}
	if _, err := power(t, pools, "workers", armcontainerservice.CodeRunning); err != nil {
		t.Fatal(err)
	}
	if st := e.state("workers"); st.ReadyNodes != 3 || ptr.Deref(st.Properties.PowerState.Code, "") != armcontainerservice.CodeRunning {
		t.Fatalf("started: %d ready, %+v", st.ReadyNodes, st.Properties.PowerState)
	}
	sys := basic(1)
	sys.Mode = ptr.To(armcontainerservice.AgentPoolModeSystem)
	e.create("sys", sys)
	e.settle()
	_, err = power(t, pools, "sys", armcontainerservice.CodeStopped)
	wantError(t, err, http.StatusBadRequest, "OperationNotAllowed")
	_, err = power(t, pools, "sys", "Paused")
	wantError(t, err, http.StatusBadRequest, "InvalidParameter")
}

// Abort ends the operation in progress: the pool is Canceled where the
// operation left it, and the aborted operation's status is Canceled.
func TestAbort(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pools := e.ticked()
	e.create("workers", basic(1))
	e.settle()
	pr := e.get("workers").Properties
	pr.Count = ptr.To(int32(20))
	scale, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	ab, err := pools.BeginAbortLatestOperation(ctx, group, cluster, "workers", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ab.PollUntilDone(ctx, fast); err != nil {
		t.Fatalf("abort: %v", err)
	}
	st := e.state("workers")
	if st.Operation != "" || ptr.Deref(st.Properties.ProvisioningState, "") != "Canceled" || st.ReadyNodes <= 1 || st.ReadyNodes >= 20 {
		t.Fatalf("after abort: %q %s, %d ready", st.Operation, ptr.Deref(st.Properties.ProvisioningState, ""), st.ReadyNodes)
	}
	e.settle()
	if _, err := scale.PollUntilDone(ctx, fast); err == nil {
		t.Fatal("the aborted operation ended well")
	}
	if st := e.state("workers"); st.ReadyNodes >= 20 {
		t.Fatalf("the aborted scale went on: %d ready", st.ReadyNodes)
	}
	// Nothing in progress: nothing to abort.
	ab, err = pools.BeginAbortLatestOperation(ctx, group, cluster, "workers", nil)
	if err != nil || !ab.Done() {
		t.Fatalf("abort of nothing: %v", err)
	}
}

// upgradeNodeImageVersion moves the nodes to the latest node image that
// the upgrade profile names.
func TestUpgradeNodeImage(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pools := e.ticked()
	e.create("workers", basic(2))
	e.settle()
	if err := e.sim.Mutate(sub, group, cluster, "workers", func(p *poolProps) { p.NodeImageVersion = ptr.To("AKSUbuntu-2204gen2containerd-202401.01.0") }); err != nil {
		t.Fatal(err)
	}
	prof, err := e.pools.GetUpgradeProfile(ctx, group, cluster, "workers", nil)
	if err != nil {
		t.Fatal(err)
	}
	latest := ptr.Deref(prof.Properties.LatestNodeImageVersion, "")
	if latest == "" || latest == "AKSUbuntu-2204gen2containerd-202401.01.0" || ptr.Deref(prof.Name, "") != "default" {
		t.Fatalf("profile: %+v", prof.Properties)
	}
	up, err := pools.BeginUpgradeNodeImageVersion(ctx, group, cluster, "workers", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := e.state("workers"); st.Operation != "UpgradingNodeImageVersion" {
		t.Fatalf("while upgrading: %q", st.Operation)
	}
	res, err := up.PollUntilDone(ctx, fast)
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(res.Properties.NodeImageVersion, ""); got != latest {
		t.Fatalf("node image %q, want %q", got, latest)
	}
}

// deleteMachines removes the machines named and lowers the count; a name
// that is not one of the pool's machines is refused.
func TestDeleteMachines(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pools := e.ticked()
	e.create("workers", basic(3))
	e.settle()
	names := e.sim.Machines(sub, group, cluster, "workers")
	if len(names) != 3 {
		t.Fatalf("machines: %v", names)
	}
	_, err := pools.BeginDeleteMachines(ctx, group, cluster, "workers",
		armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: []*string{ptr.To("aks-other-1-vmss000000")}}, nil)
	wantError(t, err, http.StatusBadRequest, "InvalidParameter")
	del, err := pools.BeginDeleteMachines(ctx, group, cluster, "workers",
		armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: []*string{ptr.To(names[1]), ptr.To(names[2])}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := del.PollUntilDone(ctx, fast); err != nil {
		t.Fatal(err)
	}
	if st := e.state("workers"); ptr.Deref(st.Properties.Count, 0) != 1 || st.ReadyNodes != 1 {
		t.Fatalf("after deleting 2 of 3: count %d, %d ready", ptr.Deref(st.Properties.Count, 0), st.ReadyNodes)
	}
}

// The versions an agent pool may run, and the upgrades a pool has.
func TestVersions(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pr := basic(1)
	pr.OrchestratorVersion = ptr.To("1.29")
	e.create("old", pr)
	e.settle()
	av, err := e.pools.GetAvailableAgentPoolVersions(ctx, group, cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	def := ""
	for _, v := range av.Properties.AgentPoolVersions {
		got = append(got, ptr.Deref(v.KubernetesVersion, ""))
		if ptr.Deref(v.Default, false) {
			def = *v.KubernetesVersion
		}
	}
	if len(got) != 3 || got[2] != "1.30.4" || def != "1.30.4" {
		t.Fatalf("available: %v, default %q", got, def)
	}
	prof, err := e.pools.GetUpgradeProfile(ctx, group, cluster, "old", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ups := prof.Properties.Upgrades; ptr.Deref(prof.Properties.KubernetesVersion, "") != "1.29.0" || len(ups) != 1 || ptr.Deref(ups[0].KubernetesVersion, "") != "1.30.4" {
		t.Fatalf("upgrade profile: %+v", prof.Properties)
	}
	_, err = e.pools.GetUpgradeProfile(ctx, group, cluster, "nosuch", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
}
