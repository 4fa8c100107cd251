package aks_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

// A create answers 201 Creating; nodes come one at a time; the poller sees
// the operation succeed when the clock has moved on.
func TestCreateLifecycle(t *testing.T) {
	e := newEnv(t, aks.Options{})
	poller := e.create("workers", basic(3))
	if poller.Done() {
		t.Fatal("the poller is done before any time passed")
	}
	got := e.get("workers")
	pr := got.Properties
	if ptr.Deref(pr.ProvisioningState, "") != "Creating" || ptr.Deref(pr.Count, 0) != 3 {
		t.Fatalf("after the PUT: state %s count %d", ptr.Deref(pr.ProvisioningState, ""), ptr.Deref(pr.Count, 0))
	}
	if ptr.Deref(got.ID, "") != "/subscriptions/"+sub+"/resourcegroups/"+group+"/providers/Microsoft.ContainerService/managedClusters/"+cluster+"/agentPools/workers" ||
		ptr.Deref(got.Name, "") != "workers" || ptr.Deref(got.Type, "") != "Microsoft.ContainerService/managedClusters/agentPools" {
		t.Fatalf("id %s name %s type %s", ptr.Deref(got.ID, ""), ptr.Deref(got.Name, ""), ptr.Deref(got.Type, ""))
	}
	// The defaults AKS fills in.
	if *pr.OSDiskType != armcontainerservice.OSDiskTypeManaged || *pr.Mode != armcontainerservice.AgentPoolModeUser ||
		*pr.OSType != armcontainerservice.OSTypeLinux || *pr.Type != armcontainerservice.AgentPoolTypeVirtualMachineScaleSets ||
		*pr.ScaleSetPriority != armcontainerservice.ScaleSetPriorityRegular || *pr.OrchestratorVersion != "1.30.4" ||
		*pr.CurrentOrchestratorVersion != "1.30.4" || *pr.PowerState.Code != armcontainerservice.CodeRunning ||
		ptr.Deref(pr.NodeImageVersion, "") == "" || ptr.Deref(pr.ETag, "") == "" || *pr.OSDiskSizeGB != 128 || *pr.EnableAutoScaling {
		b, _ := json.Marshal(pr)
		t.Fatalf("defaults: %s", b)
	}
	st := e.state("workers")
	if st.Operation != "Creating" || st.ReadyNodes != 0 || st.OperationID == "" {
		t.Fatalf("state: operation %q ready %d", st.Operation, st.ReadyNodes)
	}
	// 30s + 3 x 10s: one node every 10s.
	for i, want := range []int{1, 2, 3} {
		e.clock.Advance(10 * time.Second)
		if st := e.state("workers"); st.ReadyNodes != want || st.Operation != "Creating" {
			t.Fatalf("after %ds: ready %d op %q, want %d Creating", (i+1)*10, st.ReadyNodes, st.Operation, want)
		}
	}
	if _, err := poller.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if poller.Done() {
		t.Fatal("done after 30s of a 60s operation")
	}
	e.clock.Advance(30 * time.Second)
	if _, err := poller.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if !poller.Done() {
		t.Fatal("not done after 60s")
	}
	res, err := poller.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(res.Properties.ProvisioningState, "") != "Succeeded" || ptr.Deref(res.Properties.Count, 0) != 3 {
		t.Fatalf("result: %s", ptr.Deref(res.Properties.ProvisioningState, ""))
	}
	if st := e.state("workers"); st.Operation != "" || st.ReadyNodes != 3 {
		t.Fatalf("settled: op %q ready %d", st.Operation, st.ReadyNodes)
	}
	creates := 0
	for _, c := range e.sim.Calls() {
		if c.Created {
			creates++
			if c.Method != http.MethodPut || c.Status != http.StatusCreated || !strings.HasSuffix(c.Path, "/agentPools/workers") {
				t.Fatalf("created call %+v", c)
			}
		}
	}
	if creates != 1 {
		t.Fatalf("%d creating calls", creates)
	}
}

