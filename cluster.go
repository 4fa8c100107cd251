package kpool

import (
	"fmt"
	"strings"
	"time"
)

// PlatformType names where a cluster runs. The constants are the API's
// words for the platform blocks below; what each platform is and does is
// its profile's (provider/<cloud>).
type PlatformType string

const (
	PlatformAzure   PlatformType = "azure"
	PlatformAWS     PlatformType = "aws"
	PlatformGCP     PlatformType = "gcp"
	PlatformOCI     PlatformType = "oci"
	PlatformCivo    PlatformType = "civo"
	PlatformK3s     PlatformType = "k3s"
	PlatformMicroVM PlatformType = "microvm"
)

// Cluster is an existing Kubernetes cluster registered with kpool. kpool
// manages the cluster's node pools; it does not create the cluster itself.
type Cluster struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Generation      int64  `json:"generation"`
	ResourceVersion string `json:"resource_version"`
	// Team is the team the cluster belongs to ("": its owner's own): the
	// team's members see and change it as their roles allow.
	Team              string        `json:"team,omitempty"`
	Spec              ClusterSpec   `json:"spec"`
	Status            ClusterStatus `json:"status"`
	CreatedAt         time.Time     `json:"created_at"`
	UpdatedAt         time.Time     `json:"updated_at"`
	CreatedBy         string        `json:"created_by"`
	DeletionTimestamp *time.Time    `json:"deletion_timestamp,omitempty"`
	// CloudID names the cloud cluster at its endpoint (Platform.CloudID):
	// one registration a cloud cluster; "" for a platform without one.
	CloudID string `json:"-"`
	// Grant is the entry of the operator's credential that let the
	// cluster's credential be chosen, when it last was (an e-mail address,
	// group:NAME, team:NAME, "*" or "admin"): using the credential, the
	// drivers and the API check that it still holds. "" for clusters
	// registered before grants were recorded.
	Grant string `json:"-"`
	// KubeconfigGrant is, as Grant for spec.credential, the entry of the
	// kubeconfig credential spec.kubeconfig names that let it be chosen;
	// kpool checks it still holds whenever it uses the kubeconfig.
	KubeconfigGrant string `json:"-"`
}

// ClusterSpec says where a cluster is and how a driver reaches it.
type ClusterSpec struct {
	Platform ClusterPlatform `json:"platform"`
	// Endpoint overrides the provider API's base URL (a cloud emulator,
	// a sovereign cloud). Empty means the provider's public endpoint.
	Endpoint string `json:"endpoint,omitempty"`
	// Credential names the operator's credential the drivers use for the
	// cluster (kpool serve --credentials). Empty means the platform's
	// default credential.
	Credential string `json:"credential,omitempty"`
	// Kubeconfig names the operator's kubeconfig credential (kind
	// kubeconfig in kpool serve --credentials) through which kpool reaches
	// the cluster's Kubernetes API, instead of the access its driver gets
	// from the cloud. Empty means the driver's.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// NodeLabels asks for node labels beyond the placement contract's:
	// "guide" adds nodepool=<pool name> (NodeLabelsGuide); "" none.
	NodeLabels string `json:"nodeLabels,omitempty"`
	// ImportPools makes the controllers import the provider's pools that
	// kpool does not know, as pools in observe mode.
	ImportPools bool `json:"importPools,omitempty"`
}

// ClusterPlatform holds the platform type and the block for that type.
type ClusterPlatform struct {
	Type    PlatformType   `json:"type"`
	Azure   *AzureCluster  `json:"azure,omitempty"`
	AWS     *AWSCluster    `json:"aws,omitempty"`
	GCP     *GCPCluster    `json:"gcp,omitempty"`
	OCI     *OCICluster    `json:"oci,omitempty"`
	Civo    *CivoCluster   `json:"civo,omitempty"`
	K3s     *EmptyPlatform `json:"k3s,omitempty"`
	MicroVM *EmptyPlatform `json:"microvm,omitempty"`
}

