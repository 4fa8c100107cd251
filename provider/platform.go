package provider

import (
	"fmt"
	"slices"

	"github.com/kpool/kpool"
)

// platform is a profile as the service sees it (kpool.Platform): the rules
// every platform shares, checked from the profile's Block and Capabilities,
// around the profile's own.
type platform struct {
	p       Profile
	domains []string
}

func (x platform) Type() kpool.PlatformType { return x.p.Type() }
func (x platform) HasNodePools() bool       { return x.p.Capabilities().NodePools }
func (x platform) NoPools(op string) error  { return APIError(NoPoolsError(x.p, op)) }

func (x platform) ValidateCluster(fe *kpool.FieldErrors, s *kpool.ClusterSpec) {
	x.p.ValidateCluster(fe, s)
}

func (x platform) ClusterIdentity(s *kpool.ClusterSpec) []kpool.Setting {
	return x.p.ClusterIdentity(s)
}
func (x platform) Region(s *kpool.ClusterSpec) string  { return x.p.Region(s) }
func (x platform) CloudID(s *kpool.ClusterSpec) string { return x.p.CloudID(s) }

// ValidatePool checks the pool's block (present, with a machine type; its
// zones, labels and taints; the provider's own rules) and how far it may
// scale down.
func (x platform) ValidatePool(fe *kpool.FieldErrors, s *kpool.NodePoolSpec, c *kpool.Cluster) {
	caps := x.p.Capabilities()
	if !caps.NodePools {
		return // the service answers NOT_IMPLEMENTED
	}
	t := x.p.Type()
	cli := x.p.CLI()
	if !slices.Contains(s.Platform.Blocks(), string(t)) {
		fe.Add("spec.platform."+string(t), "required: the pool's %s settings, with at least its %s", t, cli.PoolFields.MachineType)
		kpool.ValidateBlockMetadata(fe, s, x.domains, nil, "", nil, "")
	} else {
		b := x.p.Block(c, s)
		kpool.ValidateMachineType(fe, b.Path(FieldMachineType), b.MachineType, cli.MachineExample)
		if path := b.Path(FieldZones); path != "" {
			kpool.ValidateZoneNames(fe, path, b.Zones)
		}
		kpool.ValidateBlockMetadata(fe, s, x.domains, b.Labels, b.Path(FieldLabels), b.Taints, b.Path(FieldTaints))
		x.p.ValidateBlock(fe, s, c)
	}
	validateOwnerTags(fe, s.Tags)
	if a := s.Autoscaling; a.On() && a.MinNodes != nil && *a.MinNodes == 0 {
		if least, why := caps.MinNodes(s.Mode); least > 0 {
			fe.Add("spec.autoscaling.minNodes", "must be at least %d: %s", least, why)
			if s.Count() == 0 {
				fe.Add("spec.nodeCount", "must be at least %d: %s", least, why)
			}
		}
	}
}

// validateOwnerTags refuses user tags under the owner's mark's keys
// (TagKeys): a user's kpool-pool tag would make the pool look another
// pool's, and kpool would then never touch it again. The mark's node
// labels are in kpool's own label domain, which users may not set.
func validateOwnerTags(fe *kpool.FieldErrors, tags map[string]string) {
	for _, k := range kpool.SortedKeys(tags) {
		if TagKeys.Has(k) {
			fe.Add("spec.tags."+k, "reserved: kpool marks every pool it creates with the tags %s and %s (its installation and the pool's id), so that no other kpool adopts, changes or deletes it",
				TagKeys.Installation, TagKeys.Pool)
		}
	}
}

// NoPools is the profile of a platform without node pools (k3s, microVMs
// through flintlock, or one kpool does not know): every pool operation is a
// capability boundary, NOT_IMPLEMENTED, never retried.
type NoPools struct {
	Platform kpool.PlatformType
	// Name is the platform as people write it.
	Name string
	// Instead says how its clusters gain and lose nodes, since not
	// through kpool.
	Instead string
}

func (n NoPools) Type() kpool.PlatformType { return n.Platform }

func (n NoPools) Capabilities() Capabilities {
	name := n.Name
	if name == "" {
		name = string(n.Platform)
	}
	return Capabilities{Provider: n.Platform, Name: name, Zones: ZonesNone, Instead: n.Instead}
}

// NoPoolsError is the NOT_IMPLEMENTED error of a pool operation (op) on a
// platform without pools: the platform, the operation, and what to do
// instead.
func NoPoolsError(p Profile, op string) error {
	c := p.Capabilities()
	msg := fmt.Sprintf("%s: %s clusters have no node pools", op, c.Name)
	if c.Instead != "" {
		msg += "; " + c.Instead
	}
	return NotImplementedError(p.Type(), "%s", msg)
}

func (n NoPools) ControllerName() string   { return string(n.Platform) + "-nodepool-controller" }
func (n NoPools) LabelDomains() []string   { return nil }
func (n NoPools) PoolLabel() string        { return "" }
func (n NoPools) DiskType(t string) string { return t }

func (n NoPools) ValidateCluster(*kpool.FieldErrors, *kpool.ClusterSpec)                {}
func (n NoPools) ClusterIdentity(*kpool.ClusterSpec) []kpool.Setting                    { return nil }
func (n NoPools) Region(*kpool.ClusterSpec) string                                      { return "" }
func (n NoPools) CloudID(*kpool.ClusterSpec) string                                     { return "" }
func (n NoPools) Block(*kpool.Cluster, *kpool.NodePoolSpec) Block                       { return Block{} }
func (n NoPools) ValidateBlock(*kpool.FieldErrors, *kpool.NodePoolSpec, *kpool.Cluster) {}
func (n NoPools) SetBlock(*kpool.NodePoolSpec, Block)                                   {}
func (n NoPools) NodeTaints(d PoolSpec) []kpool.Taint                                   { return d.Taints }
func (n NoPools) CLI() CLI                                                              { return CLI{PoolNoun: "node pool"} }

func (n NoPools) ProviderZone(*kpool.Cluster, string) (string, error) { return "", n.noZones() }
func (n NoPools) LogicalZone(*kpool.Cluster, string) (string, error)  { return "", n.noZones() }
func (n NoPools) NodeZone(*kpool.Cluster, string) (string, error)     { return "", n.noZones() }

func (n NoPools) noZones() error { return fmt.Errorf("platform %s has no zones", n.Platform) }
