package aks_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

type poolProps = armcontainerservice.ManagedClusterAgentPoolProfileProperties

// An empty orchestratorVersion, as Microsoft's own examples send it
// (armcontainerservice's agentpools_client_example_test.go), is the
// cluster's version on a create and the pool's own on an update.
func TestEmptyOrchestratorVersion(t *testing.T) {
	e := newEnv(t, aks.Options{})
	pr := basic(1)
	pr.OrchestratorVersion = ptr.To("")
	e.create("workers", pr)
	e.settle()
	got := e.get("workers").Properties
	if v := ptr.Deref(got.CurrentOrchestratorVersion, ""); v != "1.30.4" {
		t.Fatalf("created at %q, want the cluster's 1.30.4", v)
	}
	got.OrchestratorVersion = ptr.To("")
	got.Count = ptr.To(int32(2))
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: got}, nil); err != nil {
		t.Fatalf("update with an empty version: %v", err)
	}
	e.settle()
	if got := e.get("workers").Properties; ptr.Deref(got.OrchestratorVersion, "") != "1.30.4" || ptr.Deref(got.Count, 0) != 2 {
		t.Fatalf("after the update: version %q, count %d", ptr.Deref(got.OrchestratorVersion, ""), ptr.Deref(got.Count, 0))
	}
}

// The last System pool of a cluster can neither become a User pool nor be
// deleted: every AKS cluster keeps one (learn.microsoft.com/azure/aks/use-system-pools).
func TestLastSystemPool(t *testing.T) {
	e := newEnv(t, aks.Options{})
	sys := basic(1)
	sys.Mode = ptr.To(armcontainerservice.AgentPoolModeSystem)
	e.create("sys", sys)
	e.settle()
	user := e.get("sys").Properties
	user.Mode = ptr.To(armcontainerservice.AgentPoolModeUser)
	_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "sys", armcontainerservice.AgentPool{Properties: user}, nil)
	if re := wantError(t, err, http.StatusBadRequest, "OperationNotAllowed"); !strings.Contains(re.Error(), "There has to be at least one system agent pool") {
		t.Fatalf("mode change: %v", re)
	}
	_, err = e.pools.BeginDelete(ctx, group, cluster, "sys", nil)
	wantError(t, err, http.StatusBadRequest, "OperationNotAllowed")
	if st := e.state("sys"); st.Operation != "" || ptr.Deref(st.Properties.Mode, "") != armcontainerservice.AgentPoolModeSystem {
		t.Fatalf("a refused call changed the pool: %+v", st)
	}
	// With another System pool, either is allowed.
	e.create("sys2", sys)
	e.settle()
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "sys", armcontainerservice.AgentPool{Properties: user}, nil); err != nil {
		t.Fatalf("mode change with another System pool: %v", err)
	}
	e.settle()
	if _, err := e.pools.BeginDelete(ctx, group, cluster, "sys2", nil); err == nil {
		t.Fatal("deleted the last System pool once sys became a User pool")
	}
}

