package provider

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kpool/kpool"
)

// Difference is a field where a pool at the provider differs from what
// kpool asked for.
type Difference struct {
	Field Field
	Want  string
	Got   string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: want %s, have %s", d.Field, d.Want, d.Got)
}

// providerOwned reports whether a label or taint key is one the provider
// or kpool's placement contract sets, not the user: those are not compared.
func providerOwned(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, d := range []string{"kompox.dev", "kubernetes.io", "k8s.io", "kubernetes.azure.com", "eks.amazonaws.com", "cloud.google.com", "kubernetes.civo.com"} {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return prefix != "node-restriction.kubernetes.io"
		}
	}
	return false
}

// Compare lists the fields kpool owns where observed differs from want.
// Fields want leaves unset (disk size, disk type, version) are not
// compared, nor the count of an autoscaled pool (the autoscaler owns it),
// nor labels and taints the provider adds. diskType normalises a disk
// type the way the provider reports it ("" for unset).
func Compare(want PoolSpec, got *Pool, diskType func(string) string) []Difference {
	var out []Difference
	add := func(f Field, w, g any) {
		ws, gs := fmt.Sprint(w), fmt.Sprint(g)
		if ws != gs {
			out = append(out, Difference{f, ws, gs})
		}
	}
	if !want.Autoscaling {
		add(FieldCount, want.Count, got.Count)
	}
	add(FieldAutoscaling, bounds(want), bounds(got.PoolSpec))
	add(FieldMachineType, want.MachineType, got.MachineType)
	add(FieldZones, strings.Join(want.Zones, ","), strings.Join(got.Zones, ","))
	add(FieldLabels, userLabels(want.Labels), userLabels(got.Labels))
	add(FieldTaints, userTaints(want.Taints), userTaints(got.Taints))
	add(FieldSpot, want.Spot, got.Spot)
	add(FieldMode, want.Mode, got.Mode)
	if want.DiskSizeGB != 0 {
		add(FieldDisk, want.DiskSizeGB, got.DiskSizeGB)
	}
	if want.DiskType != "" && diskType != nil {
		add(FieldDisk, diskType(want.DiskType), diskType(got.DiskType))
	}
	if want.Version != "" {
		add(FieldVersion, want.Version, got.Version)
	}
	if len(want.Tags) > 0 {
		add(FieldTags, sortedPairs(want.Tags), sortedPairs(got.Tags))
	}
	return out
}

func bounds(s PoolSpec) string {
	if !s.Autoscaling {
		return "off"
	}
	return fmt.Sprintf("%d-%d", s.MinCount, s.MaxCount)
}

func userLabels(m map[string]string) string {
	u := map[string]string{}
	for k, v := range m {
		if !providerOwned(k) {
			u[k] = v
		}
	}
	return sortedPairs(u)
}

func userTaints(ts []kpool.Taint) string {
	var out []string
	for _, t := range ts {
		if !providerOwned(t.Key) {
			out = append(out, t.Key+"="+t.Value+":"+t.Effect)
		}
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}

func sortedPairs(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return "{" + strings.Join(out, " ") + "}"
}

// Correctable reports whether a difference can be put right by an update
// (its field changes in place, rolling nodes or for new nodes) rather than
// needing a new pool.
func (c Capabilities) Correctable(f Field) bool {
	switch c.Updates[f].Class {
	case kpool.InPlace, kpool.RollsNodes, kpool.NewNodesOnly:
		return true
	}
	return false
}

// DiskTyper is implemented by drivers whose provider reports a disk type
// in its own words (AKS: Premium_LRS is a Managed disk).
type DiskTyper interface {
	DiskType(string) string
}
