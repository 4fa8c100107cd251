package cloudsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/aks"
)

// The demo cluster Run adds to the AKS emulator.
const (
	DemoSubscription  = "00000000-0000-0000-0000-000000000001"
	DemoResourceGroup = "kpool-demo"
	DemoCluster       = "demo-aks"
	DemoLocation      = "westeurope"
	DemoVersion       = "1.30.4"
)

// Simulated durations of the emulators Run starts (on the wall clock).
const (
	demoOperationTime = 5 * time.Second
	demoNodeTime      = 2 * time.Second
)

// providers are the emulators Run knows, by name.
var providers = map[string]func() http.Handler{
	"aks": func() http.Handler {
		s := aks.New(aks.Options{OperationTime: demoOperationTime, NodeTime: demoNodeTime, MaxCalls: 100000})
		s.AddCluster(DemoSubscription, DemoResourceGroup, DemoCluster, DemoLocation, DemoVersion)
		// A real AKS cluster always has a System pool; kpool does not own it.
		_ = s.AddPool(DemoSubscription, DemoResourceGroup, DemoCluster, armcontainerservice.AgentPool{
			Name: ptr("nodepool1"),
			Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
				VMSize: ptr("Standard_D2s_v5"), Count: ptr(int32(1)),
				Mode:              ptr(armcontainerservice.AgentPoolModeSystem),
				AvailabilityZones: []*string{ptr("1"), ptr("2"), ptr("3")},
			},
		})
		return s
	},
}

// Known returns the names of the emulators Run can start.
func Known() []string {
	names := make([]string, 0, len(providers))
	for n := range providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Emulators are running emulators and what a kpool needs to use them.
type Emulators struct {
	*TLSEndpoint
	// Clusters are the demo clusters, one per emulated provider, as kpool
	// registers them (their endpoint is the emulators').
	Clusters []Demo
	names    []string
}

// Demo is a demo cluster in an emulator.
type Demo struct {
	Name string
	Spec kpool.ClusterSpec
}

// Start serves the named emulators (nil or empty: all of them) over TLS on
// listen (empty: 127.0.0.1:0) until Shutdown. ARM paths are absolute, so
// AKS is mounted at the root.
func Start(listen string, names []string) (*Emulators, error) {
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	var want []string
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			want = append(want, n)
		}
	}
	if len(want) == 0 {
		want = Known()
	}
	mux := http.NewServeMux()
	seen := map[string]bool{}
	for _, n := range want {
		mk, ok := providers[n]
		if !ok {
			return nil, fmt.Errorf("cloudsim: unknown provider %q; known: %s", n, strings.Join(Known(), ", "))
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		mux.Handle("/", mk()) // only AKS exists, at the root
	}
	ep, _, err := TLSServer(mux, listen)
	if err != nil {
		return nil, err
	}
	e := &Emulators{TLSEndpoint: ep, names: want}
	if seen["aks"] {
		e.Clusters = append(e.Clusters, Demo{Name: DemoCluster, Spec: kpool.ClusterSpec{
			Endpoint: ep.URL,
			Platform: kpool.ClusterPlatform{Type: kpool.PlatformAzure, Azure: &kpool.AzureCluster{
				SubscriptionID: DemoSubscription, ResourceGroup: DemoResourceGroup, ClusterName: DemoCluster, Location: DemoLocation}},
		}})
	}
	return e, nil
}

// Run serves the named emulators until ctx ends (see Start). It writes
// the certificate authority's PEM to caFile when one is given, and prints
// the endpoint, the CA file and the demo cluster's coordinates to out.
func Run(ctx context.Context, listen string, names []string, caFile string, out io.Writer) error {
	if out == nil {
		out = io.Discard
	}
	e, err := Start(listen, names)
	if err != nil {
		return err
	}
	ep := e.TLSEndpoint
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ep.Shutdown(sctx)
	}()
	caNote := caFile
	if caFile != "" {
		if err := os.WriteFile(caFile, ep.CAPEM, 0o644); err != nil {
			return fmt.Errorf("cloudsim: writing the CA certificate: %w", err)
		}
	} else {
		caNote = "(not written: pass --ca-file to get the PEM clients must trust)"
	}
	register, _ := json.MarshalIndent(map[string]any{"name": DemoCluster, "spec": e.Clusters[0].Spec}, "  ", "  ")
	fmt.Fprintf(out, `kpool cloudsim: serving %s
  endpoint:  %s
  CA file:   %s
  auth:      any bearer token (Authorization: Bearer <token>)
  timing:    an operation takes %s plus %s per node added or removed
AKS demo cluster (api-version %s):
  subscription:   %s
  resource group: %s
  cluster:        %s (%s, Kubernetes %s, System pool nodepool1)
  agent pools:    %s/subscriptions/%s/resourceGroups/%s/providers/Microsoft.ContainerService/managedClusters/%s/agentPools?api-version=%s
Register it with kpool:
  %s
`, strings.Join(e.names, ", "), ep.URL, caNote, demoOperationTime, demoNodeTime, aks.APIVersion,
		DemoSubscription, DemoResourceGroup, DemoCluster, DemoLocation, DemoVersion,
		ep.URL, DemoSubscription, DemoResourceGroup, DemoCluster, aks.APIVersion, register)
	select {
	case <-ctx.Done():
		return nil
	case <-ep.Done():
		if err := ep.Err(); err != nil {
			return fmt.Errorf("cloudsim: %w", err)
		}
		return nil
	}
}

func ptr[T any](v T) *T { return &v }
