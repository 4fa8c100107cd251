package aks_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
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
			p.OSSKU = ptr.To(armcontainerservice.OSSKUAzureLinux)
		}},
	} {
		pr := e.get("workers").Properties
		tc.change(pr)
		_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil)
		re := wantError(t, err, http.StatusBadRequest, "PropertyChangeNotAllowed")
		if !strings.Contains(re.Error(), "Changing property '"+tc.prop+"' is not allowed.") {
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

// Missing parents answer ARM's 404s.
func TestMissingParents(t *testing.T) {
	e := newEnv(t, aks.Options{})
	_, err := e.pools.Get(ctx, group, "nope", "workers", nil)
	wantError(t, err, http.StatusNotFound, "ParentResourceNotFound")
	_, err = e.pools.NewListPager(group, "nope", nil).NextPage(ctx)
	wantError(t, err, http.StatusNotFound, "ParentResourceNotFound")
	_, err = e.pools.BeginCreateOrUpdate(ctx, group, "nope", "workers", armcontainerservice.AgentPool{Properties: basic(1)}, nil)
	wantError(t, err, http.StatusNotFound, "ParentResourceNotFound")
	_, err = e.pools.BeginDelete(ctx, group, "nope", "workers", nil)
	wantError(t, err, http.StatusNotFound, "ParentResourceNotFound")
	_, err = e.pools.Get(ctx, "other-rg", cluster, "workers", nil)
	wantError(t, err, http.StatusNotFound, "ResourceGroupNotFound")
	cl, err := armcontainerservice.NewAgentPoolsClient("11111111-2222-3333-4444-555555555555", staticToken(token), clientOptions(e.ep.URL, e.http))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Get(ctx, group, cluster, "workers", nil)
	wantError(t, err, http.StatusNotFound, "SubscriptionNotFound")
	_, err = e.pools.Get(ctx, group, cluster, "workers", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")

	// Names compare case-insensitively, as ARM's do.
	e.create("workers", basic(1))
	if _, err := e.pools.Get(ctx, strings.ToUpper(group), strings.ToUpper(cluster), "workers", nil); err != nil {
		t.Fatalf("upper-case names: %v", err)
	}
}

// The managed cluster reads with the SDK's ManagedClustersClient.
func TestManagedCluster(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(1))
	mc, err := armcontainerservice.NewManagedClustersClient(sub, staticToken(token), clientOptions(e.ep.URL, e.http))
	if err != nil {
		t.Fatal(err)
	}
	got, err := mc.Get(ctx, group, cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(got.Name, "") != cluster || ptr.Deref(got.Location, "") != "westeurope" || ptr.Deref(got.Properties.ProvisioningState, "") != "Succeeded" ||
		ptr.Deref(got.Properties.KubernetesVersion, "") != "1.30.4" || len(got.Properties.AgentPoolProfiles) != 1 || ptr.Deref(got.Properties.AgentPoolProfiles[0].Name, "") != "workers" {
		b, _ := json.Marshal(got.ManagedCluster)
		t.Fatalf("cluster: %s", b)
	}
	_, err = mc.Get(ctx, group, "nope", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
}

// Every request needs a bearer token; with Options.Token, that one.
func TestAuthentication(t *testing.T) {
	e := newEnv(t, aks.Options{Token: token})
	resp, body := e.raw(http.MethodGet, poolPath("workers")+"?api-version="+aks.APIVersion, nil, map[string]string{"Authorization": ""})
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	if code, _ := armErrorOf(t, body); code != "AuthenticationFailed" {
		t.Fatalf("no token: %s", code)
	}
	bad := e.client(staticToken("wrong"), e.http)
	_, err := bad.Get(ctx, group, cluster, "workers", nil)
	wantError(t, err, http.StatusUnauthorized, "InvalidAuthenticationToken")
	_, err = bad.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(1)}, nil)
	wantError(t, err, http.StatusUnauthorized, "InvalidAuthenticationToken")
	if _, ok := e.sim.Pool(sub, group, cluster, "workers"); ok {
		t.Fatal("an unauthenticated PUT created a pool")
	}
	for _, c := range e.sim.Calls() {
		if c.Status != http.StatusUnauthorized {
			t.Fatalf("call %+v", c)
		}
	}
}

// A missing or malformed api-version is a 400.
func TestAPIVersion(t *testing.T) {
	e := newEnv(t, aks.Options{})
	resp, body := e.raw(http.MethodGet, poolPath("workers"), nil, nil)
	if code, _ := armErrorOf(t, body); resp.StatusCode != http.StatusBadRequest || code != "MissingApiVersionParameter" {
		t.Fatalf("missing: %d %s", resp.StatusCode, code)
	}
	resp, body = e.raw(http.MethodGet, poolPath("workers")+"?api-version=latest", nil, nil)
	if code, _ := armErrorOf(t, body); resp.StatusCode != http.StatusBadRequest || code != "InvalidApiVersionParameter" {
		t.Fatalf("malformed: %d %s", resp.StatusCode, code)
	}
}

// If-None-Match: * creates only; If-Match needs the current eTag.
func TestPreconditions(t *testing.T) {
	e := newEnv(t, aks.Options{})
	star := ptr.To("*")
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(1)},
		&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfNoneMatch: star}); err != nil {
		t.Fatalf("create with If-None-Match: %v", err)
	}
	e.settle()
	_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(2)},
		&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfNoneMatch: star})
	wantError(t, err, http.StatusPreconditionFailed, "PreconditionFailed")
	_, err = e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(2)},
		&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: ptr.To("stale")})
	wantError(t, err, http.StatusPreconditionFailed, "PreconditionFailed")
	_, err = e.pools.BeginDelete(ctx, group, cluster, "workers", &armcontainerservice.AgentPoolsClientBeginDeleteOptions{IfMatch: ptr.To("stale")})
	wantError(t, err, http.StatusPreconditionFailed, "PreconditionFailed")
	if n := ptr.Deref(e.state("workers").Properties.Count, 0); n != 1 {
		t.Fatalf("a failed precondition changed the count to %d", n)
	}
	etag := e.get("workers").Properties.ETag
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: basic(2)},
		&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: etag}); err != nil {
		t.Fatalf("If-Match with the eTag: %v", err)
	}
	if ptr.Deref(e.get("workers").Properties.ETag, "") == *etag {
		t.Fatal("the eTag did not change")
	}
}

