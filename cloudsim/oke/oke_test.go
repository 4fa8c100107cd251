package oke_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
)

const (
	tenancy     = "ocid1.tenancy.oc1..aaaaaaaatesttenancy"
	user        = "ocid1.user.oc1..aaaaaaaatestuser"
	compartment = "ocid1.compartment.oc1..aaaaaaaatest"
	clusterID   = "ocid1.cluster.oc1.phx.aaaaaaaatestcluster"
	region      = "us-phoenix-1"
	image       = "ocid1.image.oc1.phx.aaaaaaaatestimage"
)

var subnets = map[string]string{
	"Uocm:PHX-AD-1": "ocid1.subnet.oc1.phx.aaaaaaaaad1",
	"Uocm:PHX-AD-2": "ocid1.subnet.oc1.phx.aaaaaaaaad2",
	"Uocm:PHX-AD-3": "ocid1.subnet.oc1.phx.aaaaaaaaad3",
}

var testKey = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}()

type env struct {
	emu    *oke.Server
	clock  *sim.ManualClock
	client ce.ContainerEngineClient
	url    string
	http   *http.Client
}

var ctx = context.Background()

func clientFor(t *testing.T, url string, hc *http.Client, key *rsa.PrivateKey) ce.ContainerEngineClient {
	t.Helper()
	cp := common.NewRawConfigurationProvider(tenancy, user, region, oke.Fingerprint(&key.PublicKey), oke.PEM(key), nil)
	cl, err := ce.NewContainerEngineClientWithConfigurationProvider(cp)
	if err != nil {
		t.Fatal(err)
	}
	cl.Host = url
	cl.HTTPClient = hc
	no := common.NoRetryPolicy()
	cl.Configuration.RetryPolicy = &no
	cl.Configuration.CircuitBreaker = nil
	return cl
}

func newEnv(t *testing.T, pageSize int) *env {
	t.Helper()
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := oke.New(oke.Options{Engine: sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second},
		Keys: map[string]*rsa.PublicKey{oke.KeyID(tenancy, user, &testKey.PublicKey): &testKey.PublicKey}, PageSize: pageSize})
	emu.AddCluster(oke.Cluster{ID: clusterID, Name: "prod", Region: region, CompartmentID: compartment, Version: "v1.31.1", ImageID: image, Subnets: subnets})
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &env{emu: emu, clock: clock, client: clientFor(t, srv.URL, srv.Client(), testKey), url: srv.URL, http: srv.Client()}
}

func details(name string, size int, ads ...string) ce.CreateNodePoolDetails {
	var pcs []ce.NodePoolPlacementConfigDetails
	for _, ad := range ads {
		pcs = append(pcs, ce.NodePoolPlacementConfigDetails{AvailabilityDomain: common.String(ad), SubnetId: common.String(subnets[ad])})
	}
	return ce.CreateNodePoolDetails{
		CompartmentId: common.String(compartment), ClusterId: common.String(clusterID), Name: common.String(name),
		NodeShape: common.String("VM.Standard.E4.Flex"), KubernetesVersion: common.String("v1.31.1"),
		NodeShapeConfig:   &ce.CreateNodeShapeConfigDetails{Ocpus: common.Float32(2), MemoryInGBs: common.Float32(16)},
		NodeSourceDetails: ce.NodeSourceViaImageDetails{ImageId: common.String(image), BootVolumeSizeInGBs: common.Int64(60)},
		NodeConfigDetails: &ce.CreateNodePoolNodeConfigDetails{Size: common.Int(size), PlacementConfigs: pcs},
		InitialNodeLabels: []ce.KeyValue{{Key: common.String("team"), Value: common.String("ml")}},
		FreeformTags:      map[string]string{"cost-center": "42"},
	}
}

func (e *env) create(t *testing.T, d ce.CreateNodePoolDetails) string {
	t.Helper()
	resp, err := e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OpcWorkRequestId == nil || resp.OpcRequestId == nil || *resp.OpcRequestId == "" {
		t.Fatalf("create answered no work request or request id: %+v", resp)
	}
	wr, err := e.client.GetWorkRequest(ctx, ce.GetWorkRequestRequest{WorkRequestId: resp.OpcWorkRequestId})
	if err != nil {
		t.Fatal(err)
	}
	if wr.OperationType != ce.WorkRequestOperationTypeNodepoolCreate || len(wr.Resources) != 1 {
		t.Fatalf("work request: %+v", wr.WorkRequest)
	}
	return *wr.Resources[0].Identifier
}

