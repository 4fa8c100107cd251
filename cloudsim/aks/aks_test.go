package aks_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
)

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

// DeletePool deletes a pool behind the client's back: gone from the next
// read; a pool in an operation, or a missing one, is an error.
func TestDeletePool(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(2))
	if err := e.sim.DeletePool(sub, group, cluster, "workers"); err == nil {
		t.Fatal("DeletePool of a pool being created")
	}
	e.settle()
	if err := e.sim.DeletePool(sub, group, cluster, "workers"); err != nil {
		t.Fatal(err)
	}
	if _, found := e.sim.Pool(sub, group, cluster, "workers"); found {
		t.Fatal("the pool is still there")
	}
	if _, err := e.pools.Get(t.Context(), group, cluster, "workers", nil); err == nil {
		t.Fatal("GET found the deleted pool")
	}
	if err := e.sim.DeletePool(sub, group, cluster, "workers"); err == nil {
		t.Fatal("DeletePool of a missing pool")
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
	resp, body := e.raw(http.MethodPost, poolPath("workers")+"/completeUpgrade?api-version="+aks.APIVersion, nil, nil)
	if code, _ := armErrorOf(t, body); resp.StatusCode != http.StatusNotImplemented || code != "NotImplemented" {
		t.Fatalf("completeUpgrade: %d %s", resp.StatusCode, code)
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
