package kpool

import (
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Platform is what the domain asks of the platform a cluster runs on. The
// answers are each cloud's (provider/<cloud> profiles, served by
// provider.Registry): this package holds no cloud's rules.
type Platform interface {
	Type() PlatformType
	// HasNodePools is false for platforms without a pool concept (k3s,
	// microVMs): asking them for a pool is a capability boundary.
	HasNodePools() bool
	// NoPools is the NOT_IMPLEMENTED answer to a pool operation (op, such
	// as "nodepool create") on a platform without pools: it names the
	// platform and the operation and says what to do instead.
	NoPools(op string) error
	// ValidateCluster checks the cluster's platform block.
	ValidateCluster(fe *FieldErrors, s *ClusterSpec)
	// ClusterIdentity lists the block fields that name the cloud cluster:
	// a registration cannot be pointed at another cluster.
	ClusterIdentity(s *ClusterSpec) []Setting
	// Region is the cluster's cloud region ("" where it has none).
	Region(s *ClusterSpec) string
	// CloudID names the cloud cluster as its cloud tells clusters apart
	// ("" for a platform without clusters of its own).
	CloudID(s *ClusterSpec) string
	// ValidatePool checks what of a pool's spec depends on the platform: its
	// block, the block's labels and taints, how far it may scale down.
	ValidatePool(fe *FieldErrors, s *NodePoolSpec, c *Cluster)
}

// Setting is one field of a platform block: its JSON path below
// spec.platform and its value.
type Setting struct {
	Path  string
	Value string
}

// Platforms are the platforms the service knows and what their providers can
// do with a pool spec. The service asks before any write, so that a change a
// provider would refuse is refused by the API, not found by a controller
// later.
type Platforms interface {
	// Platform returns a known platform.
	Platform(t PlatformType) (Platform, bool)
	// Types lists the known platforms.
	Types() []PlatformType
	// HasDriver reports whether a controller in this kpool acts on pools of
	// the platform (its driver is built in and configured). Pools of one
	// without are left to external controllers, and their status says so.
	HasDriver(t PlatformType) bool
	// LabelDomains are the label key domains that kpool, Kubernetes or a
	// provider own; users may not set labels there.
	LabelDomains() []string
	// CheckCreate refuses a spec asking for what the provider lacks
	// (NOT_IMPLEMENTED) or cannot map (VALIDATION_ERROR).
	CheckCreate(c *Cluster, s *NodePoolSpec) error
	// Plan classifies every field that differs between old and next.
	Plan(c *Cluster, old, next *NodePoolSpec) (Plan, error)
	// ControllerNames are the names kpool's built-in controllers report
	// under: reserved for kpool's own controllers and the identities granted
	// them.
	ControllerNames() []string
	// ProviderNames returns the names the pool may have at the provider,
	// derived from its kpool name, the preferred first (n > 0: the first n
	// only). The service takes the first that no other pool of the cluster
	// has.
	ProviderNames(c *Cluster, pool string, n int) ([]string, error)
	// Preflight checks a pool's spec (on an update, what changed since
	// prev) against what the cluster offers (f, learnt from its provider):
	// a VALIDATION_ERROR for what the provider would refuse later; the
	// warnings say which checks were skipped (facts missing, stale or
	// partial).
	Preflight(c *Cluster, s, prev *NodePoolSpec, f *ClusterFacts, now time.Time) ([]string, error)
	// Offering reads where a pool spec asks its nodes to run: its machine
	// type and spot from the platform block, its zone when it has exactly
	// one logical zone.
	Offering(c *Cluster, s *NodePoolSpec) Offering
	// SetOffering points a pool spec at an offering: the block's machine
	// type and spot, and spec.zones [o.Zone] when o has a zone. A logical
	// pool makes its members' specs with it.
	SetOffering(c *Cluster, s *NodePoolSpec, o Offering)
}

// logicalZone is a logical zone: "1" to "99".
var logicalZone = regexp.MustCompile(`^[1-9][0-9]?$`)

// IsLogicalZone reports whether z is a logical zone ("1", "2"…), the zones
// spec.zones takes and every provider maps to its own.
func IsLogicalZone(z string) bool { return logicalZone.MatchString(z) }

// NormalizeZone turns "<region>-N" into the logical zone "N" when region is
// the cluster's; anything else is returned as it is (and validated).
func NormalizeZone(z, region string) string {
	if region != "" && strings.HasPrefix(z, region+"-") && IsLogicalZone(z[len(region)+1:]) {
		return z[len(region)+1:]
	}
	return z
}

// Blocks returns the JSON names of the platform blocks a cluster spec sets.
func (p *ClusterPlatform) Blocks() []string { return setBlocks(reflect.ValueOf(p).Elem()) }

// Blocks returns the JSON names of the platform blocks a pool spec sets.
func (p *NodePoolPlatform) Blocks() []string { return setBlocks(reflect.ValueOf(p).Elem()) }

// blockFields caches, per platform struct type, the index and JSON name of
// each block (pointer) field.
var blockFields sync.Map // reflect.Type -> []blockField

type blockField struct {
	index int
	name  string
}

// setBlocks lists the non-nil pointer fields of a platform struct by JSON
// name: the blocks, whichever clouds the API has.
func setBlocks(v reflect.Value) []string {
	fields, ok := blockFields.Load(v.Type())
	if !ok {
		var fs []blockField
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type.Kind() == reflect.Pointer {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				fs = append(fs, blockField{i, name})
			}
		}
		fields, _ = blockFields.LoadOrStore(v.Type(), fs)
	}
	var out []string
	for _, f := range fields.([]blockField) {
		if !v.Field(f.index).IsNil() {
			out = append(out, f.name)
		}
	}
	return out
}