// Beyond the rate limit the answer is 429 with Retry-After.
func TestRateLimit(t *testing.T) {
	e := newEnv(t, aks.Options{Engine: sim.Options{RateLimit: 1, Burst: 2}})
	for i := 0; i < 2; i++ {
		if _, err := e.pools.NewListPager(group, cluster, nil).NextPage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.pools.NewListPager(group, cluster, nil).NextPage(ctx)
	re := wantError(t, err, http.StatusTooManyRequests, "TooManyRequests")
	if ra := re.RawResponse.Header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After %q", ra)
	}
	e.clock.Advance(time.Second)
	if _, err := e.pools.NewListPager(group, cluster, nil).NextPage(ctx); err != nil {
		t.Fatalf("after a second: %v", err)
	}
	e.sim.SetRateLimit(0.001, 1)
	if _, err := e.pools.NewListPager(group, cluster, nil).NextPage(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = e.pools.NewListPager(group, cluster, nil).NextPage(ctx)
	re = wantError(t, err, http.StatusTooManyRequests, "TooManyRequests")
	if ra := re.RawResponse.Header.Get("Retry-After"); ra != "1000" {
		t.Fatalf("Retry-After %q at 0.001/s", ra)
	}
	e.sim.SetRateLimit(0, 0)
	for i := 0; i < 20; i++ {
		if _, err := e.pools.NewListPager(group, cluster, nil).NextPage(ctx); err != nil {
			t.Fatalf("unlimited: %v", err)
		}
	}
}

// A spot pool gets what AKS adds to spot pools, and keeps it on update.
func TestSpotPool(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pr := basic(2)
	pr.ScaleSetPriority = ptr.To(armcontainerservice.ScaleSetPrioritySpot)
	pr.NodeLabels = map[string]*string{"team": ptr.To("ml")}
	e.create("spot", pr)
	got := e.get("spot").Properties
	if ptr.Deref(got.NodeLabels["kubernetes.azure.com/scalesetpriority"], "") != "spot" || ptr.Deref(got.NodeLabels["team"], "") != "ml" ||
		len(got.NodeTaints) != 1 || *got.NodeTaints[0] != "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" ||
		ptr.Deref(got.ScaleSetEvictionPolicy, "") != armcontainerservice.ScaleSetEvictionPolicyDelete || ptr.Deref(got.SpotMaxPrice, 0) != -1 {
		b, _ := json.Marshal(got)
		t.Fatalf("spot pool: %s", b)
	}
	e.settle()
	got.NodeLabels = map[string]*string{"team": ptr.To("ai")}
	got.NodeTaints = []*string{}
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "spot", armcontainerservice.AgentPool{Properties: got}, nil); err != nil {
		t.Fatal(err)
	}
	got = e.get("spot").Properties
	if ptr.Deref(got.NodeLabels["kubernetes.azure.com/scalesetpriority"], "") != "spot" || ptr.Deref(got.NodeLabels["team"], "") != "ai" || len(got.NodeTaints) != 1 {
		b, _ := json.Marshal(got)
		t.Fatalf("updated spot pool: %s", b)
	}
	// A regular pool may not claim the spot label.
	bad := basic(1)
	bad.NodeLabels = map[string]*string{"kubernetes.azure.com/scalesetpriority": ptr.To("spot")}
	_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "fake", armcontainerservice.AgentPool{Properties: bad}, nil)
	wantError(t, err, http.StatusBadRequest, "InvalidParameter")
}