func serviceError(t *testing.T, err error, status int, code string) {
	t.Helper()
	se, ok := common.IsServiceError(err)
	if !ok || se.GetHTTPStatusCode() != status || se.GetCode() != code || se.GetOpcRequestID() == "" {
		t.Fatalf("got %v, want %d %s with an opc-request-id", err, status, code)
	}
}

func TestLifecycle(t *testing.T) {
	e := newEnv(t, 0)
	id := e.create(t, details("workers", 3, "Uocm:PHX-AD-1", "Uocm:PHX-AD-2"))
	got, err := e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if err != nil {
		t.Fatal(err)
	}
	if got.LifecycleState != ce.NodePoolLifecycleStateCreating || got.Etag == nil || len(got.Nodes) != 1 || got.Nodes[0].LifecycleState != ce.NodeLifecycleStateCreating {
		t.Fatalf("just created: %s etag %v nodes %+v", got.LifecycleState, got.Etag, got.Nodes)
	}
	e.clock.Advance(15 * time.Second)
	got, _ = e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if len(got.Nodes) != 2 || got.Nodes[0].LifecycleState != ce.NodeLifecycleStateActive || got.Nodes[1].LifecycleState != ce.NodeLifecycleStateCreating {
		t.Fatalf("half way: %+v", got.Nodes)
	}
	e.clock.Advance(time.Hour)
	got, _ = e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if got.LifecycleState != ce.NodePoolLifecycleStateActive || len(got.Nodes) != 3 {
		t.Fatalf("settled: %s %d nodes", got.LifecycleState, len(got.Nodes))
	}
	ads := map[string]int{}
	ids := map[string]bool{}
	for _, n := range got.Nodes {
		ads[*n.AvailabilityDomain]++
		ids[*n.Id] = true
		if n.LifecycleState != ce.NodeLifecycleStateActive || *n.KubernetesVersion != "v1.31.1" || *n.SubnetId != subnets[*n.AvailabilityDomain] || *n.NodePoolId != id {
			t.Fatalf("node %+v", n)
		}
	}
	if ads["Uocm:PHX-AD-1"] != 2 || ads["Uocm:PHX-AD-2"] != 1 || len(ids) != 3 {
		t.Fatalf("nodes by AD %v, %d ids", ads, len(ids))
	}
	if src, ok := got.NodeSourceDetails.(ce.NodeSourceViaImageDetails); !ok || *src.BootVolumeSizeInGBs != 60 || *got.NodeShapeConfig.Ocpus != 2 {
		t.Fatalf("config: %+v %+v", got.NodeSourceDetails, got.NodeShapeConfig)
	}

	// An update with a stale etag is refused; with the current one it runs
	// and holds the pool.
	stale := *got.Etag
	resp, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, IfMatch: &stale,
		UpdateNodePoolDetails: ce.UpdateNodePoolDetails{NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(4)}, KubernetesVersion: common.String("v1.31.1"),
			NodeShape: common.String("VM.Standard.E5.Flex")}})
	if err != nil || resp.OpcWorkRequestId == nil {
		t.Fatalf("update: %v", err)
	}
	_, err = e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, IfMatch: &stale,
		UpdateNodePoolDetails: ce.UpdateNodePoolDetails{NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(5)}}})
	serviceError(t, err, 412, "PreconditionFailed")
	_, err = e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id,
		UpdateNodePoolDetails: ce.UpdateNodePoolDetails{NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(5)}}})
	serviceError(t, err, 409, "IncorrectState")
	_, err = e.client.DeleteNodePool(ctx, ce.DeleteNodePoolRequest{NodePoolId: &id})
	serviceError(t, err, 409, "IncorrectState")
	e.clock.Advance(time.Hour)
	st, _ := e.emu.PoolOf(clusterID, "workers")
	if st.LifecycleState != ce.NodePoolLifecycleStateActive || len(st.Nodes) != 4 || *st.NodeShape != "VM.Standard.E5.Flex" {
		t.Fatalf("after the update: %s %d %s", st.LifecycleState, len(st.Nodes), *st.NodeShape)
	}
	// New nodes only: the old nodes keep their shape.
	shapes := map[string]int{}
	for _, c := range st.NodeConfigs {
		shapes[c.Shape]++
	}
	if shapes["VM.Standard.E4.Flex"] != 3 || shapes["VM.Standard.E5.Flex"] != 1 {
		t.Fatalf("node shapes %v", shapes)
	}
	// A downgrade is refused.
	_, err = e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id,
		UpdateNodePoolDetails: ce.UpdateNodePoolDetails{KubernetesVersion: common.String("v1.30.10")}})
	serviceError(t, err, 400, "InvalidParameter")

	if _, err := e.client.DeleteNodePool(ctx, ce.DeleteNodePoolRequest{NodePoolId: &id}); err != nil {
		t.Fatal(err)
	}
	got, _ = e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if got.LifecycleState != ce.NodePoolLifecycleStateDeleting {
		t.Fatalf("deleting: %s", got.LifecycleState)
	}
	e.clock.Advance(time.Hour)
	got, _ = e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if got.LifecycleState != ce.NodePoolLifecycleStateDeleted || len(got.Nodes) != 0 {
		t.Fatalf("deleted: %s", got.LifecycleState)
	}
	e.clock.Advance(2 * time.Hour)
	_, err = e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	serviceError(t, err, 404, "NotAuthorizedOrNotFound")
	creates := 0
	for _, c := range e.emu.Calls() {
		if c.Created {
			creates++
			if !strings.HasSuffix(c.Resource, id) {
				t.Fatalf("created resource %q", c.Resource)
			}
		}
	}
	if creates != 1 {
		t.Fatalf("%d creates logged", creates)
	}
}

