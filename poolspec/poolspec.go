// Package poolspec turns a node pool's settings, as kpool nodepool create,
// update and scale take them on the command line, into the spec object of
// a create or a PUT for the pool's platform.
//
// The settings are provider-neutral (--machine-type, --zones, --disk-size,
// --spot, labels, taints, counts) or one provider's own (--image-id). The
// platforms' profiles say which field of the platform block each fills
// (vmSize, instanceType, machineType, shape, size), so a new cloud needs no
// change here. Only the settings given go into the spec, so that a PUT
// keeps the pool's other fields. Errors name the settings by their flags.
package poolspec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Settings are a pool's settings in the command line's terms. A nil field
// is a setting not given, left out of the spec.
type Settings struct {
	NodeCount          *int
	MinNodes, MaxNodes *int // either enables autoscaling
	Mode               *string
	KubernetesVersion  *string
	// Labels and Tags are KEY=VALUE each; the keys given are set, the
	// others kept.
	Labels, Tags []string
	// Taints are KEY=VALUE:EFFECT or KEY:EFFECT each; they replace the
	// pool's taints.
	Taints []string

	// The platform block's settings, in provider-neutral terms: the profile
	// of the pool's platform names their fields.
	MachineType *string
	// Zones are logical zones (1, 2, 3 or <region>-1…), sent as spec.zones,
	// or the provider's own zone names, sent in the block; either replaces
	// the pool's zones, and empty clears them.
	Zones    []string
	DiskSize *int
	Spot     *bool
	// Own are the providers' own settings given (see Builder.OwnFlags), by
	// flag name: a string, float64 or bool as the flag's kind says.
	Own map[string]any

	// Strategy is spec.updateStrategy's settings given (--replacement,
	// --max-surge…); the fields given are set, the others kept.
	Strategy Strategy
}

// Strategy are the settings of spec.updateStrategy, as nodepool create and
// update take them (--replacement, --max-surge, --max-unavailable,
// --drain-timeout, --soak, --on-stuck). A nil field is not given.
type Strategy struct {
	Replacement, MaxSurge, MaxUnavailable, DrainTimeout, Soak, OnStuck *string
}

// Given reports whether any strategy setting is given.
func (s Strategy) Given() bool {
	return s.Replacement != nil || s.MaxSurge != nil || s.MaxUnavailable != nil || s.DrainTimeout != nil ||
		s.Soak != nil || s.OnStuck != nil
}

// Platform reports whether s gives a setting of the platform block, whose
// fields depend on the pool's platform: the spec then needs its Target.
func (s *Settings) Platform() bool {
	return s.MachineType != nil || s.Zones != nil || s.DiskSize != nil || s.Spot != nil || len(s.Own) > 0
}

// Empty reports whether s gives no setting at all.
func (s *Settings) Empty() bool {
	return !s.Platform() && s.NodeCount == nil && s.MinNodes == nil && s.MaxNodes == nil && s.Mode == nil &&
		s.KubernetesVersion == nil && s.Labels == nil && s.Tags == nil && s.Taints == nil && !s.Strategy.Given()
}

// Target is what a spec depends on of the pool's cluster: its platform, and
// its region, in which logical zones such as westeurope-1 are written.
type Target struct {
	Platform kpool.PlatformType
	Region   string
}

// OwnFlag is a pool setting of some providers' blocks (--image-id), with
// the platforms that have it.
type OwnFlag struct {
	provider.PoolFlag
	Platforms []kpool.PlatformType
}

// Builder makes specs with the platforms' profiles.
type Builder struct {
	profiles *provider.Registry
	own      []OwnFlag
}

// NewBuilder returns a builder for the platforms of profiles. It panics
// when two profiles give one flag name different fields or kinds: the
// command line could not tell them apart.
func NewBuilder(profiles *provider.Registry) *Builder {
	b := &Builder{profiles: profiles}
	for _, p := range profiles.Profiles() {
		for _, f := range p.CLI().PoolFlags {
			i := slices.IndexFunc(b.own, func(x OwnFlag) bool { return x.Name == f.Name })
			if i < 0 {
				b.own = append(b.own, OwnFlag{PoolFlag: f})
				i = len(b.own) - 1
			}
			if b.own[i].Field != f.Field || b.own[i].Kind != f.Kind {
				panic(fmt.Sprintf("flag --%s sets %s on %s but %s elsewhere", f.Name, f.Field, p.Type(), b.own[i].Field))
			}
			b.own[i].Platforms = append(b.own[i].Platforms, p.Type())
		}
	}
	return b
}