// PollUntilDone works when each request moves the clock on.
func TestPollUntilDone(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pools := e.client(staticToken(token), ticking{next: e.http, clock: e.clock, step: 7 * time.Second})
	p, err := pools.BeginCreateOrUpdate(ctx, group, cluster, "auto", armcontainerservice.AgentPool{Properties: basic(2)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(res.Properties.ProvisioningState, "") != "Succeeded" {
		t.Fatalf("created: %s", ptr.Deref(res.Properties.ProvisioningState, ""))
	}
	d, err := pools.BeginDelete(ctx, group, cluster, "auto", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	_, err = pools.Get(ctx, group, cluster, "auto", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
}

// The list pages with absolute nextLinks and $skipToken.
func TestListPaging(t *testing.T) {
	e := newEnv(t, aks.Options{PageSize: 2})
	names := []string{"pool5", "pool1", "pool4", "pool2", "pool3"}
	for _, n := range names {
		e.create(n, basic(1))
	}
	pager := e.pools.NewListPager(group, cluster, nil)
	var got []string
	pages := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.Value) > 2 {
			t.Fatalf("page of %d", len(page.Value))
		}
		if page.NextLink != nil {
			u, err := url.Parse(*page.NextLink)
			if err != nil || !u.IsAbs() || u.Query().Get("$skipToken") == "" || u.Query().Get("api-version") != aks.APIVersion ||
				!strings.HasPrefix(*page.NextLink, e.ep.URL+"/subscriptions/") {
				t.Fatalf("nextLink %q", *page.NextLink)
			}
		}
		for _, ap := range page.Value {
			got = append(got, *ap.Name)
			if ptr.Deref(ap.Properties.ProvisioningState, "") != "Creating" {
				t.Fatalf("%s: %s", *ap.Name, ptr.Deref(ap.Properties.ProvisioningState, ""))
			}
		}
	}
	sort.Strings(names)
	if pages != 3 || strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("%d pages: %v", pages, got)
	}
	// An empty cluster lists an empty array.
	e.sim.AddCluster(sub, group, "empty", "westeurope", "1.30.4")
	page, err := e.pools.NewListPager(group, "empty", nil).NextPage(ctx)
	if err != nil || len(page.Value) != 0 || page.NextLink != nil {
		t.Fatalf("empty cluster: %v %v", page, err)
	}
}

// Mutable fields change in place; a count-only change is Scaling.
func TestUpdateMutable(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(2))
	e.settle()
	etag := ptr.Deref(e.get("workers").Properties.ETag, "")

	// Scale only.
	pr := e.get("workers").Properties
	pr.Count = ptr.To(int32(4))
	p, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := e.get("workers").Properties
	if ptr.Deref(got.ProvisioningState, "") != "Scaling" || ptr.Deref(got.Count, 0) != 4 || ptr.Deref(got.ETag, "") == etag {
		t.Fatalf("scaling: %s count %d etag %s", ptr.Deref(got.ProvisioningState, ""), ptr.Deref(got.Count, 0), ptr.Deref(got.ETag, ""))
	}
	if st := e.state("workers"); st.ReadyNodes != 2 {
		t.Fatalf("ready %d at the start of the scale", st.ReadyNodes)
	}
	e.clock.Advance(10 * time.Second)
	if st := e.state("workers"); st.ReadyNodes != 3 {
		t.Fatalf("ready %d 10s into the scale", st.ReadyNodes)
	}
	e.settle()
	if _, err := p.Poll(ctx); err != nil || !p.Done() {
		t.Fatalf("scale not done: %v", err)
	}

	// Labels, taints, tags, mode, autoscaling.
	pr = e.get("workers").Properties
	pr.NodeLabels = map[string]*string{"team": ptr.To("ml")}
	pr.NodeTaints = []*string{ptr.To("dedicated=ml:NoSchedule")}
	pr.Tags = map[string]*string{"cost-center": ptr.To("42")}
	pr.Mode = ptr.To(armcontainerservice.AgentPoolModeSystem)
	pr.EnableAutoScaling, pr.MinCount, pr.MaxCount = ptr.To(true), ptr.To(int32(1)), ptr.To(int32(6))
	pr.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{MaxSurge: ptr.To("33%")}
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
		t.Fatal(err)
	}
	if s := ptr.Deref(e.get("workers").Properties.ProvisioningState, ""); s != "Updating" {
		t.Fatalf("update: %s", s)
	}
	e.settle()
	got = e.get("workers").Properties
	if ptr.Deref(got.NodeLabels["team"], "") != "ml" || len(got.NodeTaints) != 1 || ptr.Deref(got.Tags["cost-center"], "") != "42" ||
		*got.Mode != armcontainerservice.AgentPoolModeSystem || !*got.EnableAutoScaling || *got.MinCount != 1 || *got.MaxCount != 6 ||
		*got.UpgradeSettings.MaxSurge != "33%" || ptr.Deref(got.ProvisioningState, "") != "Succeeded" {
		b, _ := json.Marshal(got)
		t.Fatalf("updated: %s", b)
	}

	// Autoscaling off, bounds left out: they go.
	pr = e.get("workers").Properties
	pr.EnableAutoScaling, pr.MinCount, pr.MaxCount = ptr.To(false), nil, nil
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
		t.Fatal(err)
	}
	got = e.get("workers").Properties
	if *got.EnableAutoScaling || got.MinCount != nil || got.MaxCount != nil {
		t.Fatalf("autoscaling off: %v %v %v", *got.EnableAutoScaling, got.MinCount, got.MaxCount)
	}
	e.settle()

	// A partial PUT keeps what it leaves out; an upgrade is Upgrading.
	e.sim.AddCluster(sub, group, cluster, "westeurope", "1.31.2") // the control plane moved on
	partial := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{OrchestratorVersion: ptr.To("1.31")}
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: partial}, nil); err != nil {
		t.Fatal(err)
	}
	got = e.get("workers").Properties
	if ptr.Deref(got.ProvisioningState, "") != "Upgrading" || ptr.Deref(got.CurrentOrchestratorVersion, "") != "1.30.4" || ptr.Deref(got.NodeLabels["team"], "") != "ml" || ptr.Deref(got.VMSize, "") != "Standard_D4s_v5" {
		b, _ := json.Marshal(got)
		t.Fatalf("upgrading: %s", b)
	}
	e.settle()
	if v := ptr.Deref(e.get("workers").Properties.CurrentOrchestratorVersion, ""); v != "1.31.2" {
		t.Fatalf("upgraded to %s", v)
	}
}