func TestPaging(t *testing.T) {
	e := newEnv(t, 2)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		e.create(t, details(n, 1, "Uocm:PHX-AD-1"))
	}
	var names []string
	var page *string
	pages := 0
	for {
		resp, err := e.client.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(compartment), ClusterId: common.String(clusterID), Page: page})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, p := range resp.Items {
			names = append(names, *p.Name)
		}
		if page = resp.OpcNextPage; page == nil {
			break
		}
	}
	if strings.Join(names, ",") != "a,b,c,d,e" || pages != 3 {
		t.Fatalf("%d pages: %v", pages, names)
	}
	_, err := e.client.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(compartment), Page: common.String("bogus")})
	serviceError(t, err, 400, "InvalidParameter")
}

func TestSignature(t *testing.T) {
	e := newEnv(t, 0)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	wrong := clientFor(t, e.url, e.http, other)
	_, err := wrong.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(compartment)})
	serviceError(t, err, 401, "NotAuthenticated")
	// The right key id with another key: the signature does not verify.
	cp := common.NewRawConfigurationProvider(tenancy, user, region, oke.Fingerprint(&testKey.PublicKey), oke.PEM(other), nil)
	forged, _ := ce.NewContainerEngineClientWithConfigurationProvider(cp)
	forged.Host, forged.HTTPClient = e.url, e.http
	no := common.NoRetryPolicy()
	forged.Configuration.RetryPolicy, forged.Configuration.CircuitBreaker = &no, nil
	_, err = forged.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(compartment)})
	serviceError(t, err, 401, "NotAuthenticated")
	// No signature at all.
	resp, err := e.http.Get(e.url + "/20180222/nodePools?compartmentId=" + compartment)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("opc-request-id") == "" {
		t.Fatalf("unsigned: %d", resp.StatusCode)
	}
	// A body changed after signing.
	hc := &http.Client{Transport: tamper{e.http.Transport}}
	tampered := clientFor(t, e.url, hc, testKey)
	_, err = tampered.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: details("x", 1, "Uocm:PHX-AD-1")})
	serviceError(t, err, 401, "NotAuthenticated")
}

// tamper changes a request's body after it was signed.
type tamper struct{ base http.RoundTripper }

func (t tamper) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		body := bytes.Replace(b.Bytes(), []byte(`"x"`), []byte(`"y"`), 1)
		r.Body = ioNopCloser{bytes.NewReader(body)}
	}
	return t.base.RoundTrip(r)
}

type ioNopCloser struct{ *bytes.Reader }

func (ioNopCloser) Close() error { return nil }

