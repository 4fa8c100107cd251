package provider

import (
	"fmt"
	"slices"
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

// Compare lists the fields kpool owns where observed differs from want, on
// the provider of profile p. Fields want leaves unset (disk size, disk type,
// version) are not compared, nor the count of an autoscaled pool (the
// autoscaler owns it), nor labels and taints in the domains of kpool,
// Kubernetes or the provider; disk types are compared as the provider
// reports them.
func Compare(p Profile, want PoolSpec, got *Pool) []Difference {
	domains := append(slices.Clone(kpool.LabelDomains), p.LabelDomains()...)
	owned := func(key string) bool { return kpool.ReservedDomain(key, domains) != "" }
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
	add(FieldLabels, userLabels(want.Labels, owned), userLabels(got.Labels, owned))
	add(FieldTaints, userTaints(want.Taints, owned), userTaints(got.Taints, owned))
	add(FieldSpot, want.Spot, got.Spot)
	add(FieldMode, want.Mode, got.Mode)
	if want.DiskSizeGB != 0 {
		add(FieldDisk, want.DiskSizeGB, got.DiskSizeGB)
	}
	if want.DiskType != "" {
		add(FieldDisk, p.DiskType(want.DiskType), p.DiskType(got.DiskType))
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

func userLabels(m map[string]string, owned func(string) bool) string {
	u := map[string]string{}
	for k, v := range m {
		if !owned(k) {
			u[k] = v
		}
	}
	return sortedPairs(u)
}

func userTaints(ts []kpool.Taint, owned func(string) bool) string {
	var out []string
	for _, t := range ts {
		if !owned(t.Key) {
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