// Mutate changes a pool behind the client's back.
func TestMutate(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pr := basic(2)
	pr.NodeLabels = map[string]*string{"kompox.dev/node-pool": ptr.To("workers"), "team": ptr.To("ml")}
	e.create("workers", pr)
	e.settle()
	before := e.get("workers").Properties
	err := e.sim.Mutate(sub, group, cluster, "workers", func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
		delete(p.NodeLabels, "kompox.dev/node-pool")
		p.Count = ptr.To(int32(5))
	})
	if err != nil {
		t.Fatal(err)
	}
	after := e.get("workers").Properties
	if _, has := after.NodeLabels["kompox.dev/node-pool"]; has || ptr.Deref(after.Count, 0) != 5 || ptr.Deref(after.ETag, "") == ptr.Deref(before.ETag, "") {
		t.Fatalf("after Mutate: %v count %d", after.NodeLabels, ptr.Deref(after.Count, 0))
	}
	if st := e.state("workers"); st.ReadyNodes != 5 {
		t.Fatalf("ready %d", st.ReadyNodes)
	}
	if err := e.sim.Mutate(sub, group, cluster, "ghost", func(*armcontainerservice.ManagedClusterAgentPoolProfileProperties) {}); err == nil {
		t.Fatal("Mutate of a missing pool")
	}
}

