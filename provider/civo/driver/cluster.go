package driver

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// AutoscalerApp is Civo's marketplace application of the cluster
// autoscaler (civo/kubernetes-marketplace, civo-cluster-autoscaler):
// installed through the cluster PUT's applications, configured in the
// cluster's Kubernetes API (its Deployment's --nodes=MIN:MAX:POOL_ID
// flags), which Civo's API does not configure.
const AutoscalerApp = "civo-cluster-autoscaler"

// Cluster is what the driver reads of a Civo cluster (civogo's
// KubernetesCluster): its kubeconfig, and its installed applications.
type Cluster struct {
	ID         string `json:"id"`
	KubeConfig string `json:"kubeconfig"`
	// Version and KubernetesVersion are the cluster's Kubernetes version
	// as Civo names it ("1.30.5-k3s1"), civogo's Version and
	// KubernetesVersion.
	Version               string `json:"version"`
	KubernetesVersion     string `json:"kubernetes_version"`
	InstalledApplications []struct {
		Application string `json:"application"`
		Name        string `json:"name"`
	} `json:"installed_applications"`
	// Conditions are the cluster's (civogo's Condition; the civo CLI
	// shows ControlPlaneReady, WorkerNodesReady and ClusterVersionSync).
	Conditions []Condition `json:"conditions"`
}

// Condition is a cluster condition: its type, status (True, False),
// reason and message.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Has reports whether an application is installed on the cluster (by
// its name or its application member, without case: Civo's fixtures
// show a display name there).
func (c *Cluster) Has(app string) bool {
	for _, a := range c.InstalledApplications {
		if strings.EqualFold(a.Name, app) || strings.EqualFold(a.Application, app) {
			return true
		}
	}
	return false
}

// Cluster returns a cluster (GET /v2/kubernetes/clusters/{id}).
func (c *Client) Cluster(ctx context.Context, cluster string) (*Cluster, error) {
	var out Cluster
	if err := c.do(ctx, http.MethodGet, clusterPath(cluster), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Install installs a marketplace application on a cluster: the cluster
// PUT with applications only (civogo's UpdateKubernetesCluster, as the
// civo CLI's "kubernetes applications add" sends it). Civo answers with
// the cluster.
func (c *Client) Install(ctx context.Context, cluster, app string) (*Cluster, error) {
	in := struct {
		Applications string `json:"applications"`
		Region       string `json:"region"`
	}{app, c.Region}
	var out Cluster
	if err := c.do(ctx, http.MethodPut, clusterPath(cluster), &in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func clusterPath(cluster string) string { return "/v2/kubernetes/clusters/" + url.PathEscape(cluster) }
