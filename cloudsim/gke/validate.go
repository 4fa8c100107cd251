package gke

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	container "google.golang.org/api/container/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kpool/kpool/cloudsim/sim"
)

// zonesOf are the zones of the regions the emulator knows, as
// https://cloud.google.com/compute/docs/regions-zones lists them; other
// regions are taken to have zones a, b and c.
var zonesOf = map[string]string{
	"us-central1": "abcf", "us-east1": "bcd", "us-east4": "abc", "us-east5": "abc", "us-south1": "abc",
	"us-west1": "abc", "us-west2": "abc", "us-west3": "abc", "us-west4": "abc",
	"northamerica-northeast1": "abc", "northamerica-northeast2": "abc", "southamerica-east1": "abc",
	"europe-west1": "bcd", "europe-west2": "abc", "europe-west3": "abc", "europe-west4": "abc",
	"europe-west6": "abc", "europe-west8": "abc", "europe-west9": "abc", "europe-north1": "abc",
	"europe-central2": "abc", "europe-southwest1": "abc",
	"asia-east1": "abc", "asia-east2": "abc", "asia-northeast1": "abc", "asia-northeast2": "abc",
	"asia-northeast3": "abc", "asia-south1": "abc", "asia-southeast1": "abc", "asia-southeast2": "abc",
	"australia-southeast1": "abc", "me-west1": "abc",
}

var (
	regionRE  = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	zoneRE    = regexp.MustCompile(`^([a-z]+-[a-z]+[0-9]+)-([a-z])$`)
	poolName  = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)
	machineRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)+$`)
	// versionRE is a GKE version: 1.30, 1.30.5 or 1.30.5-gke.1014001.
	versionRE = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?$`)
	// The label patterns are compiled on first use: their Unicode classes
	// made 8 MB of every kpool process's start, emulator or not.
	gcpLabelK  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$`) })
	gcpLabelV  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$`) })
	diskTypes  = []string{"pd-standard", "pd-balanced", "pd-ssd", "pd-extreme", "hyperdisk-balanced", "hyperdisk-extreme", "hyperdisk-throughput", "hyperdisk-ml"}
	taintKinds = []string{"NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"}
	// accelerators are the GPU types of https://cloud.google.com/compute/docs/gpus.
	accelerators = []string{"nvidia-tesla-k80", "nvidia-tesla-p4", "nvidia-tesla-p100", "nvidia-tesla-v100", "nvidia-tesla-t4",
		"nvidia-tesla-a100", "nvidia-a100-80gb", "nvidia-l4", "nvidia-h100-80gb", "nvidia-h100-mega-80gb", "nvidia-h200-141gb",
		"nvidia-b200", "nvidia-gb200", "nvidia-rtx-pro-6000"}
)

// maxPerZone is GKE's limit of nodes in one zone of a node pool.
const maxPerZone = 1000

// regionZones are a region's zones; none for what is not a region name.
func regionZones(region string) []string {
	if !regionRE.MatchString(region) {
		return nil
	}
	letters, ok := zonesOf[region]
	if !ok {
		letters = "abc"
	}
	var out []string
	for _, l := range letters {
		out = append(out, region+"-"+string(l))
	}
	return out
}

func isZone(location string) bool { return zoneRE.MatchString(location) }

// region is a location's region.
func region(location string) string {
	if m := zoneRE.FindStringSubmatch(location); m != nil {
		return m[1]
	}
	return location
}

// checkLocations refuses zones the cluster's region does not have.
func checkLocations(c *cluster, field string, zones []string) *sim.Reply {
	have := regionZones(region(c.location))
	seen := map[string]bool{}
	for _, z := range zones {
		switch {
		case !slices.Contains(have, z):
			return invalid(field, "Location %q is not a zone of region %s (its zones: %s).", z, region(c.location), strings.Join(have, ", "))
		case seen[z]:
			return invalid(field, "Location %q is given twice.", z)
		}
		seen[z] = true
	}
	return nil
}

