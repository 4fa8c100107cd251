package aks_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

// A PUT beyond the subscription's vCPU quota of the VM family in the
// region is 400 ErrCode_InsufficientVCPUQuota, as AKS answers it; one that
// lowers the usage, or a stopped pool, passes.
func TestVCPUQuota(t *testing.T) {
	e := newEnv(t, aks.Options{Limits: aks.Limits{FamilyVCPUs: 16}})
	e.create("workers", basic(3)) // Standard_D4s_v5: 12 vCPUs
	e.settle()
	_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "more", armcontainerservice.AgentPool{Properties: basic(2)}, nil)
	re := wantError(t, err, http.StatusBadRequest, "ErrCode_InsufficientVCPUQuota")
	if !strings.Contains(re.Error(), "Insufficient vcpu quota requested 8, remaining 4 for family standardDSv5Family for region westeurope.") {
		t.Fatalf("message: %v", re)
	}
	pr := e.get("workers").Properties
	pr.Count = ptr.To(int32(5))
	_, err = e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil)
	wantError(t, err, http.StatusBadRequest, "ErrCode_InsufficientVCPUQuota")
	// Another family has its own quota.
	other := basic(2)
	other.VMSize = ptr.To("Standard_E4as_v5")
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "mem", armcontainerservice.AgentPool{Properties: other}, nil); err != nil {
		t.Fatalf("another family: %v", err)
	}
	pr.Count = ptr.To(int32(4))
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
		t.Fatalf("up to the quota: %v", err)
	}
}

// A cluster has at most Limits.Pools agent pools (AKS: 100).
func TestPoolCountLimit(t *testing.T) {
	e := newEnv(t, aks.Options{Limits: aks.Limits{Pools: 2}})
	e.create("a", basic(1))
	e.create("b", basic(1))
	_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "c", armcontainerservice.AgentPool{Properties: basic(1)}, nil)
	if re := wantError(t, err, http.StatusBadRequest, "OperationNotAllowed"); !strings.Contains(re.Error(), "maximum of 2 agent pools") {
		t.Fatalf("message: %v", re)
	}
	e.settle()
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "a", armcontainerservice.AgentPool{Properties: basic(2)}, nil); err != nil {
		t.Fatalf("updating a pool at the limit: %v", err)
	}
}

// An upgrade's surge nodes count against the vCPU quota ("Surge nodes
// would also consume vcpu quota", AKS's answer): a pool at the quota
// cannot be upgraded with its maxSurge, and can once a node is freed.
func TestSurgeQuota(t *testing.T) {
	e := newEnv(t, aks.Options{Limits: aks.Limits{FamilyVCPUs: 16}})
	pr := basic(4) // 16 vCPUs, maxSurge 10%: one more node to upgrade
	pr.OrchestratorVersion = ptr.To("1.29")
	e.create("workers", pr)
	e.settle()
	up := e.get("workers").Properties
	up.OrchestratorVersion = ptr.To("1.30.4")
	_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: up}, nil)
	if re := wantError(t, err, http.StatusBadRequest, "ErrCode_InsufficientVCPUQuota"); !strings.Contains(re.Error(), "requested 4, remaining 0") {
		t.Fatalf("message: %v", re)
	}
	_, err = e.pools.BeginUpgradeNodeImageVersion(ctx, group, cluster, "workers", nil)
	wantError(t, err, http.StatusBadRequest, "ErrCode_InsufficientVCPUQuota")
	down := e.get("workers").Properties
	down.Count = ptr.To(int32(3))
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: down}, nil); err != nil {
		t.Fatal(err)
	}
	e.settle()
	up = e.get("workers").Properties
	up.OrchestratorVersion = ptr.To("1.30.4")
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: up}, nil); err != nil {
		t.Fatalf("upgrade of 3 nodes and a surge node: %v", err)
	}
}