// What AKS refuses is 400 InvalidParameter naming the property.
func TestValidation(t *testing.T) {
	e := newEnv(t, aks.Options{})
	type props = armcontainerservice.ManagedClusterAgentPoolProfileProperties
	system := ptr.To(armcontainerservice.AgentPoolModeSystem)
	for _, tc := range []struct {
		name, pool, prop string
		pr               *props
	}{
		{"count too high", "a", "count", basic(1001)},
		{"count negative", "a", "count", basic(-1)},
		{"system count 0", "a", "count", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(0)), Mode: system}},
		{"system min 0", "a", "minCount", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), Mode: system,
			EnableAutoScaling: ptr.To(true), MinCount: ptr.To(int32(0)), MaxCount: ptr.To(int32(3))}},
		{"autoscale without max", "a", "maxCount", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), EnableAutoScaling: ptr.To(true), MinCount: ptr.To(int32(1))}},
		{"autoscale without min", "a", "minCount", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), EnableAutoScaling: ptr.To(true), MaxCount: ptr.To(int32(1))}},
		{"min above max", "a", "minCount", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(3)), EnableAutoScaling: ptr.To(true), MinCount: ptr.To(int32(5)), MaxCount: ptr.To(int32(3))}},
		{"count outside bounds", "a", "count", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(9)), EnableAutoScaling: ptr.To(true), MinCount: ptr.To(int32(1)), MaxCount: ptr.To(int32(3))}},
		{"bounds without autoscaling", "a", "minCount", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), MinCount: ptr.To(int32(1)), MaxCount: ptr.To(int32(3))}},
		{"no vmSize", "a", "vmSize", &props{Count: ptr.To(int32(1))}},
		{"upper-case name", "Workers", "", basic(1)},
		{"name with a digit first", "1workers", "", basic(1)},
		{"name too long", "abcdefghijklm", "", basic(1)},
		{"zone 4", "a", "availabilityZones", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), AvailabilityZones: []*string{ptr.To("1"), ptr.To("4")}}},
		{"zone name", "a", "availabilityZones", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), AvailabilityZones: []*string{ptr.To("westeurope-1")}}},
		{"bad taint", "a", "nodeTaints", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), NodeTaints: []*string{ptr.To("oops")}}},
		{"bad label", "a", "nodeLabels", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), NodeLabels: map[string]*string{"bad key": ptr.To("x")}}},
		{"eviction on regular", "a", "scaleSetEvictionPolicy", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)),
			ScaleSetEvictionPolicy: ptr.To(armcontainerservice.ScaleSetEvictionPolicyDelete)}},
		{"newer than the control plane", "a", "orchestratorVersion", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), OrchestratorVersion: ptr.To("1.31.0")}},
		{"bad os type", "a", "osType", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), OSType: ptr.To(armcontainerservice.OSType("Plan9"))}},
		{"tag name with a slash", "a", "tags", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), Tags: map[string]*string{"team/web": ptr.To("x")}}},
		{"tag value too long", "a", "tags", &props{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(1)), Tags: map[string]*string{"team": ptr.To(strings.Repeat("x", 257))}}},
	} {
		_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, tc.pool, armcontainerservice.AgentPool{Properties: tc.pr}, nil)
		re := wantError(t, err, http.StatusBadRequest, "InvalidParameter")
		if tc.prop != "" && !strings.Contains(re.Error(), "properties."+tc.prop+" ") {
			t.Fatalf("%s: the error does not name properties.%s: %v", tc.name, tc.prop, re)
		}
	}
	if len(e.sim.Calls()) == 0 {
		t.Fatal("no calls logged")
	}
	for _, c := range e.sim.Calls() {
		if c.Created {
			t.Fatalf("a refused PUT created a pool: %+v", c)
		}
	}
	// A malformed body is InvalidRequestContent.
	resp, body := e.raw(http.MethodPut, poolPath("a")+"?api-version="+aks.APIVersion, json.RawMessage(`{"properties":{"count":"three"}}`), nil)
	if code, _ := armErrorOf(t, body); resp.StatusCode != http.StatusBadRequest || code != "InvalidRequestContent" {
		t.Fatalf("malformed: %d %s", resp.StatusCode, code)
	}
	// The valid edges are accepted: a user pool of 0 nodes, autoscaling from 0.
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "zero", armcontainerservice.AgentPool{Properties: basic(0)}, nil); err != nil {
		t.Fatalf("user pool of 0: %v", err)
	}
	auto := &props{VMSize: ptr.To("Standard_D4s_v5"), EnableAutoScaling: ptr.To(true), MinCount: ptr.To(int32(0)), MaxCount: ptr.To(int32(5))}
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "auto", armcontainerservice.AgentPool{Properties: auto}, nil); err != nil {
		t.Fatalf("autoscaling from 0: %v", err)
	}
	if n := ptr.Deref(e.get("auto").Properties.Count, 0); n != 0 {
		t.Fatalf("count defaulted to %d, want minCount", n)
	}
}