// minDisk is the smallest boot disk of a node version (container-api.json,
// NodeConfig.diskSizeGb): 15 GB from 1.36.3-gke.1480000, 12 GB before.
func minDisk(version string) int64 {
	if compareVersions(version, "1.36.3-gke.1480000") >= 0 {
		return 15
	}
	return 12
}

// checkConfig checks a node pool's NodeConfig (field is its JSON path).
func checkConfig(field string, cfg *container.NodeConfig, version string) *sim.Reply {
	if !machineRE.MatchString(cfg.MachineType) {
		return invalid(field+".machineType", "Invalid machine type %q.", cfg.MachineType)
	}
	if rep := checkDisk(field, cfg.DiskSizeGb, cfg.DiskType, version); rep != nil {
		return rep
	}
	if cfg.Preemptible && cfg.Spot {
		return invalid(field+".spot", "Only one of preemptible and spot may be set.")
	}
	for i, a := range cfg.Accelerators {
		af := fmt.Sprintf("%s.accelerators[%d]", field, i)
		if !slices.Contains(accelerators, a.AcceleratorType) {
			return invalid(af+".acceleratorType", "Accelerator type %q does not exist (types: %s).", a.AcceleratorType, strings.Join(accelerators, ", "))
		}
		if a.AcceleratorCount < 1 || a.AcceleratorCount > 16 {
			return invalid(af+".acceleratorCount", "Accelerator count must be between 1 and 16, got %d.", a.AcceleratorCount)
		}
	}
	if rep := checkLabels(field+".labels", cfg.Labels); rep != nil {
		return rep
	}
	if rep := checkTaints(field+".taints", cfg.Taints); rep != nil {
		return rep
	}
	return checkResourceLabels(field+".resourceLabels", cfg.ResourceLabels)
}

func checkDisk(field string, size int64, typ, version string) *sim.Reply {
	if size != 0 && (size < minDisk(version) || size > 65536) {
		return invalid(field+".diskSizeGb", "Disk size must be between %d and 65536 GB, got %d.", minDisk(version), size)
	}
	if typ != "" && !slices.Contains(diskTypes, typ) {
		return invalid(field+".diskType", "Invalid disk type %q (types: %s).", typ, strings.Join(diskTypes, ", "))
	}
	return nil
}

// checkLabels applies Kubernetes' label rules and GKE's reserved keys.
func checkLabels(field string, labels map[string]string) *sim.Reply {
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return invalid(field, "Invalid label key %q: %s.", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return invalid(field, "Invalid value %q of label %q: %s.", v, k, strings.Join(errs, "; "))
		}
		for _, reserved := range []string{"cloud.google.com/gke-", "kubernetes.io/", "k8s.io/"} {
			if strings.HasPrefix(k, reserved) || strings.Contains(k, "."+reserved) {
				return invalid(field, "Label %q is in a domain GKE reserves (%s).", k, reserved)
			}
		}
	}
	return nil
}

func checkTaints(field string, taints []*container.NodeTaint) *sim.Reply {
	for i, t := range taints {
		tf := fmt.Sprintf("%s[%d]", field, i)
		if t == nil {
			return invalid(tf, "A taint is null.")
		}
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return invalid(tf+".key", "Invalid taint key %q: %s.", t.Key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return invalid(tf+".value", "Invalid taint value %q: %s.", t.Value, strings.Join(errs, "; "))
		}
		if !slices.Contains(taintKinds, t.Effect) {
			return invalid(tf+".effect", "Invalid taint effect %q (effects: %s).", t.Effect, strings.Join(taintKinds, ", "))
		}
	}
	return nil
}

// checkResourceLabels applies the rules of Google Cloud labels
// (https://cloud.google.com/compute/docs/labeling-resources#requirements):
// at most 64; keys of 1-63 lowercase letters, digits, '_' or '-', starting
// with a letter; values of at most 63 of them. kpool's owner's mark
// (kpool-installation, kpool-pool) is two of them.
func checkResourceLabels(field string, labels map[string]string) *sim.Reply {
	if len(labels) > 64 {
		return invalid(field, "At most 64 resource labels, got %d.", len(labels))
	}
	for k, v := range labels {
		if !gcpLabelK().MatchString(k) || !gcpLabelV().MatchString(v) {
			return invalid(field, "Invalid resource label %q=%q: keys are 1-63 lowercase letters, digits, '_' or '-' starting with a letter; values up to 63 of them.", k, v)
		}
	}
	return nil
}

