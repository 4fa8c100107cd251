package oke_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/kpool/kpool/cloudsim/oke"
)

// computeClient is Oracle's Compute client (core.ComputeClient) at the
// emulator, which serves its ListShapes at the same endpoint.
func (e *env) computeClient(t *testing.T) core.ComputeClient {
	t.Helper()
	cp := common.NewRawConfigurationProvider(tenancy, user, region, oke.Fingerprint(&testKey.PublicKey), oke.PEM(testKey), nil)
	cl, err := core.NewComputeClientWithConfigurationProvider(cp)
	if err != nil {
		t.Fatal(err)
	}
	cl.Host, cl.HTTPClient = e.url, e.http
	no := common.NoRetryPolicy()
	cl.Configuration.RetryPolicy, cl.Configuration.CircuitBreaker = &no, nil
	return cl
}

// listShapes lists every page of ListShapes in an availability domain
// ("" for the region).
func listShapes(t *testing.T, cl core.ComputeClient, ad string) map[string]core.Shape {
	t.Helper()
	out := map[string]core.Shape{}
	req := core.ListShapesRequest{CompartmentId: common.String(compartment)}
	if ad != "" {
		req.AvailabilityDomain = common.String(ad)
	}
	for {
		resp, err := cl.ListShapes(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range resp.Items {
			out[*sh.Shape] = sh
		}
		if resp.OpcNextPage == nil {
			return out
		}
		req.Page = resp.OpcNextPage
	}
}

// TestListShapes: Compute's ListShapes through Oracle's SDK, paged (page
// size 2), with each shape's published figures, a flexible shape's
// defaults and bounds, and the shapes an availability domain lacks.
func TestListShapes(t *testing.T) {
	e := newEnv(t, 2)
	cl := e.computeClient(t)
	all := listShapes(t, cl, "")
	tests := []struct {
		name       string
		ad         string
		shape      string
		ocpus, mem float32
		gpus       int
		flex       bool
		absent     bool
	}{
		{"flexible defaults", "Uocm:PHX-AD-1", "VM.Standard.E4.Flex", 1, 16, 0, true, false},
		{"fixed shape", "Uocm:PHX-AD-2", "VM.Standard2.4", 4, 60, 0, false, false},
		{"gpu shape", "Uocm:PHX-AD-1", "BM.GPU.A10.4", 64, 1024, 4, false, false},
		{"gpu shape not in AD-2", "Uocm:PHX-AD-2", "BM.GPU.A10.4", 0, 0, 0, false, true},
		{"arm not in AD-3", "Uocm:PHX-AD-3", "VM.Standard.A1.Flex", 0, 0, 0, false, true},
		{"region lists every shape", "", "VM.Standard.A1.Flex", 1, 6, 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := all
			if tc.ad != "" {
				got = listShapes(t, cl, tc.ad)
			}
			sh, ok := got[tc.shape]
			if ok == tc.absent {
				t.Fatalf("%s in %q: listed %v", tc.shape, tc.ad, ok)
			}
			if tc.absent {
				return
			}
			if *sh.Ocpus != tc.ocpus || *sh.MemoryInGBs != tc.mem || *sh.Gpus != tc.gpus || *sh.IsFlexible != tc.flex {
				t.Errorf("%s: ocpus %v memory %v gpus %v flexible %v", tc.shape, *sh.Ocpus, *sh.MemoryInGBs, *sh.Gpus, *sh.IsFlexible)
			}
			if tc.flex && (sh.OcpuOptions == nil || sh.MemoryOptions == nil) {
				t.Errorf("%s: a flexible shape without its bounds", tc.shape)
			}
		})
	}
	// GetNodePoolOptions lists the catalogue's shapes.
	opts, err := e.client.GetNodePoolOptions(ctx, ce.GetNodePoolOptionsRequest{NodePoolOptionId: common.String(clusterID)})
	if err != nil {
		t.Fatal(err)
	}
	for name := range all {
		if !slices.Contains(opts.Shapes, name) {
			t.Errorf("nodePoolOptions lacks %s: %v", name, opts.Shapes)
		}
	}
}

// TestListShapesRefused: a compartment without clusters, a key that may
// not read Compute (SetShapesDenied) 404 NotAuthorizedOrNotFound; no
// compartmentId 400 MissingParameter; an availability domain of no
// cluster 400 InvalidParameter.
func TestListShapesRefused(t *testing.T) {
	e := newEnv(t, 100)
	cl := e.computeClient(t)
	for _, tc := range []struct {
		name   string
		req    core.ListShapesRequest
		deny   bool
		status int
		code   string
	}{
		{"unknown compartment", core.ListShapesRequest{CompartmentId: common.String("ocid1.compartment.oc1..other")}, false, http.StatusNotFound, "NotAuthorizedOrNotFound"},
		{"denied", core.ListShapesRequest{CompartmentId: common.String(compartment)}, true, http.StatusNotFound, "NotAuthorizedOrNotFound"},
		{"no compartment", core.ListShapesRequest{CompartmentId: common.String("")}, false, http.StatusBadRequest, "MissingParameter"},
		{"unknown AD", core.ListShapesRequest{CompartmentId: common.String(compartment), AvailabilityDomain: common.String("Uocm:PHX-AD-9")},
			false, http.StatusBadRequest, "InvalidParameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.emu.SetShapesDenied(tc.deny)
			_, err := cl.ListShapes(ctx, tc.req)
			serviceError(t, err, tc.status, tc.code)
		})
	}
}

// TestShapeNotOffered: OKE refuses a node pool whose shape the region
// does not offer, or that a placement's availability domain lacks, on
// create and on an update that changes the shape (400 InvalidParameter,
// "Invalid nodeShape…").
func TestShapeNotOffered(t *testing.T) {
	e := newEnv(t, 100)
	unknown := details("bogus", 1, "Uocm:PHX-AD-1")
	unknown.NodeShape, unknown.NodeShapeConfig = common.String("VM.Standard.Bogus9"), nil
	notInAD := details("gpu", 1, "Uocm:PHX-AD-1", "Uocm:PHX-AD-2")
	notInAD.NodeShape, notInAD.NodeShapeConfig = common.String("BM.GPU.A10.4"), nil
	for _, d := range []ce.CreateNodePoolDetails{unknown, notInAD} {
		_, err := e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: d})
		serviceError(t, err, http.StatusBadRequest, "InvalidParameter")
		if !strings.HasPrefix(err.(common.ServiceError).GetMessage(), "Invalid nodeShape") {
			t.Errorf("%s: %v", *d.Name, err)
		}
	}
	ok := details("gpu", 1, "Uocm:PHX-AD-1")
	ok.NodeShape, ok.NodeShapeConfig = common.String("BM.GPU.A10.4"), nil
	id := e.create(t, ok)
	e.clock.Advance(time.Hour)
	_, err := e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: common.String(id),
		UpdateNodePoolDetails: ce.UpdateNodePoolDetails{NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{
			PlacementConfigs: []ce.NodePoolPlacementConfigDetails{{AvailabilityDomain: common.String("Uocm:PHX-AD-2"), SubnetId: common.String(subnets["Uocm:PHX-AD-2"])}}}}})
	serviceError(t, err, http.StatusBadRequest, "InvalidParameter")
	_, err = e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: common.String(id),
		UpdateNodePoolDetails: ce.UpdateNodePoolDetails{NodeShape: common.String("VM.Standard.Bogus9")}})
	serviceError(t, err, http.StatusBadRequest, "InvalidParameter")
}