// Routes the emulator does not serve say so.
func TestUnsupported(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(1))
	resp, body := e.raw(http.MethodGet, poolPath("workers")+"/upgradeProfiles/default?api-version="+aks.APIVersion, nil, nil)
	if code, _ := armErrorOf(t, body); resp.StatusCode != http.StatusNotImplemented || code != "NotImplemented" {
		t.Fatalf("upgrade profile: %d %s", resp.StatusCode, code)
	}
	resp, body = e.raw(http.MethodPatch, poolPath("workers")+"?api-version="+aks.APIVersion, basic(1), nil)
	if code, _ := armErrorOf(t, body); resp.StatusCode != http.StatusMethodNotAllowed || code == "" {
		t.Fatalf("patch: %d %s", resp.StatusCode, code)
	}
	resp, _ = e.raw(http.MethodGet, "/nowhere?api-version="+aks.APIVersion, nil, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
}

// Concurrent clients see consistent answers (run with -race).
func TestConcurrentClients(t *testing.T) {
	e := newEnv(t, aks.Options{PageSize: 3, Engine: sim.Options{MaxCalls: 50}})
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		name := "c" + string(rune('a'+i))
		go func() {
			_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, name, armcontainerservice.AgentPool{Properties: basic(2)}, nil)
			for j := 0; err == nil && j < 5; j++ {
				pager := e.pools.NewListPager(group, cluster, nil)
				for err == nil && pager.More() {
					_, err = pager.NextPage(ctx)
				}
				e.clock.Advance(time.Second)
			}
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	e.settle()
	n := 0
	pager := e.pools.NewListPager(group, cluster, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Value {
			n++
			if ptr.Deref(ap.Properties.ProvisioningState, "") != "Succeeded" {
				t.Fatalf("%s: %s", *ap.Name, ptr.Deref(ap.Properties.ProvisioningState, ""))
			}
		}
	}
	if n != 8 {
		t.Fatalf("%d pools", n)
	}
	if calls := len(e.sim.Calls()); calls > 50 {
		t.Fatalf("the call log holds %d calls, more than MaxCalls", calls)
	}
}

// TestEntraClientSecret: a registered application gets access tokens from
// the emulator's Entra ID token endpoint with azidentity's own
// ClientSecretCredential, and ARM then takes only those: a wrong secret
// gets no token, and a token the emulator did not issue is refused.
func TestEntraClientSecret(t *testing.T) {
	const tenant, client, secret = "00000000-0000-0000-0000-0000000000aa", "00000000-0000-0000-0000-0000000000bb", "s3cret-of-the-app"
	e := newEnv(t, aks.Options{})
	e.sim.AddApp(aks.App{TenantID: tenant, ClientID: client, Secret: secret})
	cred := func(secret string) azcore.TokenCredential {
		c, err := azidentity.NewClientSecretCredential(tenant, client, secret, &azidentity.ClientSecretCredentialOptions{
			DisableInstanceDiscovery: true,
			ClientOptions: policy.ClientOptions{Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: e.ep.URL + "/"},
				Transport: e.http, Retry: policy.RetryOptions{MaxRetries: -1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := e.client(cred(secret), e.http).Get(ctx, group, cluster, "none", nil); err == nil {
		t.Fatal("a missing pool was found")
	} else {
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	}
	issued := e.sim.IssuedTokens()
	if len(issued) != 1 || issued[0] == "" {
		t.Fatalf("issued %q, want one token", issued)
	}
	if _, err := e.client(cred("wrong"), e.http).Get(ctx, group, cluster, "none", nil); err == nil || !strings.Contains(err.Error(), "AADSTS7000215") {
		t.Fatalf("a wrong secret: %v, want the token endpoint's refusal", err)
	}
	_, err := e.client(staticToken("not-issued"), e.http).Get(ctx, group, cluster, "none", nil)
	wantError(t, err, http.StatusUnauthorized, "InvalidAuthenticationToken")
	e.clock.Advance(2 * time.Hour) // the issued token expires
	_, err = e.client(staticToken(issued[0]), e.http).Get(ctx, group, cluster, "none", nil)
	wantError(t, err, http.StatusUnauthorized, "InvalidAuthenticationToken")
	if got := len(e.sim.IssuedTokens()); got != 1 {
		t.Fatalf("%d tokens issued, want 1", got)
	}
}
