package kpool

import (
	"slices"
	"strings"
	"time"
)

// ClusterFacts are what kpool learns of a cluster from its provider to
// check pools before the provider sees them (preflight): its versions,
// zones and the machine types its region offers. The controllers learn
// them when a cluster is registered and again on the slow resync; a
// check whose facts are missing or stale is skipped, never a refusal.
type ClusterFacts struct {
	// LearnedAt is when the provider was asked.
	LearnedAt time.Time `json:"learnedAt"`
	// Version is the control plane's Kubernetes version ("1.31.2").
	Version string `json:"version,omitempty"`
	// PoolVersions are the Kubernetes versions a new or changed pool may
	// run ("1.30.9", "1.31.2"); empty: not known.
	PoolVersions []string `json:"poolVersions,omitempty"`
	// Zones are the cluster's zones, logical ("1", "2"…) as pools name
	// them; empty for a provider without zones.
	Zones []string `json:"zones,omitempty"`
	// DefaultZones are the zones a pool that names none is placed in,
	// where the provider decides it from the cluster (GKE's default node
	// locations); empty: not one fixed set.
	DefaultZones []string `json:"defaultZones,omitempty"`
	// MachineTypes are the machine types (sizes, shapes) offered to the
	// cluster's pools, by name; empty: not known.
	MachineTypes []MachineType `json:"machineTypes,omitempty"`
	// Partial says what could not be learnt, and why (a catalogue the
	// credential may not read): those checks are skipped.
	Partial []string `json:"partial,omitempty"`
}

// MachineType is a machine type the cluster's region offers.
type MachineType struct {
	Name      string `json:"name"`
	CPUs      int    `json:"cpus,omitempty"`
	MemoryMiB int    `json:"memoryMiB,omitempty"`
	GPUs      int    `json:"gpus,omitempty"`
	// Zones are the logical zones it is offered in; nil (null): every
	// zone of the cluster; empty: none (a size offered only regionally,
	// in a zonal location).
	Zones []string `json:"zones"`
	// NoSpot: it is not offered as spot (preemptible) capacity.
	NoSpot bool `json:"noSpot,omitempty"`
}

// MachineType returns the offered machine type of a name, compared as
// the provider compares names (case-insensitively: ARM and EC2 ignore
// case, the others use lower case alone).
func (f *ClusterFacts) MachineType(name string) (*MachineType, bool) {
	for i := range f.MachineTypes {
		if strings.EqualFold(f.MachineTypes[i].Name, name) {
			return &f.MachineTypes[i], true
		}
	}
	return nil, false
}

// OfferedIn reports whether the machine type is offered in a logical zone.
func (m *MachineType) OfferedIn(zone string) bool {
	return m.Zones == nil || slices.Contains(m.Zones, zone)
}

// Age is how old the facts are at now.
func (f *ClusterFacts) Age(now time.Time) time.Duration { return now.Sub(f.LearnedAt) }

// Sort puts the facts in a fixed order (machine types by name, zones
// ascending), so that two learnings of the same catalogue are equal.
func (f *ClusterFacts) Sort() {
	slices.SortFunc(f.MachineTypes, func(a, b MachineType) int { return strings.Compare(a.Name, b.Name) })
	for i := range f.MachineTypes {
		slices.Sort(f.MachineTypes[i].Zones)
	}
	slices.Sort(f.Zones)
	slices.Sort(f.DefaultZones)
	slices.Sort(f.PoolVersions)
}