// OwnFlags are the providers' own pool settings, one per flag name, in the
// order of the profiles.
func (b *Builder) OwnFlags() []OwnFlag { return slices.Clone(b.own) }

// Target is the platform and region of a cluster's pools.
func (b *Builder) Target(c *kpool.Cluster) Target {
	t := c.Spec.Platform.Type
	return Target{Platform: t, Region: b.profiles.Profile(t).Region(&c.Spec)}
}

// Reader reads what a spec depends on from the server; *api.Client is one.
type Reader interface {
	Cluster(ctx context.Context, id string) (*kpool.Cluster, error)
	NodePool(ctx context.Context, id string) (*kpool.NodePool, error)
}

// ForCluster returns the spec s makes for a new pool in cluster clusterID,
// reading the cluster only when a platform setting needs it.
func (b *Builder) ForCluster(ctx context.Context, r Reader, clusterID string, s *Settings) (map[string]any, error) {
	var t Target
	if s.Platform() {
		cl, err := r.Cluster(ctx, clusterID)
		if err != nil {
			return nil, err
		}
		t = b.Target(cl)
	}
	return b.Spec(s, t)
}

// ForPool returns the spec s makes for the existing pool poolID, reading
// the pool only when a platform setting needs its platform, and its
// cluster only when zones need the region.
func (b *Builder) ForPool(ctx context.Context, r Reader, poolID string, s *Settings) (map[string]any, error) {
	var t Target
	if s.Platform() {
		p, err := r.NodePool(ctx, poolID)
		if err != nil {
			return nil, err
		}
		t.Platform = p.Spec.Platform.Type
		if t.Platform == "" || s.Zones != nil {
			cl, err := r.Cluster(ctx, p.ClusterID)
			if err != nil {
				return nil, err
			}
			t = b.Target(cl)
		}
	}
	return b.Spec(s, t)
}

// Spec returns the spec object s makes for a pool on target t (which
// matters only when s.Platform()).
func (b *Builder) Spec(s *Settings, t Target) (map[string]any, error) {
	spec := map[string]any{}
	if s.NodeCount != nil {
		spec["nodeCount"] = *s.NodeCount
	}
	if a := s.autoscaling(); a != nil {
		spec["autoscaling"] = a
	}
	if s.Mode != nil {
		if *s.Mode != kpool.ModeSystem && *s.Mode != kpool.ModeUser {
			return nil, fmt.Errorf("--mode %q: use system or user", *s.Mode)
		}
		spec["mode"] = *s.Mode
	}
	if s.KubernetesVersion != nil {
		spec["kubernetesVersion"] = *s.KubernetesVersion
	}
	for _, m := range []struct {
		flag, field string
		vs          []string
	}{{"label", "labels", s.Labels}, {"tag", "tags", s.Tags}} {
		if m.vs != nil {
			kv, err := Pairs(m.flag, m.vs)
			if err != nil {
				return nil, err
			}
			spec[m.field] = kv
		}
	}
	if s.Taints != nil {
		ts := []kpool.Taint{}
		for _, v := range s.Taints {
			t, err := parseTaint(v)
			if err != nil {
				return nil, err
			}
			ts = append(ts, t)
		}
		spec["taints"] = ts
	}
	if s.Strategy.Given() {
		u, err := s.Strategy.object()
		if err != nil {
			return nil, err
		}
		spec["updateStrategy"] = u
	}
	block, err := b.block(s, t, spec)
	if err != nil {
		return nil, err
	}
	if len(block) > 0 {
		spec["platform"] = map[string]any{string(t.Platform): block}
	}
	return spec, nil
}

