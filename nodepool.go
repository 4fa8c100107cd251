package kpool

import (
	"encoding/json"
	"fmt"
	"time"
)

// NodePool is a provider-neutral group of identically configured worker nodes
// in one cluster: an AKS agent pool, an EKS managed node group, a GKE, OKE or
// Civo node pool.
type NodePool struct {
	ID                string         `json:"id"`
	Name              string         `json:"name"`
	ClusterID         string         `json:"cluster_id"`
	Generation        int64          `json:"generation"`
	ResourceVersion   string         `json:"resource_version"`
	Spec              NodePoolSpec   `json:"spec"`
	Status            NodePoolStatus `json:"status"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	CreatedBy         string         `json:"created_by"`
	DeletionTimestamp *time.Time     `json:"deletion_timestamp,omitempty"`
	// ProviderName is the pool's name at its provider, derived from Name
	// when the pool is created (AKS, for one, allows only 12 characters).
	ProviderName string `json:"provider_name,omitempty"`

	// ClusterOwner is the created_by of the pool's cluster, which decides
	// who may see the pool. Stores fill it in; it is never serialised.
	ClusterOwner string `json:"-"`
	// ClusterTeam is the team of the pool's cluster ("": none).
	ClusterTeam string `json:"-"`
}

// Deleting reports whether deletion of the pool has been requested.
func (p *NodePool) Deleting() bool { return p.DeletionTimestamp != nil }

// RawNodePool is a NodePool as stored, its spec and status the JSON the
// service wrote: reads that only pass a pool on (GET, lists) send it without
// decoding and encoding it again. Its JSON is a NodePool's.
type RawNodePool struct {
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	ClusterID         string          `json:"cluster_id"`
	Generation        int64           `json:"generation"`
	ResourceVersion   string          `json:"resource_version"`
	Spec              json.RawMessage `json:"spec"`
	Status            json.RawMessage `json:"status"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	CreatedBy         string          `json:"created_by"`
	DeletionTimestamp *time.Time      `json:"deletion_timestamp,omitempty"`
	ProviderName      string          `json:"provider_name,omitempty"`
	ClusterOwner      string          `json:"-"`
	ClusterTeam       string          `json:"-"`
}

// Decode returns the pool with its spec and status decoded.
func (r *RawNodePool) Decode() (*NodePool, error) {
	p := &NodePool{ID: r.ID, Name: r.Name, ClusterID: r.ClusterID, Generation: r.Generation, ResourceVersion: r.ResourceVersion,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CreatedBy: r.CreatedBy, DeletionTimestamp: r.DeletionTimestamp,
		ProviderName: r.ProviderName, ClusterOwner: r.ClusterOwner, ClusterTeam: r.ClusterTeam}
	if err := json.Unmarshal(r.Spec, &p.Spec); err != nil {
		return nil, fmt.Errorf("node pool %s: stored spec: %w", r.ID, err)
	}
	if err := json.Unmarshal(r.Status, &p.Status); err != nil {
		return nil, fmt.Errorf("node pool %s: stored status: %w", r.ID, err)
	}
	return p, nil
}

// Pool modes: a system pool hosts cluster add-ons, a user pool applications.
const (
	ModeSystem = "system"
	ModeUser   = "user"
)

// NodePoolSpec is the desired state of a pool, in the JSON shape of the
// NodePools user guide plus the fields every provider needs.
type NodePoolSpec struct {
	// NodeCount is the number of nodes; with autoscaling it is the
	// starting size and the autoscaler owns the count afterwards.
	NodeCount   *int             `json:"nodeCount,omitempty"`
	Autoscaling *Autoscaling     `json:"autoscaling,omitempty"`
	Platform    NodePoolPlatform `json:"platform"`
	// Zones are logical zones "1", "2", "3"…, mapped by each provider to its
	// own (AKS zones, EKS subnets, GKE zones, OKE availability domains).
	Zones []string `json:"zones,omitempty"`
	// Mode is system or user (the default).
	Mode              string `json:"mode,omitempty"`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// Labels and Taints apply on every platform and are merged with the
	// platform block's own.
	Labels map[string]string `json:"labels,omitempty"`
	Taints []Taint           `json:"taints,omitempty"`
	// Tags are cloud resource tags (not Kubernetes labels).
	Tags map[string]string `json:"tags,omitempty"`
	// Management is manage (the default: kpool creates, corrects and
	// deletes the pool) or observe (kpool only reports on it).
	Management string `json:"management,omitempty"`
	// DeletionPolicy is Delete (the default: deleting the kpool pool
	// deletes it at the provider) or Abandon (the provider's pool stays).
	DeletionPolicy string `json:"deletionPolicy,omitempty"`
	// PlacementPool is the logical pool this pool belongs to: the value of
	// its nodes' kompox.dev/node-pool label, shared by every member (one
	// provider pool per zone, say). Empty: the pool's own name.
	PlacementPool string `json:"placementPool,omitempty"`
	// UpdateStrategy is how changes that replace nodes are carried out.
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`
}

// Management modes and deletion policies.
const (
	ManagementManage  = "manage"
	ManagementObserve = "observe"
	DeletionDelete    = "Delete"
	DeletionAbandon   = "Abandon"
)

// Observed reports whether kpool only observes the pool.
func (s *NodePoolSpec) Observed() bool { return s.Management == ManagementObserve }

// Count returns the node count (0 when unset).
func (s *NodePoolSpec) Count() int {
	if s.NodeCount == nil {
		return 0
	}
	return *s.NodeCount
}

// Autoscaling bounds the cluster autoscaler for a pool.
type Autoscaling struct {
	Enabled                 bool   `json:"enabled"`
	MinNodes                *int   `json:"minNodes,omitempty"`
	MaxNodes                *int   `json:"maxNodes,omitempty"`
	TargetCPUUtilization    *int   `json:"targetCPUUtilization,omitempty"`
	TargetMemoryUtilization *int   `json:"targetMemoryUtilization,omitempty"`
	ScaleDownDelay          string `json:"scaleDownDelay,omitempty"`
	ScaleUpDelay            string `json:"scaleUpDelay,omitempty"`
}

// On reports whether autoscaling is enabled.
func (a *Autoscaling) On() bool { return a != nil && a.Enabled }

// NodePoolPlatform holds the platform type and the block for that type. Only
// the block matching Type may be set.
type NodePoolPlatform struct {
	Type  PlatformType   `json:"type,omitempty"`
	GCP   *GCPNodePool   `json:"gcp,omitempty"`
	AWS   *AWSNodePool   `json:"aws,omitempty"`
	Azure *AzureNodePool `json:"azure,omitempty"`
	OCI   *OCINodePool   `json:"oci,omitempty"`
	Civo  *CivoNodePool  `json:"civo,omitempty"`
}

// GCPNodePool is a GKE node pool's machine configuration.
type GCPNodePool struct {
	MachineType  string            `json:"machineType,omitempty"`
	DiskSize     int               `json:"diskSize,omitempty"`
	DiskType     string            `json:"diskType,omitempty"`
	Zones        []string          `json:"zones,omitempty"`
	Preemptible  bool              `json:"preemptible,omitempty"`
	Accelerators []Accelerator     `json:"accelerators,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Taints       []Taint           `json:"taints,omitempty"`
}

