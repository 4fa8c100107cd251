package oke_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/internal/simtest"
	"github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
)

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
		// A resource named in the body, not the path: 400 (OCI's API Errors).
		{"other cluster", func(d *ce.CreateNodePoolDetails) { d.ClusterId = common.String("ocid1.cluster.oc1.phx.nope") }, 400, "RelatedResourceNotAuthorizedOrNotFound"},
		{"unknown subnet", func(d *ce.CreateNodePoolDetails) {
			d.NodeConfigDetails.PlacementConfigs[0].SubnetId = common.String("ocid1.subnet.oc1.phx.nope")
		}, 400, "RelatedResourceNotAuthorizedOrNotFound"},
		{"over nodes per pool", func(d *ce.CreateNodePoolDetails) { d.NodeConfigDetails.Size = common.Int(1001) }, 400, "LimitExceeded"},
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
	var created ce.CreateNodePoolResponse
	if !simtest.FailOperation(e.emu, 1, 200, func(int) bool {
		created, err = e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: details("f", 2, "Uocm:PHX-AD-1")})
		return err == nil
	}, nil) {
		t.Fatal("no create failed")
	}
	wr, _ := e.client.GetWorkRequest(ctx, ce.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	id := *wr.Resources[0].Identifier
	e.clock.Advance(time.Hour)
	got, _ := e.client.GetNodePool(ctx, ce.GetNodePoolRequest{NodePoolId: &id})
	if got.LifecycleState != ce.NodePoolLifecycleStateFailed || !strings.Contains(*got.LifecycleDetails, "internal error") {
		t.Fatalf("failed create: %s %q", got.LifecycleState, *got.LifecycleDetails)
	}
	_, err = e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
		NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(1)}}})
	serviceError(t, err, 409, "IncorrectState")

	id = e.create(t, details("g", 1, "Uocm:PHX-AD-1"))
	e.clock.Advance(time.Hour)
	if !simtest.FailOperation(e.emu, 1, 200, func(i int) bool {
		_, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &id, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
			NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(4 + i%2)}}})
		return err == nil
	}, func(int, bool) { e.clock.Advance(2 * time.Minute) }) {
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
