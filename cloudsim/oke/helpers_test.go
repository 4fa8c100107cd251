package oke_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
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
	emu.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
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