func TestRefusals(t *testing.T) {
	e := newEnv(t, 0)
	for _, tc := range []struct {
		name   string
		change func(d *ce.CreateNodePoolDetails)
		status int
		code   string
	}{
		{"no shape config on flex", func(d *ce.CreateNodePoolDetails) { d.NodeShapeConfig = nil }, 400, "InvalidParameter"},
		{"bad version", func(d *ce.CreateNodePoolDetails) { d.KubernetesVersion = common.String("1.31") }, 400, "InvalidParameter"},
		{"too new", func(d *ce.CreateNodePoolDetails) { d.KubernetesVersion = common.String("v1.32.1") }, 400, "InvalidParameter"},
		{"unknown AD", func(d *ce.CreateNodePoolDetails) {
			d.NodeConfigDetails.PlacementConfigs[0].AvailabilityDomain = common.String("Uocm:PHX-AD-9")
		}, 400, "InvalidParameter"},
		{"small boot volume", func(d *ce.CreateNodePoolDetails) {
			d.NodeSourceDetails = ce.NodeSourceViaImageDetails{ImageId: common.String(image), BootVolumeSizeInGBs: common.Int64(10)}
		}, 400, "InvalidParameter"},
		{"bad label", func(d *ce.CreateNodePoolDetails) {
			d.InitialNodeLabels = []ce.KeyValue{{Key: common.String("-x"), Value: common.String("y")}}
		}, 400, "InvalidParameter"},
		{"no source", func(d *ce.CreateNodePoolDetails) { d.NodeSourceDetails = nil }, 400, "MissingParameter"},
		{"other cluster", func(d *ce.CreateNodePoolDetails) { d.ClusterId = common.String("ocid1.cluster.oc1.phx.nope") }, 404, "NotAuthorizedOrNotFound"},
	} {
		d := details("bad", 1, "Uocm:PHX-AD-1")
		tc.change(&d)
		_, err := e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: d})
		if se, ok := common.IsServiceError(err); !ok || se.GetHTTPStatusCode() != tc.status || se.GetCode() != tc.code {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	_, err := e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: common.String("ocid1.nodepool.oc1.phx.nope")})
	serviceError(t, err, 404, "NotAuthorizedOrNotFound")
	resp, err := e.http.Get(e.url + "/20180222/nodePools")
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("unsigned list: %v", err)
	}
	resp.Body.Close()
}

func TestUnknownFieldsRefused(t *testing.T) {
	e := newEnv(t, 0)
	hc := &http.Client{Transport: addField{e.http.Transport}}
	cl := clientFor(t, e.url, hc, testKey)
	_, err := cl.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: details("x", 1, "Uocm:PHX-AD-1")})
	// The field is added before signing, so the signature holds and the
	// body is refused for what it says.
	serviceError(t, err, 400, "InvalidParameter")
	if !strings.Contains(err.Error(), "nodeCount") {
		t.Fatalf("the unknown field is not named: %v", err)
	}
}

// addField adds an unknown member to a body and signs it again.
type addField struct{ base http.RoundTripper }

func (a addField) RoundTrip(r *http.Request) (*http.Response, error) {
	var b bytes.Buffer
	_, _ = b.ReadFrom(r.Body)
	body := bytes.Replace(b.Bytes(), []byte(`{`), []byte(`{"nodeCount":3,`), 1)
	r.Body = ioNopCloser{bytes.NewReader(body)}
	r.ContentLength = int64(len(body))
	r.Header.Del("Authorization")
	r.Header.Del("X-Content-Sha256")
	cp := common.NewRawConfigurationProvider(tenancy, user, region, oke.Fingerprint(&testKey.PublicKey), oke.PEM(testKey), nil)
	if err := common.DefaultRequestSigner(cp).Sign(r); err != nil {
		return nil, err
	}
	return a.base.RoundTrip(r)
}

