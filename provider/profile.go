package provider

import (
	"strconv"
	"strings"

	"github.com/kpool/kpool"
)

// Profile is everything kpool knows about one platform without its SDK:
// what it can do, how its cluster and pool blocks are checked and read, how
// its zones, pool names, labels and taints look, what its controller is
// called and what the command line offers for it. Each provider/<cloud>
// package has one; its SDK-bound driver sits in provider/<cloud>/driver, and
// provider/catalog lists every profile. Nothing outside those folders knows
// a cloud.
type Profile interface {
	Type() kpool.PlatformType
	// Capabilities are what the platform can do with pools, and the class
	// of a change of each field.
	Capabilities() Capabilities
	// ControllerName is what the platform's controller reports status as.
	ControllerName() string
	// LabelDomains are the label (and taint) key domains the provider sets
	// on nodes itself; users may not set labels there.
	LabelDomains() []string
	// PoolLabel is the label the provider itself puts on every node of a
	// pool, valued with the pool's provider name ("" where there is none):
	// what selects the nodes of a pool kpool did not label.
	PoolLabel() string

	// ValidateCluster checks the cluster's platform block.
	ValidateCluster(fe *kpool.FieldErrors, s *kpool.ClusterSpec)
	// ClusterIdentity lists the block fields that name the cloud cluster;
	// a registration cannot change them.
	ClusterIdentity(s *kpool.ClusterSpec) []kpool.Setting
	// Region is the cluster's cloud region ("" where it has none).
	Region(s *kpool.ClusterSpec) string
	// CloudID names the cloud cluster as its cloud tells clusters apart:
	// its identity's parts, case-folded where the cloud ignores case (""
	// for a platform without clusters of its own). Two registrations of
	// one CloudID at one endpoint are one cloud cluster.
	CloudID(s *kpool.ClusterSpec) string

	// Block reads a pool's platform block in neutral terms. c is the pool's
	// cluster (a block may default to a cluster setting).
	Block(c *kpool.Cluster, s *kpool.NodePoolSpec) Block
	// ValidateBlock checks the rules of the pool block that are the
	// provider's own (sizes, disk types, images); the shared rules (machine
	// type, labels, taints, zones syntax, scaling to zero) are checked for
	// every platform from Block and Capabilities.
	ValidateBlock(fe *kpool.FieldErrors, s *kpool.NodePoolSpec, c *kpool.Cluster)
	// SetBlock writes b into the spec's platform block (an observed pool
	// imported as a kpool pool).
	SetBlock(s *kpool.NodePoolSpec, b Block)

	// ProviderZone maps a logical zone ("1", "2"…) to the provider's value
	// in cluster c; LogicalZone maps the provider's value (or its node
	// label's) back; NodeZone is the value of topology.kubernetes.io/zone on
	// the nodes in a logical zone.
	ProviderZone(c *kpool.Cluster, logical string) (string, error)
	LogicalZone(c *kpool.Cluster, native string) (string, error)
	NodeZone(c *kpool.Cluster, logical string) (string, error)

	// DiskType is a disk type as the provider reports it once set (AKS
	// reports a Premium_LRS disk as Managed), so that drift is not seen
	// where there is none.
	DiskType(t string) string

	// NodeTaints are the taints the provider puts on a pool's nodes of its
	// own accord (AKS spot nodes, GKE GPU nodes), which pods must tolerate.
	NodeTaints(d PoolSpec) []kpool.Taint

	// CLI is what the command line offers for the platform.
	CLI() CLI
}

// Block is a pool's platform block in provider-neutral terms.
type Block struct {
	MachineType  string
	Zones        []string // the provider's own zone names, as the block gives them
	Labels       map[string]string
	Taints       []kpool.Taint
	DiskSizeGB   int
	DiskType     string
	Spot         bool
	Accelerators []kpool.Accelerator
	// Extra are provider-only inputs with no neutral form (user data, an
	// image, a shape's size), by their name in the block.
	Extra map[string]string
	// Fields lists every field of the block with its JSON path and value,
	// in a fixed order; the change plan compares and classifies them.
	Fields []BlockField
}

// BlockField is one field of a platform block.
type BlockField struct {
	Field Field
	Path  string
	Value any
}

// Path returns the JSON path of the block's first field of kind f, or "".
func (b Block) Path(f Field) string {
	for _, x := range b.Fields {
		if x.Field == f {
			return x.Path
		}
	}
	return ""
}

// CLI is what the command line offers for a platform.
type CLI struct {
	// PoolNoun is what the provider calls a node pool ("agent pool").
	PoolNoun string
	// ClusterFlags are the flags of `cluster create` that fill the
	// cluster block, in the order the help lists them.
	ClusterFlags []ClusterFlag
	// PoolFields names the block fields the neutral pool flags set
	// (--machine-type, --zones, --disk-size, --spot); "" where the block
	// has no such field.
	PoolFields PoolFields
	// MachineExample is a machine type the provider offers, for help
	// texts and error messages.
	MachineExample string
	// ExampleFlags are the flags a pool of MachineExample needs besides
	// the neutral ones (a flexible shape's size), for suggested commands.
	ExampleFlags string
	// PoolFlags are flags of `nodepool create` and `update` that set a
	// field of this provider's pool block only (OKE's --image-id).
	PoolFlags []PoolFlag
}

// ExampleBlock is the pool block of a MachineExample pool with its
// ExampleFlags, as `nodepool create` fills it from those flags: for
// examples, tests and benchmarks that need a pool the provider takes.
func (c CLI) ExampleBlock() map[string]any {
	block := map[string]any{c.PoolFields.MachineType: c.MachineExample}
	flags := strings.Fields(c.ExampleFlags)
	for j := 0; j+1 < len(flags); j += 2 {
		for _, f := range c.PoolFlags {
			if flags[j] != "--"+f.Name {
				continue
			}
			block[f.Field] = flags[j+1]
			if n, err := strconv.ParseFloat(flags[j+1], 64); err == nil && f.Kind == "number" {
				block[f.Field] = n
			}
		}
	}
	return block
}

// PoolFlag is a `nodepool create`/`update` flag of one provider's block.
type PoolFlag struct {
	Name  string // the flag, without dashes
	Field string // the pool block's JSON field it sets
	Kind  string // "string", "number" or "bool"
	Usage string
}

// ClusterFlag is one `cluster create` flag of a platform.
type ClusterFlag struct {
	Name     string // the flag, without dashes
	Field    string // the cluster block's JSON field it sets
	Usage    string
	Optional bool // shown in brackets in the help
	// Map: the flag is repeatable and takes KEY=VALUE into a map field.
	Map bool
}

// PoolFields are the block fields the neutral pool flags set.
type PoolFields struct {
	MachineType, Zones, DiskSize, Spot string
}