// autoscaling is the autoscaling object of MinNodes and MaxNodes, or nil.
func (s *Settings) autoscaling() map[string]any {
	if s.MinNodes == nil && s.MaxNodes == nil {
		return nil
	}
	a := map[string]any{"enabled": true}
	if s.MinNodes != nil {
		a["minNodes"] = *s.MinNodes
	}
	if s.MaxNodes != nil {
		a["maxNodes"] = *s.MaxNodes
	}
	return a
}

// block puts the platform settings into the fields of t's platform block.
// Logical zones go to spec.zones instead.
func (b *Builder) block(s *Settings, t Target, spec map[string]any) (map[string]any, error) {
	if !s.Platform() {
		return nil, nil
	}
	profile := b.profiles.Profile(t.Platform)
	if !profile.Capabilities().NodePools {
		// No node pools on this platform: the server says so.
		return nil, nil
	}
	fields := profile.CLI().PoolFields
	block := map[string]any{}
	for _, x := range []struct {
		flag, field string
		given       bool
		v           any
	}{
		{"machine-type", fields.MachineType, s.MachineType != nil, deref(s.MachineType)},
		{"zones", fields.Zones, s.Zones != nil, nil},
		{"disk-size", fields.DiskSize, s.DiskSize != nil, deref(s.DiskSize)},
		{"spot", fields.Spot, s.Spot != nil, deref(s.Spot)},
	} {
		switch {
		case !x.given:
		case x.field == "":
			return nil, fmt.Errorf("--%s does not apply to %s node pools: their platform block has no such field", x.flag, t.Platform)
		case x.flag == "zones":
			if err := placeZones(s.Zones, t, x.field, spec, block); err != nil {
				return nil, err
			}
		default:
			block[x.field] = x.v
		}
	}
	for _, of := range b.own {
		v, ok := s.Own[of.Name]
		if !ok {
			continue
		}
		if !slices.Contains(of.Platforms, t.Platform) {
			return nil, fmt.Errorf("--%s does not apply to %s node pools (only to %s)", of.Name, t.Platform, joinTypes(of.Platforms))
		}
		block[of.Field] = v
	}
	return block, nil
}

// deref is *p, or nil for a nil p.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// placeZones puts zones into spec.zones when they are logical zones ("1",
// "2"… or "<region>-1"…, which every provider with zones maps to its own),
// and into the platform block's own field (native) when they are the
// provider's names. The other of the two is emptied, so that the setting
// replaces the zones that a pool (or a file) has in either form; the
// server refuses the two when they disagree.
func placeZones(zones []string, t Target, native string, spec, block map[string]any) error {
	var logical, other []string
	for _, z := range zones {
		if kpool.IsLogicalZone(kpool.NormalizeZone(z, t.Region)) {
			logical = append(logical, z)
		} else {
			other = append(other, z)
		}
	}
	switch {
	case len(logical) > 0 && len(other) > 0:
		region := t.Region
		if region == "" {
			region = "<region>"
		}
		return fmt.Errorf("--zones %s: give logical zones (1, 2, 3 or %s-1…) or %s's own zone names (%s), not both",
			strings.Join(zones, ","), region, t.Platform, strings.Join(other, ", "))
	case len(logical) > 0:
		spec["zones"], block[native] = logical, []string{}
	default: // the provider's names, or none
		if other == nil {
			other = []string{} // [] empties the field; null would keep it
		}
		spec["zones"], block[native] = []string{}, other
	}
	return nil
}

// parseTaint parses KEY=VALUE:EFFECT or KEY:EFFECT.
func parseTaint(s string) (kpool.Taint, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return kpool.Taint{}, fmt.Errorf("--taint %q: use KEY=VALUE:EFFECT or KEY:EFFECT, EFFECT being NoSchedule, PreferNoSchedule or NoExecute", s)
	}
	k, v, _ := strings.Cut(s[:i], "=")
	if k == "" {
		return kpool.Taint{}, fmt.Errorf("--taint %q: the key is empty", s)
	}
	return kpool.Taint{Key: k, Value: v, Effect: s[i+1:]}, nil
}

// Pairs parses the KEY=VALUE values of a repeated flag.
func Pairs(flag string, vs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, v := range vs {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q: use KEY=VALUE", flag, v)
		}
		m[k] = val
	}
	return m, nil
}

// joinTypes lists platform types, comma-separated.
func joinTypes(ts []kpool.PlatformType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
