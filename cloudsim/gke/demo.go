package gke

import (
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"
	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/internal/demo"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The demo cluster Demo holds: a regional cluster, its nodes in three of
// us-central1's four zones.
const (
	DemoProject  = "kpool-demo"
	DemoLocation = "us-central1"
	DemoCluster  = "demo-gke"
	DemoVersion  = "1.30.5-gke.1014001"
)

// Demo returns an emulator on an engine with options o that holds the
// demo cluster and its default-pool (one e2-medium node per zone, as GKE
// creates a cluster; kpool does not own it).
func Demo(o sim.Options) (*Server, error) {
	s := New(Options{Engine: o})
	s.AddCluster(DemoProject, DemoLocation, DemoCluster, DemoVersion)
	cfg := &container.NodeConfig{MachineType: "e2-medium", DiskSizeGb: 100, DiskType: "pd-balanced"}
	if err := s.AddPool(DemoProject, DemoLocation, DemoCluster, container.NodePool{Name: "default-pool", InitialNodeCount: 1, Config: cfg}); err != nil {
		return nil, err
	}
	return s, nil
}

// Clusters returns the emulator's clusters, by name, as kpool registers
// them when the emulator is served at endpoint (only Name and Spec set).
func (s *Server) Clusters(endpoint string) []kpool.Cluster {
	var out []kpool.Cluster
	for _, c := range s.views() {
		gcp := &kpool.GCPCluster{ProjectID: c.project, Location: c.location, ClusterName: c.name}
		out = append(out, demo.Cluster(c.name, endpoint, kpool.ClusterPlatform{Type: kpool.PlatformGCP, GCP: gcp}))
	}
	return out
}

// Describe writes, for people, how to reach the emulator's clusters when
// it is served at endpoint, and how to point Google's own clients at it:
// the Go client, gcloud and the Node.js client.
func (s *Server) Describe(w io.Writer, endpoint string) {
	auth := "any OAuth2 bearer token (Authorization: Bearer <token>); no Google sign-in is needed"
	if s.token != "" {
		auth = "only the bearer token the emulator was given"
	}
	u, _ := url.Parse(endpoint)
	fmt.Fprintf(w, "  auth:      %s\n  api:       GKE v1 REST at %s/ (Compute Engine instanceGroupManagers.get and machineTypes at %s/compute/v1/)\n", auth, endpoint, endpoint)
	fmt.Fprintf(w, "  Go:        container.NewService(ctx, option.WithEndpoint(%q), option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: \"x\"})))\n", endpoint+"/")
	fmt.Fprintf(w, "  gcloud:    gcloud config set api_endpoint_overrides/container %s/ ; gcloud config set auth/access_token_file FILE (any token in it) ;\n"+
		"             gcloud config set core/custom_ca_certs_file CA_FILE ; gcloud container node-pools list --cluster CLUSTER --location LOCATION --project PROJECT\n", endpoint)
	fmt.Fprintf(w, "  Node.js:   new ClusterManagerClient({fallback: 'rest', apiEndpoint: %q, port: %s, protocol: 'https', authClient: oauth2ClientWithAnyAccessToken})"+
		" with NODE_EXTRA_CA_CERTS=CA_FILE\n", u.Hostname(), u.Port())
	for _, c := range s.views() {
		fmt.Fprintf(w, "  GKE cluster %s (%s, version %s, zones %s, pools: %s):\n", c.name, c.location, c.version, c.zones, c.pools)
		fmt.Fprintf(w, "    project:    %s\n    location:   %s\n    cluster:    %s\n    node pools: %s/v1/projects/%s/locations/%s/clusters/%s/nodePools\n",
			c.project, c.location, c.name, endpoint, c.project, c.location, c.name)
		fmt.Fprintf(w, "    kube API:   %s%s/%s (clusters.get's endpoint and masterAuth.clusterCaCertificate; the OAuth2 bearer tokens GKE's API takes)\n",
			endpoint, KubePrefix, c.uid)
	}
}

// clusterView is what Clusters and Describe show of a cluster.
type clusterView struct{ project, location, name, version, zones, pools, uid string }

// poolNames are the cluster's pools for people, in the order they were
// created.
func (c *cluster) poolNames() string {
	var names []string
	for _, p := range c.sorted() {
		names = append(names, p.np.Name)
	}
	return demo.List(names)
}

func (s *Server) views() []clusterView {
	var out []clusterView
	s.Do(func(time.Time) {
		for _, c := range s.clusters {
			out = append(out, clusterView{c.project, c.location, c.name, c.version, strings.Join(c.locations, ","), c.poolNames(), c.uid})
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].name+"/"+out[i].project < out[j].name+"/"+out[j].project })
	return out
}

// Identity returns GKE and the fixed token (TokenSource).
func (s *Server) Identity() (kpool.PlatformType, any) { return kpool.PlatformGCP, TokenSource() }

// TokenSource is the OAuth2 token source kpool dev calls the emulator
// with: a fixed token, which the emulator accepts and which grants
// nothing elsewhere.
func TokenSource() oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "kpool-cloudsim", TokenType: "Bearer"})
}
