package kpool

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Node is one node of a cluster as its Kubernetes API says it: what
// `kpool nodepool nodes` lists and the controllers count.
type Node struct {
	Name string `json:"name"`
	// Pool is the provider name of the cloud pool the node belongs to, by
	// the cloud's own pool label (Profile.PoolLabel); "" for a node of no
	// pool.
	Pool string `json:"pool,omitempty"`
	// Zone is the node's logical zone ("1"), NativeZone its
	// topology.kubernetes.io/zone.
	Zone         string    `json:"zone,omitempty"`
	NativeZone   string    `json:"nativeZone,omitempty"`
	InstanceType string    `json:"instanceType,omitempty"`
	Version      string    `json:"version,omitempty"` // the kubelet's
	Ready        bool      `json:"ready"`
	Cordoned     bool      `json:"cordoned,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	// MissingLabels are the placement labels (kompox.dev/node-pool,
	// kompox.dev/node-zone, and nodepool when the cluster asks for the
	// guide's) the node should carry and does not, or carries with another
	// value.
	MissingLabels []string `json:"missingLabels,omitempty"`
}

// NodeCounts is what a cluster's Kubernetes API says of one pool's nodes,
// beside what its cloud says (ReportMeta.ActiveNodes).
type NodeCounts struct {
	Total    int `json:"total"`
	Ready    int `json:"ready"`
	Cordoned int `json:"cordoned,omitempty"`
	// ByZone counts the Ready nodes by logical zone; ByVersion every node
	// by kubelet version.
	ByZone    map[string]int `json:"byZone,omitempty"`
	ByVersion map[string]int `json:"byVersion,omitempty"`
	// Unlabelled counts nodes missing a placement label (repaired by the
	// controllers where they may write the node).
	Unlabelled int       `json:"unlabelled,omitempty"`
	ObservedAt time.Time `json:"observedAt"`
}

// NodeSource is where kpool reads a cluster's nodes: the controllers'
// watch of the cluster (one per cluster), or the cluster's API itself.
type NodeSource interface {
	ClusterNodes(ctx context.Context, c *Cluster) ([]Node, error)
}

// KubeProxy reaches a cluster's Kubernetes API for kpool's read-only
// proxy (`kpool cluster kubeconfig`): the API server's URL and a round
// tripper that carries kpool's own access to it. The caller's credential
// never leaves kpool.
type KubeProxy interface {
	KubeTransport(ctx context.Context, c *Cluster) (*url.URL, http.RoundTripper, error)
}

// NodeLabels values of ClusterSpec.NodeLabels.
const (
	// NodeLabelsGuide also puts the guide's nodepool=<name> label on the
	// nodes of each pool, so that `kubectl get nodes -l nodepool=NAME` works.
	NodeLabelsGuide = "guide"
)

// GuidePoolLabel is the guide's node label naming a node's pool.
const GuidePoolLabel = "nodepool"
