package fake

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// newNodesOnly reports whether going from old to next changes a field the
// provider applies to new nodes only.
func (d *Driver) newNodesOnly(old, next provider.PoolSpec) bool {
	changed := map[provider.Field]bool{
		provider.FieldMachineType: old.MachineType != next.MachineType,
		provider.FieldZones:       !slices.Equal(old.Zones, next.Zones),
		provider.FieldLabels:      !provider.SameMap(old.Labels, next.Labels),
		provider.FieldSpot:        old.Spot != next.Spot,
		provider.FieldDisk:        old.DiskSizeGB != next.DiskSizeGB || old.DiskType != next.DiskType,
		provider.FieldVersion:     old.Version != next.Version,
		provider.FieldImage:       !provider.SameMap(old.Settings, next.Settings),
	}
	for f, c := range changed {
		if c && d.caps.Updates[f].Class == kpool.UpdateNewNodesOnly {
			return true
		}
	}
	return false
}

// stored is a spec as the provider keeps it: its own copies, zones sorted,
// the taints the provider adds included, no kpool name.
func (d *Driver) stored(s provider.PoolSpec) provider.PoolSpec {
	s = clone(s)
	s.Name = ""
	s.Taints = d.profile.NodeTaints(s)
	sort.Strings(s.Zones)
	return s
}

func clone(s provider.PoolSpec) provider.PoolSpec {
	s.Zones = slices.Clone(s.Zones)
	s.Accelerators = slices.Clone(s.Accelerators)
	s.Taints = slices.Clone(s.Taints)
	s.Labels = maps.Clone(s.Labels)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Tags = maps.Clone(s.Tags)
	s.Settings = maps.Clone(s.Settings)
	return s
}

// path names a field in a validation error. The fake has no wire format of
// its own, so it names fields by their neutral names (spec.machineType).
func path(f provider.Field) string { return "spec." + string(f) }

// unsupported refuses a spec that sets a field the provider does not have
// (NOT_IMPLEMENTED), as the API's planner does before it.
func (d *Driver) unsupported(s provider.PoolSpec) error { return provider.CheckSupported(d.caps, s) }

// immutable refuses a spec that differs from a pool in a field only a new
// pool can change (class Replace in the capabilities); fields the spec
// leaves unset are not compared.
func (d *Driver) immutable(p *pool, s provider.PoolSpec) error {
	got := p.spec
	zones := slices.Sorted(slices.Values(s.Zones))
	checks := []struct {
		field     provider.Field
		old, next string
		set       bool
	}{
		{provider.FieldMachineType, got.MachineType, s.MachineType, s.MachineType != ""},
		{provider.FieldZones, strings.Join(got.Zones, ","), strings.Join(zones, ","), true},
		{provider.FieldSpot, fmt.Sprint(got.Spot), fmt.Sprint(s.Spot), true},
		{provider.FieldDisk, fmt.Sprint(got.DiskSizeGB), fmt.Sprint(s.DiskSizeGB), s.DiskSizeGB != 0},
		{provider.FieldDisk, got.DiskType, s.DiskType, s.DiskType != ""},
		{provider.FieldAccelerators, fmt.Sprint(got.Accelerators), fmt.Sprint(s.Accelerators), true},
	}
	for _, k := range slices.Sorted(maps.Keys(s.Settings)) {
		checks = append(checks, struct {
			field     provider.Field
			old, next string
			set       bool
		}{provider.FieldImage, got.Settings[k], s.Settings[k], true})
	}
	for _, c := range checks {
		u := d.caps.Updates[c.field]
		if c.set && u.Class == kpool.UpdateReplace && !strings.EqualFold(c.old, c.next) {
			return provider.ValidationError(d.platform, path(c.field), "pool %s has %q and %s cannot change it to %q in place (%s); create a new pool",
				s.ProviderName, c.old, d.platform, c.next, u.Reason)
		}
	}
	return nil
}

// sameMutable reports whether a pool already has the settings of a spec
// that an update could change.
func (d *Driver) sameMutable(p *pool, s provider.PoolSpec) bool {
	got := p.spec
	switch {
	case got.Autoscaling != s.Autoscaling,
		s.Autoscaling && (got.MinCount != s.MinCount || got.MaxCount != s.MaxCount),
		!s.Autoscaling && got.Count != s.Count,
		!maps.Equal(got.Labels, s.Labels),
		!provider.SameTaints(got.Taints, d.profile.NodeTaints(s)),
		len(got.Tags) != len(s.Tags) || !maps.Equal(got.Tags, s.Tags),
		got.Mode != s.Mode,
		s.Version != "" && got.Version != s.Version:
		return false
	}
	return true
}
