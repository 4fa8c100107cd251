package oke_test

import (
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
)

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
	serviceError(t, err, 412, "NoEtagMatch")
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