// AWSNodePool is an EKS managed node group's machine configuration.
type AWSNodePool struct {
	InstanceType      string   `json:"instanceType,omitempty"`
	VolumeSize        int      `json:"volumeSize,omitempty"`
	VolumeType        string   `json:"volumeType,omitempty"`
	AvailabilityZones []string `json:"availabilityZones,omitempty"`
	SpotInstances     bool     `json:"spotInstances,omitempty"`
	UserData          string   `json:"userData,omitempty"`
}

// AzureNodePool is an AKS agent pool's machine configuration.
type AzureNodePool struct {
	VMSize            string   `json:"vmSize,omitempty"`
	OSDiskSizeGB      int      `json:"osDiskSizeGB,omitempty"`
	OSDiskType        string   `json:"osDiskType,omitempty"`
	AvailabilityZones []string `json:"availabilityZones,omitempty"`
	SpotInstances     bool     `json:"spotInstances,omitempty"`
}

// OCINodePool is an OKE node pool's machine configuration.
type OCINodePool struct {
	Shape               string            `json:"shape,omitempty"`
	OCPUs               float64           `json:"ocpus,omitempty"`
	MemoryInGBs         float64           `json:"memoryInGBs,omitempty"`
	BootVolumeSizeInGBs int               `json:"bootVolumeSizeInGBs,omitempty"`
	AvailabilityDomains []string          `json:"availabilityDomains,omitempty"`
	ImageID             string            `json:"imageId,omitempty"`
	Preemptible         bool              `json:"preemptible,omitempty"`
	Labels              map[string]string `json:"labels,omitempty"`
}

// CivoNodePool is a Civo node pool's configuration.
type CivoNodePool struct {
	Size   string            `json:"size,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Taints []Taint           `json:"taints,omitempty"`
	// PublicIPNodePool gives every node a public IP; Civo sets it when it
	// creates the pool.
	PublicIPNodePool bool `json:"publicIpNodePool,omitempty"`
}

// Accelerator asks for GPUs (or other accelerators) on every node.
type Accelerator struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
}

// Taint is a Kubernetes node taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Taint effects.
const (
	EffectNoSchedule       = "NoSchedule"
	EffectPreferNoSchedule = "PreferNoSchedule"
	EffectNoExecute        = "NoExecute"
)

// Equal reports whether two specs are the same desired state. It compares
// the canonical JSON encodings, so nil and empty maps are the same.
func (s *NodePoolSpec) Equal(o *NodePoolSpec) bool {
	a, err1 := json.Marshal(s)
	b, err2 := json.Marshal(o)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

// LogicalPool is the placement name of a pool: the logical pool it belongs
// to, its own name by default.
func (p *NodePool) LogicalPool() string {
	if p.Spec.PlacementPool != "" {
		return p.Spec.PlacementPool
	}
	return p.Name
}

// DefaultNodePoolSpec fills in what a pool spec may omit: the platform type
// (the cluster's), the mode (user) and the node count (the autoscaler's
// minimum, or 1); zones "<region>-N" become "N". region is the cluster's.
func DefaultNodePoolSpec(s *NodePoolSpec, c *Cluster, region string) {
	if s.Platform.Type == "" {
		s.Platform.Type = c.Spec.Platform.Type
	}
	if s.Mode == "" {
		s.Mode = ModeUser
	}
	if s.Management == "" {
		s.Management = ManagementManage
	}
	if s.DeletionPolicy == "" {
		s.DeletionPolicy = DeletionDelete
	}
	for i, z := range s.Zones {
		s.Zones[i] = NormalizeZone(z, region)
	}
	if s.NodeCount == nil {
		n := 1
		if a := s.Autoscaling; a.On() && a.MinNodes != nil && *a.MinNodes > 1 {
			n = *a.MinNodes
		}
		s.NodeCount = &n
	}
}
