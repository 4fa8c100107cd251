package aks

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/internal/demo"
	"github.com/kpool/kpool/cloudsim/sim"
)

// Demo returns an emulator on an engine with options o that holds the
// demo cluster and its System pool nodepool1 (a real AKS cluster always
// has one; kpool does not own it).
func Demo(o sim.Options) (*Server, error) {
	s := New(Options{Engine: o})
	s.AddCluster(DemoSubscription, DemoResourceGroup, DemoCluster, DemoLocation, DemoVersion)
	system := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		VMSize: ptr.To("Standard_D2s_v5"), Count: ptr.To(int32(1)),
		Mode:              ptr.To(armcontainerservice.AgentPoolModeSystem),
		AvailabilityZones: []*string{ptr.To("1"), ptr.To("2"), ptr.To("3")},
	}
	if err := s.AddPool(DemoSubscription, DemoResourceGroup, DemoCluster, armcontainerservice.AgentPool{Name: ptr.To("nodepool1"), Properties: system}); err != nil {
		return nil, err
	}
	return s, nil
}

// Where the demo cluster is, and what it runs.
const (
	DemoSubscription  = "00000000-0000-0000-0000-000000000001"
	DemoResourceGroup = "kpool-demo"
	DemoCluster       = "demo-aks"
	DemoLocation      = "westeurope"
	DemoVersion       = "1.30.4"
)

// Clusters returns the emulator's clusters, by name, as kpool registers
// them when the emulator is served at endpoint (only Name and Spec set).
func (s *Server) Clusters(endpoint string) []kpool.Cluster {
	var out []kpool.Cluster
	for _, c := range s.sortedClusters() {
		az := &kpool.AzureCluster{SubscriptionID: c.subscription, ResourceGroup: c.resourceGroup, ClusterName: c.name, Location: c.location}
		out = append(out, demo.Cluster(c.name, endpoint, kpool.ClusterPlatform{Type: kpool.PlatformAzure, Azure: az}))
	}
	return out
}

// Identity returns AKS and the token credential that reaches the emulator
// when it takes any bearer token.
func (s *Server) Identity() (kpool.PlatformType, any) {
	return kpool.PlatformAzure, azcore.TokenCredential(Credential{})
}

// Describe writes, for people, how to reach the emulator's clusters when
// it is served at endpoint: authentication, api-version, and each
// cluster's coordinates, pools and agent-pool URL.
func (s *Server) Describe(w io.Writer, endpoint string) {
	auth := "any bearer token (Authorization: Bearer <token>)"
	apps := 0
	s.Do(func(time.Time) { apps = len(s.apps) })
	switch {
	case apps > 0:
		auth = "access tokens from its Entra ID token endpoint (authority " + endpoint + ", client secrets of the registered apps)"
	case s.token != "":
		auth = "the bearer token the emulator was given"
	}
	fmt.Fprintf(w, "  auth:      %s\n  api:       ARM, api-version %s (any well-formed api-version is answered alike)\n", auth, APIVersion)
	fmt.Fprintf(w, "  Go:        armcontainerservice.NewAgentPoolsClient(SUBSCRIPTION, cred, &arm.ClientOptions{ClientOptions: policy.ClientOptions{Cloud: "+
		"cloud.Configuration{Services: map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: %q, Audience: \"https://management.core.windows.net/\"}}}}})\n", endpoint)
	fmt.Fprintf(w, "  Node.js:   new ContainerServiceClient({getToken: async () => ({token: \"any\", expiresOnTimestamp: Date.now() + 3600e3})}, SUBSCRIPTION, {endpoint: %q})"+
		" with NODE_EXTRA_CA_CERTS=CA_FILE\n", endpoint)
	for _, c := range s.sortedClusters() {
		fmt.Fprintf(w, "  AKS cluster %s (%s, Kubernetes %s, pools: %s):\n", c.name, c.location, c.version, c.poolList)
		fmt.Fprintf(w, "    subscription:   %s\n    resource group: %s\n", c.subscription, c.resourceGroup)
		fmt.Fprintf(w, "    agent pools:    %s/subscriptions/%s/resourceGroups/%s/providers/Microsoft.ContainerService/managedClusters/%s/agentPools?api-version=%s\n",
			endpoint, c.subscription, c.resourceGroup, c.name, APIVersion)
		fmt.Fprintf(w, "    VM sizes:       %s/subscriptions/%s/providers/Microsoft.Compute/skus?api-version=%s&$filter=location eq '%s'\n",
			endpoint, c.subscription, SKUAPIVersion, c.location)
		fmt.Fprintf(w, "    Kubernetes API: %s (nodes follow the agent pools; kubeconfig: POST …/managedClusters/%s/listClusterUserCredential?api-version=%s, or the file kpool cloudsim writes)\n",
			s.kube.ServerURL(endpoint, kubeID(clusterKey(c.subscription, c.resourceGroup, c.name), c.name)), c.name, APIVersion)
	}
}

// clusterView is a cluster's description, read under the engine's lock.
type clusterView struct {
	subscription, resourceGroup, name, location, version string
	poolList                                             string // "nodepool1 (System), ..." or "none"
}

// poolList is the cluster's pools for people, with their modes:
// "nodepool1 (System), ...".
func (c *cluster) poolList() string {
	var pools []string
	for _, p := range c.sortedPools() {
		pools = append(pools, fmt.Sprintf("%s (%s)", p.name, ptr.Deref(p.props.Mode, "")))
	}
	return demo.List(pools)
}

// sortedClusters returns a view of every cluster, by name (then
// subscription and resource group).
func (s *Server) sortedClusters() []clusterView {
	var out []clusterView
	s.Do(func(time.Time) {
		for _, c := range s.clusters {
			out = append(out, clusterView{subscription: c.subscription, resourceGroup: c.resourceGroup, name: c.name,
				location: c.location, version: c.version, poolList: c.poolList()})
		}
	})
	slices.SortFunc(out, func(a, b clusterView) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.subscription, b.subscription), cmp.Compare(a.resourceGroup, b.resourceGroup))
	})
	return out
}