// Changing what AKS fixes at creation is refused, naming the property.
func TestPropertyChangeNotAllowed(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(2))
	e.settle()
	for _, tc := range []struct {
		prop   string
		change func(*armcontainerservice.ManagedClusterAgentPoolProfileProperties)
	}{
		{"vmSize", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			p.VMSize = ptr.To("Standard_D8s_v5")
		}},
		{"availabilityZones", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			p.AvailabilityZones = []*string{ptr.To("1")}
		}},
		{"osDiskSizeGB", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			p.OSDiskSizeGB = ptr.To(int32(256))
		}},
		{"osDiskType", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			p.OSDiskType = ptr.To(armcontainerservice.OSDiskTypeEphemeral)
		}},
		{"scaleSetPriority", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			p.ScaleSetPriority = ptr.To(armcontainerservice.ScaleSetPrioritySpot)
		}},
		{"maxPods", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) { p.MaxPods = ptr.To(int32(30)) }},
		{"osSKU", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
			p.OSSKU = ptr.To(armcontainerservice.OSSKUWindows2022)
		}},
	} {
		pr := e.get("workers").Properties
		tc.change(pr)
		_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil)
		re := wantError(t, err, http.StatusBadRequest, "PropertyChangeNotAllowed")
		if !strings.Contains(re.Error(), "Changing property 'properties."+tc.prop+"' is not allowed.") {
			t.Fatalf("%s: %v", tc.prop, re)
		}
	}
	if st := e.state("workers"); st.Operation != "" || ptr.Deref(st.Properties.VMSize, "") != "Standard_D4s_v5" {
		t.Fatalf("a refused PUT changed the pool: %+v", st)
	}
	// Sending the same immutable values back is no change.
	pr := e.get("workers").Properties
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
		t.Fatalf("a PUT of the pool as it is: %v", err)
	}
}

// A PUT or DELETE while an operation runs is 409 OperationNotAllowed.
func TestConflictDuringOperation(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(2))
	_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(3)}, nil)
	wantError(t, err, http.StatusConflict, "OperationNotAllowed")
	_, err = e.pools.BeginDelete(ctx, group, cluster, "workers", nil)
	wantError(t, err, http.StatusConflict, "OperationNotAllowed")
	e.settle()
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(3)}, nil); err != nil {
		t.Fatalf("after the operation: %v", err)
	}
}

// A delete is 202 with Azure-AsyncOperation and Location; the pool is
// Deleting, then gone.
func TestDelete(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(2))
	e.settle()
	resp, body := e.raw(http.MethodDelete, poolPath("workers")+"?api-version="+aks.APIVersion, nil, nil)
	if resp.StatusCode != http.StatusAccepted || len(body) != 0 {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	async, loc := resp.Header.Get("Azure-AsyncOperation"), resp.Header.Get("Location")
	if !strings.Contains(async, "/providers/Microsoft.ContainerService/locations/westeurope/operations/") ||
		!strings.Contains(loc, "/operationresults/") || !strings.HasPrefix(async, e.ep.URL) {
		t.Fatalf("headers: %q %q", async, loc)
	}
	if s := ptr.Deref(e.get("workers").Properties.ProvisioningState, ""); s != "Deleting" {
		t.Fatalf("state %s", s)
	}
	resp, body = e.raw(http.MethodGet, async, nil, nil)
	var st struct{ ID, Name, Status, StartTime, EndTime string }
	if err := json.Unmarshal(body, &st); err != nil || st.Status != "InProgress" || st.StartTime == "" || st.EndTime != "" || st.Name == "" || !strings.HasSuffix(st.ID, st.Name) {
		t.Fatalf("operation: %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.raw(http.MethodGet, loc, nil, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("location while running: %d", resp.StatusCode)
	}
	e.clock.Advance(10 * time.Second)
	if st := e.state("workers"); st.ReadyNodes != 1 || st.Operation != "Deleting" {
		t.Fatalf("10s in: ready %d op %s", st.ReadyNodes, st.Operation)
	}
	e.settle()
	_, body = e.raw(http.MethodGet, async, nil, nil)
	if err := json.Unmarshal(body, &st); err != nil || st.Status != "Succeeded" || st.EndTime == "" {
		t.Fatalf("operation done: %s", body)
	}
	if resp, _ := e.raw(http.MethodGet, loc, nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("location when done: %d", resp.StatusCode)
	}
	_, err := e.pools.Get(ctx, group, cluster, "workers", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	if _, ok := e.sim.Pool(sub, group, cluster, "workers"); ok {
		t.Fatal("the emulator still has the pool")
	}
	// Deleting what is gone succeeds (204), as ARM does.
	p, err := e.pools.BeginDelete(ctx, group, cluster, "workers", nil)
	if err != nil || !p.Done() {
		t.Fatalf("second delete: %v", err)
	}
}