// Creation-only properties beyond the basic ones: a PUT that changes one
// is 400 PropertyChangeNotAllowed naming it.
func TestCreationOnlyProperties(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(1))
	e.settle()
	for _, tc := range []struct {
		prop   string
		change func(*poolProps)
	}{
		{"kubeletConfig", func(p *poolProps) {
			p.KubeletConfig = &armcontainerservice.KubeletConfig{CPUManagerPolicy: ptr.To("static")}
		}},
		{"linuxOSConfig", func(p *poolProps) {
			p.LinuxOSConfig = &armcontainerservice.LinuxOSConfig{SwapFileSizeMB: ptr.To(int32(1500))}
		}},
		{"enableEncryptionAtHost", func(p *poolProps) { p.EnableEncryptionAtHost = ptr.To(true) }},
		{"enableUltraSSD", func(p *poolProps) { p.EnableUltraSSD = ptr.To(true) }},
		{"podSubnetID", func(p *poolProps) { p.PodSubnetID = ptr.To("/subscriptions/x/pods") }},
		{"vnetSubnetID", func(p *poolProps) { p.VnetSubnetID = ptr.To("/subscriptions/x/nodes") }},
		{"osType", func(p *poolProps) { p.OSType = ptr.To(armcontainerservice.OSTypeWindows) }},
		{"enableFIPS", func(p *poolProps) { p.EnableFIPS = ptr.To(true) }},
		{"gpuInstanceProfile", func(p *poolProps) { p.GpuInstanceProfile = ptr.To(armcontainerservice.GPUInstanceProfileMIG1G) }},
	} {
		pr := e.get("workers").Properties
		tc.change(pr)
		_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil)
		re := wantError(t, err, http.StatusBadRequest, "PropertyChangeNotAllowed")
		if !strings.Contains(re.Error(), "Changing property 'properties."+tc.prop+"' is not allowed.") {
			t.Fatalf("%s: %v", tc.prop, re)
		}
	}
	// An empty kubeletConfig on a pool that has none is no change.
	pr := e.get("workers").Properties
	pr.KubeletConfig = &armcontainerservice.KubeletConfig{}
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
		t.Fatalf("empty kubeletConfig: %v", err)
	}
}

// Between Ubuntu and Azure Linux the OS SKU changes in place: every node is
// reimaged onto the new SKU's node image (AKS's OS SKU migration;
// terraform-provider-azurerm's kubernetes_cluster_node_pool os_sku).
func TestOSSKUMigration(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(2))
	e.settle()
	pr := e.get("workers").Properties
	before := ptr.Deref(pr.NodeImageVersion, "")
	pr.OSSKU = ptr.To(armcontainerservice.OSSKUAzureLinux)
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "workers", armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
		t.Fatalf("Ubuntu to Azure Linux: %v", err)
	}
	if st := e.state("workers"); st.Operation != "Upgrading" || ptr.Deref(st.Properties.NodeImageVersion, "") != before {
		t.Fatalf("while migrating: %q, image %s", st.Operation, ptr.Deref(st.Properties.NodeImageVersion, ""))
	}
	e.settle()
	if got := ptr.Deref(e.get("workers").Properties.NodeImageVersion, ""); !strings.HasPrefix(got, "AKSAzureLinux") {
		t.Fatalf("after the migration the image is %s", got)
	}
}

// A node pool version the control plane's does not allow is 400
// NodePoolMcVersionIncompatible, worded as AKS words it (Microsoft's
// troubleshooting article of that name); the control plane runs 1.30.4.
func TestVersionSkew(t *testing.T) {
	e := newEnv(t, aks.Options{})
	for _, tc := range []struct{ version, why string }{
		{"1.31.0", "Minor version of node pool version 31 is bigger than control plane version 30."},
		{"1.31", "Minor version of node pool version 31 is bigger than control plane version 30."},
		{"1.30.5", "Patch version of node pool version 5 is bigger than control plane version 4."},
		{"1.27.9", "Minor version of node pool cannot be more than 2 versions less than control plane's version. Minor version of node pool is 27 and control plane is 30."},
	} {
		pr := basic(1)
		pr.OrchestratorVersion = ptr.To(tc.version)
		_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "skew", armcontainerservice.AgentPool{Properties: pr}, nil)
		re := wantError(t, err, http.StatusBadRequest, "NodePoolMcVersionIncompatible")
		if want := "Node pool version " + tc.version + " and control plane version 1.30.4 are incompatible. " + tc.why; !strings.Contains(re.Error(), want) {
			t.Errorf("%s: %v, want %q", tc.version, re, want)
		}
	}
	for _, ok := range []string{"1.28", "1.29.7", "1.30", "1.30.4"} {
		pr := basic(1)
		pr.OrchestratorVersion = ptr.To(ok)
		if _, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, "v"+strings.ReplaceAll(ok, ".", ""), armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