// AzureCluster locates an AKS managed cluster.
type AzureCluster struct {
	SubscriptionID string `json:"subscriptionId"`
	ResourceGroup  string `json:"resourceGroup"`
	ClusterName    string `json:"clusterName"`
	Location       string `json:"location,omitempty"`
}

// AWSCluster locates an EKS cluster and what its managed node groups need.
type AWSCluster struct {
	Region      string `json:"region"`
	ClusterName string `json:"clusterName"`
	NodeRoleARN string `json:"nodeRoleArn"`
	// Subnets maps an availability zone (us-west-2a) to the subnet that
	// node groups in that zone use.
	Subnets map[string]string `json:"subnets"`
}

// GCPCluster locates a GKE cluster.
type GCPCluster struct {
	ProjectID   string `json:"projectId"`
	Location    string `json:"location"`
	ClusterName string `json:"clusterName"`
}

// OCICluster locates an OKE cluster and what its node pools need.
type OCICluster struct {
	Region        string `json:"region"`
	CompartmentID string `json:"compartmentId"`
	ClusterID     string `json:"clusterId"`
	// ImageID is the default node image; a pool may name its own.
	ImageID string `json:"imageId,omitempty"`
	// Subnets maps an availability domain to the worker subnet used there.
	Subnets map[string]string `json:"subnets"`
}

// CivoCluster locates a Civo Kubernetes cluster.
type CivoCluster struct {
	Region    string `json:"region"`
	ClusterID string `json:"clusterId"`
}

// EmptyPlatform is the block of a platform that needs no settings.
type EmptyPlatform struct{}

// ClusterPhase is the lifecycle phase of a registered cluster.
type ClusterPhase string

const (
	ClusterActive   ClusterPhase = "Active"
	ClusterDeleting ClusterPhase = "Deleting"
)

// ClusterStatus is what kpool knows of a cluster: its lifecycle, and what
// the controllers found when they reached for it (Conditions).
type ClusterStatus struct {
	Phase   ClusterPhase `json:"phase"`
	Message string       `json:"message,omitempty"`
	// Conditions are the controllers' observations of the cluster, such
	// as ConditionReachable; none until a controller has looked.
	Conditions []Condition `json:"conditions,omitempty"`
	// Foreign are the pools at the provider that carry another owner's
	// mark (another kpool installation's, or another pool's): kpool never
	// adopts, changes or deletes them, and imports one only when an admin
	// forces it.
	Foreign []ForeignPool `json:"foreignPools,omitempty"`
	// Unmarked are the pools at the provider that carry no owner's mark
	// and that no pool of the cluster maps to: what an import may take
	// (a cluster with importPools imports them itself, and lists none).
	Unmarked []UnmarkedPool `json:"unmarkedPools,omitempty"`
	// Drift is set while the controllers look at the cluster for drift
	// less often than configured, to keep its cloud account's reads
	// within the account's budget.
	Drift *DriftSchedule `json:"drift,omitempty"`
}

// DriftSchedule is how often the controllers look at a cluster for drift
// when they stretched that past the configured interval: the account's
// clusters' drift passes would spend more reads than its budget leaves for
// them.
type DriftSchedule struct {
	EverySeconds      int64 `json:"everySeconds"`
	ConfiguredSeconds int64 `json:"configuredSeconds"`
	// Account names the cloud account whose read budget it is.
	Account string `json:"account"`
}

// Notice says so in a sentence, for the dashboard and the CLI.
func (d DriftSchedule) Notice() string {
	return fmt.Sprintf("drift checked every %s (stretched from %s: account %s's read budget)",
		shortDuration(d.EverySeconds), shortDuration(d.ConfiguredSeconds), d.Account)
}

// shortDuration is seconds as 3m, 1h30m or 45s.
func shortDuration(s int64) string {
	d := (time.Duration(s) * time.Second).String()
	if strings.HasSuffix(d, "m0s") {
		d = strings.TrimSuffix(d, "0s")
	}
	if strings.HasSuffix(d, "h0m") {
		d = strings.TrimSuffix(d, "0m")
	}
	return d
}