func TestThrottlingAndFaults(t *testing.T) {
	e := newEnv(t, 0)
	e.emu.SetRateLimit(0.001, 1)
	list := func() error {
		_, err := e.client.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(compartment)})
		return err
	}
	if err := list(); err != nil {
		t.Fatal(err)
	}
	resp, err := e.client.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(compartment)})
	serviceError(t, err, 429, "TooManyRequests")
	if resp.RawResponse == nil || resp.RawResponse.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	e.emu.SetRateLimit(0, 0)

	// A create that fails ends FAILED and takes no update; an update that
	// fails ends NEEDS_ATTENTION, and heals.
	var id string
	for i := 0; i < 200 && id == ""; i++ {
		e.emu.SetFaultRate(1)
		resp, err := e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: details("f", 2, "Uocm:PHX-AD-1")})
		e.emu.SetFaultRate(0)
		calls := e.emu.Calls()
		if err == nil && calls[len(calls)-1].Fault == sim.FaultFail {
			wr, _ := e.client.GetWorkRequest(ctx, ce.GetWorkRequestRequest{WorkRequestId: resp.OpcWorkRequestId})
			id = *wr.Resources[0].Identifier
		}
	}
	if id == "" {
		t.Fatal("no create failed")
	}
	e.clock.Advance(time.Hour)
	got, _ := e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if got.LifecycleState != ce.NodePoolLifecycleStateFailed || !strings.Contains(*got.LifecycleDetails, "capacity") {
		t.Fatalf("failed create: %s %q", got.LifecycleState, *got.LifecycleDetails)
	}
	_, err = e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
		NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(1)}}})
	serviceError(t, err, 409, "IncorrectState")

	id = e.create(t, details("g", 1, "Uocm:PHX-AD-1"))
	e.clock.Advance(time.Hour)
	failed := false
	for i := 0; i < 200 && !failed; i++ {
		e.emu.SetFaultRate(1)
		_, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
			NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(4 + i%2)}}})
		e.emu.SetFaultRate(0)
		calls := e.emu.Calls()
		failed = err == nil && calls[len(calls)-1].Fault == sim.FaultFail
		if !failed {
			e.clock.Advance(2 * time.Minute)
		}
	}
	if !failed {
		t.Fatal("no update failed")
	}
	// The update takes 40 or 60 s; its failure heals as long again after.
	e.clock.Advance(65 * time.Second)
	got, _ = e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if got.LifecycleState != ce.NodePoolLifecycleStateNeedsAttention || *got.LifecycleDetails == "" {
		t.Fatalf("failed update: %s", got.LifecycleState)
	}
	e.clock.Advance(time.Hour)
	got, _ = e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if got.LifecycleState != ce.NodePoolLifecycleStateActive || len(got.Nodes) != *got.NodeConfigDetails.Size {
		t.Fatalf("healed: %s %d nodes", got.LifecycleState, len(got.Nodes))
	}
}

func TestRetryTokenAndDemo(t *testing.T) {
	e := newEnv(t, 0)
	d := details("once", 1, "Uocm:PHX-AD-1")
	for range 2 {
		if _, err := e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: d, OpcRetryToken: common.String("tok-1")}); err != nil {
			t.Fatal(err)
		}
	}
	resp, _ := e.client.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(compartment), Name: common.String("once")})
	if len(resp.Items) != 1 {
		t.Fatalf("a retried create made %d pools", len(resp.Items))
	}

	demo, err := oke.Demo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(demo)
	srv.StartTLS()
	defer srv.Close()
	cl, _ := ce.NewContainerEngineClientWithConfigurationProvider(oke.DemoConfigProvider())
	cl.Host, cl.HTTPClient = srv.URL, srv.Client()
	list, err := cl.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(oke.DemoCompartment), ClusterId: common.String(oke.DemoClusterID)})
	if err != nil || len(list.Items) != 1 || *list.Items[0].Name != "pool1" || list.Items[0].LifecycleState != ce.NodePoolLifecycleStateActive {
		t.Fatalf("demo: %+v %v", list.Items, err)
	}
	cs := demo.Clusters(srv.URL)
	if len(cs) != 1 || cs[0].Spec.Platform.OCI.ClusterID != oke.DemoClusterID || len(cs[0].Spec.Platform.OCI.Subnets) != 3 {
		t.Fatalf("clusters: %+v", cs)
	}
	var b strings.Builder
	demo.Describe(&b, srv.URL)
	if !strings.Contains(b.String(), "pool1") || strings.Contains(b.String(), "PRIVATE KEY") {
		t.Fatalf("describe:\n%s", b.String())
	}
	opts, err := cl.GetNodePoolOptions(ctx, ce.GetNodePoolOptionsRequest{NodePoolOptionId: common.String(oke.DemoClusterID)})
	if err != nil || len(opts.KubernetesVersions) == 0 || opts.KubernetesVersions[0] != oke.DemoVersion {
		t.Fatalf("options: %+v %v", opts.KubernetesVersions, err)
	}
}
