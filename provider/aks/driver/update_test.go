package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// TestUpdateKeepsWhatAKSFixes: an update sends the pool back as AKS has
// it, so the creation-only properties someone set outside kpool (AKS
// answers PropertyChangeNotAllowed to any change of them) pass unchanged,
// and a stopped pool stays stopped (powerState is not kpool's to change).
func TestUpdateKeepsWhatAKSFixes(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := e.Harness(t).Spec("fixed")
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	if err := e.Sim.Mutate(subscription, group, clusterName, s.ProviderName, func(p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
		p.KubeletConfig = &armcontainerservice.KubeletConfig{CPUManagerPolicy: ptr.To("static")}
		p.LinuxOSConfig = &armcontainerservice.LinuxOSConfig{SwapFileSizeMB: ptr.To(int32(1500))}
		p.EnableEncryptionAtHost, p.EnableFIPS = ptr.To(true), ptr.To(true)
		p.PodSubnetID = ptr.To("/subscriptions/" + subscription + "/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/pods")
		p.PowerState = &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeStopped)}
	}); err != nil {
		t.Fatal(err)
	}
	s.Labels["tier"] = "batch"
	s.Count++
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatalf("update: %v", err)
	}
	e.Clock.Advance(time.Hour)
	st, _ := e.Sim.Pool(subscription, group, clusterName, s.ProviderName)
	pr := st.Properties
	if ptr.Deref(pr.NodeLabels["tier"], "") != "batch" || ptr.Deref(pr.Count, 0) != int32(s.Count) {
		t.Fatalf("the update was not applied: %+v", pr)
	}
	if ptr.Deref(pr.KubeletConfig.CPUManagerPolicy, "") != "static" || !ptr.Deref(pr.EnableFIPS, false) ||
		ptr.Deref(pr.PowerState.Code, "") != armcontainerservice.CodeStopped || st.ReadyNodes != 0 {
		t.Fatalf("the update changed what kpool does not manage: %+v, %d ready", pr, st.ReadyNodes)
	}
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := provider.Find(pools, s.ProviderName); p.State == provider.StateReady {
		t.Fatalf("a stopped pool is Ready: %+v", p)
	}
}

// TestRefusalsNameTheField: AKS's answers that name no property in the
// way InvalidParameter does still name the spec's field: a version the
// control plane does not allow (400 NodePoolMcVersionIncompatible) is
// spec.kubernetesVersion, making the last System pool a User pool is
// spec.mode.
func TestRefusalsNameTheField(t *testing.T) {
	e := newEmulated(t)
	ctx := context.Background()
	s := e.Harness(t).Spec("skew")
	s.Version = "1.31.0" // the control plane runs 1.30.4
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.kubernetesVersion" {
		t.Fatalf("a version newer than the control plane: %v, want a validation error on spec.kubernetesVersion", err)
	}
	sys := e.Harness(t).Spec("sys")
	sys.Mode = kpool.ModeSystem
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, sys); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	sys.Mode = kpool.ModeUser
	_, err = e.Driver.NodePoolUpdate(ctx, e.Cluster, sys)
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.mode" {
		t.Fatalf("the last System pool made a User pool: %v, want a validation error on spec.mode", err)
	}
}
