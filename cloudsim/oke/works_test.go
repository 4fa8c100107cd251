package oke_test

import (
	"crypto/rsa"
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

// TestWorkRequestErrors: OKE explains failed work through the work
// request's errors and log (ListWorkRequestErrors, ListWorkRequestLogs),
// which ListWorkRequests finds by resource and status.
func TestWorkRequestErrors(t *testing.T) {
	e := newEnv(t, 0)
	ok := e.create(t, details("ok", 1, "Uocm:PHX-AD-1"))
	var created ce.CreateNodePoolResponse
	var err error
	if !simtest.FailOperation(e.emu, 1, 200, func(int) bool {
		created, err = e.client.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: details("f", 2, "Uocm:PHX-AD-1")})
		return err == nil
	}, nil) {
		t.Fatal("no create failed")
	}
	e.clock.Advance(time.Hour)
	wr, err := e.client.GetWorkRequest(ctx, ce.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	if err != nil {
		t.Fatal(err)
	}
	failed := *wr.Resources[0].Identifier
	list, err := e.client.ListWorkRequests(ctx, ce.ListWorkRequestsRequest{CompartmentId: common.String(compartment), ClusterId: common.String(clusterID),
		ResourceId: &failed, ResourceType: ce.ListWorkRequestsResourceTypeNodepool, Status: []string{"FAILED"}})
	if err != nil || len(list.Items) != 1 || list.Items[0].Status != ce.WorkRequestStatusFailed || *list.Items[0].Id != *created.OpcWorkRequestId {
		t.Fatalf("failed work requests of %s: %+v %v", failed, list.Items, err)
	}
	errs, err := e.client.ListWorkRequestErrors(ctx, ce.ListWorkRequestErrorsRequest{CompartmentId: common.String(compartment), WorkRequestId: created.OpcWorkRequestId})
	if err != nil || len(errs.Items) != 1 || *errs.Items[0].Code != "InternalError" || !strings.Contains(*errs.Items[0].Message, "internal error") {
		t.Fatalf("errors: %+v %v", errs.Items, err)
	}
	logs, err := e.client.ListWorkRequestLogs(ctx, ce.ListWorkRequestLogsRequest{CompartmentId: common.String(compartment), WorkRequestId: created.OpcWorkRequestId})
	if err != nil || len(logs.Items) != 2 || !strings.Contains(*logs.Items[1].Message, "failed") {
		t.Fatalf("logs: %+v %v", logs.Items, err)
	}
	// The pool that came up: its work request succeeded, with no errors.
	all, err := e.client.ListWorkRequests(ctx, ce.ListWorkRequestsRequest{CompartmentId: common.String(compartment), ResourceId: &ok})
	if err != nil || len(all.Items) != 1 || all.Items[0].Status != ce.WorkRequestStatusSucceeded {
		t.Fatalf("work requests of %s: %+v %v", ok, all.Items, err)
	}
	errs, err = e.client.ListWorkRequestErrors(ctx, ce.ListWorkRequestErrorsRequest{CompartmentId: common.String(compartment), WorkRequestId: all.Items[0].Id})
	if err != nil || len(errs.Items) != 0 {
		t.Fatalf("errors of a work request that succeeded: %+v %v", errs.Items, err)
	}
	// compartmentId is required; newest first with sortOrder DESC.
	resp, err := e.http.Get(e.url + "/20180222/workRequests")
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("unsigned list: %v", err)
	}
	desc, err := e.client.ListWorkRequests(ctx, ce.ListWorkRequestsRequest{CompartmentId: common.String(compartment), SortOrder: ce.ListWorkRequestsSortOrderDesc})
	if err != nil || len(desc.Items) != 2 || *desc.Items[0].Id != *created.OpcWorkRequestId {
		t.Fatalf("newest first: %+v %v", desc.Items, err)
	}
}

// TestLimits: OKE's service limits answer 400 LimitExceeded (OCI's API
// Errors), nodes per pool, node pools per cluster, nodes per cluster.
func TestLimits(t *testing.T) {
	emu := oke.New(oke.Options{Engine: sim.Options{Clock: sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))},
		Keys:   map[string]*rsa.PublicKey{oke.KeyID(tenancy, user, &testKey.PublicKey): &testKey.PublicKey},
		Limits: oke.Limits{NodePoolsPerCluster: 2, NodesPerPool: 5, NodesPerCluster: 8}})
	emu.AddCluster(oke.Cluster{ID: clusterID, Name: "prod", Region: region, CompartmentID: compartment, Version: "v1.31.1", ImageID: image, Subnets: subnets})
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	defer srv.Close()
	cl := clientFor(t, srv.URL, srv.Client(), testKey)
	create := func(name string, size int) error {
		_, err := cl.CreateNodePool(ctx, ce.CreateNodePoolRequest{CreateNodePoolDetails: details(name, size, "Uocm:PHX-AD-1")})
		return err
	}
	if err := create("big", 6); err == nil {
		t.Fatal("a pool over the nodes per pool")
	} else {
		serviceError(t, err, 400, "LimitExceeded")
	}
	if err := create("a", 5); err != nil {
		t.Fatal(err)
	}
	serviceError(t, create("b", 4), 400, "LimitExceeded") // 9 nodes in the cluster
	if err := create("b", 3); err != nil {
		t.Fatal(err)
	}
	serviceError(t, create("c", 0), 400, "LimitExceeded") // a third pool
}