// ForeignPool is a pool at the provider that another owner marked.
type ForeignPool struct {
	// ProviderName is the pool's name at the provider.
	ProviderName string `json:"providerName"`
	// Installation is the kpool installation its mark names, and Pool the
	// kpool pool id ("" when the mark has none).
	Installation string `json:"installation"`
	Pool         string `json:"pool,omitempty"`
	// Spec is the pool as the controllers last read it, in kpool's terms:
	// what a forced import records.
	Spec *NodePoolSpec `json:"spec,omitempty"`
}

// UnmarkedPool is a pool at the provider that carries no owner's mark and
// that no kpool pool of the cluster maps to.
type UnmarkedPool struct {
	// ProviderName is the pool's name at the provider.
	ProviderName string `json:"providerName"`
	// Name is its kompox.dev/node-pool label ("" when it has none).
	Name string `json:"name,omitempty"`
	// Spec is the pool as the controllers last read it, in kpool's terms:
	// what an import records.
	Spec *NodePoolSpec `json:"spec,omitempty"`
}

// ClusterReport is what a controller reports of a cluster: conditions, each
// replacing the condition of its type, and, when Foreign or Unmarked is
// not nil, the foreign or unmarked pools it found at the provider (an
// empty list: none).
type ClusterReport struct {
	Conditions []Condition
	Foreign    []ForeignPool
	Unmarked   []UnmarkedPool
	// Drift, when set, replaces the cluster's drift schedule; one with no
	// EverySeconds clears it (drift checked as configured).
	Drift *DriftSchedule
}

// ConditionReachable says whether kpool's controllers reach the cluster at
// its provider: True once a list of its pools succeeds, False (with one of
// the Reason* below) while the provider refuses it or does not answer.
// The cluster's pools wait for it with the same reason.
const ConditionReachable = "Reachable"

// ConditionNodesWatched says whether kpool's controllers watch the
// cluster's Nodes in its Kubernetes API (one watch per cluster), which the
// pools' status.nodes and label repairs come from: False with why not
// (reason ReasonKubernetesUnreachable); absent where kpool does not reach
// the cluster's Kubernetes API.
const ConditionNodesWatched = "NodesWatched"

// The reasons of NodesWatched.
const (
	ReasonWatching              = "Watching"
	ReasonKubernetesUnreachable = "KubernetesUnreachable"
)

// Reasons of Reachable=False, and of the Ready condition of the pools that
// wait for their cluster (ReasonClusterUnreachable).
const (
	// ReasonNoCredential: no credential the cluster may use is configured.
	ReasonNoCredential = "NoCredential"
	// ReasonEndpointNotAllowed: the operator has not allowed the cluster's
	// endpoint for its credential.
	ReasonEndpointNotAllowed = "EndpointNotAllowed"
	// ReasonCredentialRefused: the provider (or its identity service)
	// refused the credential.
	ReasonCredentialRefused = "CredentialRefused"
	// ReasonClusterNotFound: the provider does not know the cluster.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonInvalidCluster: the provider refuses the cluster's settings.
	ReasonInvalidCluster = "InvalidCluster"
	// ReasonEndpointUnreachable: the provider's endpoint has not answered
	// for a while.
	ReasonEndpointUnreachable = "EndpointUnreachable"
	// ReasonProviderError: the provider refused the cluster otherwise.
	ReasonProviderError = "ProviderError"
	// ReasonClusterUnreachable is the reason of a pool whose cluster is
	// not Reachable: it waits for its cluster.
	ReasonClusterUnreachable = "ClusterUnreachable"
)

// Condition returns the cluster's condition of type t (nil: none).
func (s ClusterStatus) Condition(t string) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// Unreachable returns why the controllers cannot reach the cluster, or ""
// when they can or have not looked yet.
func (s ClusterStatus) Unreachable() string {
	c := s.Condition(ConditionReachable)
	if c == nil || c.Status != ConditionFalse {
		return ""
	}
	if c.Message != "" {
		return c.Message
	}
	return c.Reason
}

// Deleting reports whether deletion of the cluster has been requested.
func (c *Cluster) Deleting() bool { return c.DeletionTimestamp != nil }