// checkAutoscaling checks a NodePoolAutoscaling: per-zone and total bounds
// are mutually exclusive; min <= max; max at least 1.
func checkAutoscaling(field string, a *container.NodePoolAutoscaling) *sim.Reply {
	if a == nil || !a.Enabled {
		return nil
	}
	perZone := a.MinNodeCount != 0 || a.MaxNodeCount != 0
	total := a.TotalMinNodeCount != 0 || a.TotalMaxNodeCount != 0
	switch {
	case perZone && total:
		return invalid(field, "The total_*_node_count fields are mutually exclusive with the *_node_count fields.")
	case a.LocationPolicy != "" && a.LocationPolicy != "BALANCED" && a.LocationPolicy != "ANY":
		return invalid(field+".locationPolicy", "Invalid location policy %q.", a.LocationPolicy)
	case total:
		if a.TotalMinNodeCount < 0 || a.TotalMaxNodeCount < 1 || a.TotalMinNodeCount > a.TotalMaxNodeCount {
			return invalid(field+".totalMaxNodeCount", "Total node counts must satisfy 0 <= totalMinNodeCount (%d) <= totalMaxNodeCount (%d), and totalMaxNodeCount >= 1.", a.TotalMinNodeCount, a.TotalMaxNodeCount)
		}
	default:
		if a.MinNodeCount < 0 || a.MaxNodeCount < 1 || a.MinNodeCount > a.MaxNodeCount || a.MaxNodeCount > maxPerZone {
			return invalid(field+".maxNodeCount", "Node counts must satisfy 0 <= minNodeCount (%d) <= maxNodeCount (%d), 1 <= maxNodeCount <= %d.", a.MinNodeCount, a.MaxNodeCount, maxPerZone)
		}
	}
	return nil
}

// resolveVersion returns the node version a request's version leads to in
// cluster c: "" "-" and "latest" are the control plane's; 1.30 and 1.30.5
// the control plane's build when they name its version, else .0 and
// -gke.100 of it. A node version may not be newer than the control plane,
// nor more than three minor versions older.
func resolveVersion(c *cluster, field, v string) (string, *sim.Reply) {
	if v == "" || v == "-" || v == "latest" {
		return c.version, nil
	}
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return "", invalid(field, "Version %q is invalid: give a GKE version such as 1.30.5-gke.1014001, 1.30.5 or 1.30, or \"latest\".", v)
	}
	full := v
	switch {
	case strings.HasPrefix(c.version+".", v+".") || strings.HasPrefix(c.version+"-", v+"-"):
		full = c.version
	case m[3] == "":
		full = v + ".0-gke.100"
	case m[4] == "":
		full = v + "-gke.100"
	}
	cm := versionRE.FindStringSubmatch(c.version)
	if cm == nil {
		return full, nil
	}
	if compareVersions(full, c.version) > 0 {
		return "", invalid(field, "Node version %q must not be newer than the control plane's %q.", v, c.version)
	}
	if atoi(cm[1]) == atoi(m[1]) && atoi(cm[2])-atoi(m[2]) > 3 {
		return "", invalid(field, "Node version %q is more than three minor versions older than the control plane's %q.", v, c.version)
	}
	return full, nil
}

// compareVersions compares GKE versions part by part.
func compareVersions(a, b string) int {
	pa, pb := versionRE.FindStringSubmatch(a), versionRE.FindStringSubmatch(b)
	if pa == nil || pb == nil {
		return strings.Compare(a, b)
	}
	for i := 1; i <= 4; i++ {
		if x, y := atoi(pa[i]), atoi(pb[i]); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
