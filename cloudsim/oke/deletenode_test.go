package oke_test

import (
	"slices"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeNodeNames are the names of the cluster's Kubernetes nodes, sorted.
func (e *env) kubeNodeNames(t *testing.T) []string {
	t.Helper()
	l, err := e.kube(t).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range l.Items {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

func (e *env) deleteNode(pool, node string, decrement bool) (ce.DeleteNodeResponse, error) {
	return e.client.DeleteNode(ctx, ce.DeleteNodeRequest{NodePoolId: &pool, NodeId: &node, IsDecrementSize: common.Bool(decrement)})
}

// TestDeleteNode: DeleteNode with isDecrementSize removes that node of 3
// and no other, the size 2, through a work request; the node is DELETING
// and still in the cluster's Kubernetes API until the work request ends,
// then gone from both; asked again meanwhile it is 409, and the pool
// takes no update; a node of another pool, or none, is 404; without
// isDecrementSize (a replacement) it is not emulated.
func TestDeleteNode(t *testing.T) {
	e := newEnv(t, 0)
	web := e.create(t, details("web", 3, "Uocm:PHX-AD-1"))
	api := e.create(t, details("api", 1, "Uocm:PHX-AD-2"))
	e.clock.Advance(time.Hour)
	before := e.get(t, web).Nodes
	victim := *before[1].Id
	allNames := e.kubeNodeNames(t)

	if _, err := e.deleteNode(web, *e.get(t, api).Nodes[0].Id, true); err == nil {
		t.Fatal("a node of another pool was deleted")
	} else {
		serviceError(t, err, 404, "NotAuthorizedOrNotFound")
	}
	_, err := e.deleteNode(web, "ocid1.instance.oc1.phx.nosuch", true)
	serviceError(t, err, 404, "NotAuthorizedOrNotFound")
	_, err = e.deleteNode(web, victim, false)
	serviceError(t, err, 400, "InvalidParameter")
	_, err = e.client.DeleteNode(ctx, ce.DeleteNodeRequest{NodePoolId: &web, NodeId: &victim, IsDecrementSize: common.Bool(true),
		OverrideEvictionGraceDuration: common.String("PT2H")})
	serviceError(t, err, 400, "InvalidParameter")

	resp, err := e.deleteNode(web, victim, true)
	if err != nil || resp.RawResponse.StatusCode != 202 || resp.OpcWorkRequestId == nil {
		t.Fatalf("DeleteNode: %v %+v", err, resp)
	}
	np := e.get(t, web)
	if *np.NodeConfigDetails.Size != 2 || np.Nodes[1].LifecycleState != ce.NodeLifecycleStateDeleting || len(e.kubeNodeNames(t)) != len(allNames) {
		t.Fatalf("while deleting: size %d, nodes %+v", *np.NodeConfigDetails.Size, np.Nodes)
	}
	_, err = e.deleteNode(web, victim, true)
	serviceError(t, err, 409, "IncorrectState")
	_, err = e.client.UpdateNodePool(ctx, ce.UpdateNodePoolRequest{NodePoolId: &web, UpdateNodePoolDetails: ce.UpdateNodePoolDetails{
		NodeConfigDetails: &ce.UpdateNodePoolNodeConfigDetails{Size: common.Int(5)}}})
	serviceError(t, err, 409, "IncorrectState")

	e.clock.Advance(time.Hour)
	if wr := e.work(t, resp.OpcWorkRequestId); wr.Status != ce.WorkRequestStatusSucceeded || wr.OperationType != ce.WorkRequestOperationTypeNodepoolUpdate ||
		*wr.Resources[0].Identifier != web {
		t.Fatalf("work request: %+v", wr)
	}
	np = e.get(t, web)
	var left []string
	for _, n := range np.Nodes {
		left = append(left, *n.Id)
	}
	if *np.NodeConfigDetails.Size != 2 || !slices.Equal(left, []string{*before[0].Id, *before[2].Id}) {
		t.Fatalf("after: size %d, nodes %v", *np.NodeConfigDetails.Size, left)
	}
	want := slices.DeleteFunc(slices.Clone(allNames), func(n string) bool { return n == *before[1].PrivateIp })
	if got := e.kubeNodeNames(t); !slices.Equal(got, want) {
		t.Fatalf("Kubernetes nodes %v, want %v", got, want)
	}
	_, err = e.deleteNode(web, victim, true)
	serviceError(t, err, 404, "NotAuthorizedOrNotFound")

	// Two at once, as the autoscaler sends them.
	for _, n := range np.Nodes {
		if _, err := e.deleteNode(web, *n.Id, true); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(time.Hour)
	if np = e.get(t, web); *np.NodeConfigDetails.Size != 0 || len(np.Nodes) != 0 || np.LifecycleState != ce.NodePoolLifecycleStateActive {
		t.Fatalf("after deleting the rest: %+v", np)
	}
}
