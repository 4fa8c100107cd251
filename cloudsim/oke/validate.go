package oke

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// decodeStrict decodes a request body into the SDK's own type, refusing a
// field the API model does not have: the body is decoded, encoded again
// and every member of the body must be there.
func decodeStrict(body []byte, v any) *sim.Reply {
	if len(bytes.TrimSpace(body)) == 0 {
		return failf(http.StatusBadRequest, errCannotParse, "The request body is empty.")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return failf(http.StatusBadRequest, errCannotParse, "The request body could not be parsed: %v", err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		return failf(http.StatusBadRequest, errCannotParse, "The request body could not be parsed: %v", err)
	}
	var raw, known any
	_ = json.Unmarshal(body, &raw)
	_ = json.Unmarshal(again, &known)
	if path := unknown(raw, known, ""); path != "" {
		return invalid("Unknown field %s in the request body.", path)
	}
	return nil
}

// unknown returns the first member of raw (as JSON paths) that known lacks.
func unknown(raw, known any, at string) string {
	switch r := raw.(type) {
	case map[string]any:
		k, _ := known.(map[string]any)
		for name, v := range r {
			if v == nil {
				continue
			}
			kv, ok := k[name]
			if !ok {
				return strings.TrimPrefix(at+"."+name, ".")
			}
			if p := unknown(v, kv, at+"."+name); p != "" {
				return p
			}
		}
	case []any:
		k, _ := known.([]any)
		for i, v := range r {
			if i >= len(k) {
				return fmt.Sprintf("%s[%d]", at, i)
			}
			if p := unknown(v, k[i], fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

var (
	// OKE's Kubernetes versions: v<major>.<minor>.<patch>.
	versionRE = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`)
	// Compute shapes: VM.Standard.E4.Flex, BM.GPU.A10.4, …
	shapeRE = regexp.MustCompile(`^(VM|BM)\.[A-Za-z0-9]+(\.[A-Za-z0-9]+)+$`)
	// Kubernetes label keys (optional DNS prefix, name) and values.
	labelKeyRE   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValueRE = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

// versions are the Kubernetes versions a node pool of c may run, newest
// first: the control plane's, and the latest patch of each of the two
// minor versions before it (as GetNodePoolOptions lists them).
func (c *cluster) versions() []string {
	m := versionRE.FindStringSubmatch(c.Version)
	if m == nil {
		return []string{c.Version}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	out := []string{c.Version}
	for i := 1; i <= 2 && minor-i >= 0; i++ {
		out = append(out, fmt.Sprintf("v%d.%d.%d", major, minor-i, 10))
	}
	return out
}

func (c *cluster) checkVersion(v string, current string) *sim.Reply {
	if !versionRE.MatchString(v) {
		return invalid("kubernetesVersion %q is not a Kubernetes version OKE offers (v<major>.<minor>.<patch>, such as %s).", v, c.Version)
	}
	if !slices.Contains(c.versions(), v) {
		return invalid("kubernetesVersion %s is not supported for node pools of cluster %s: use one of %s.", v, c.ID, strings.Join(c.versions(), ", "))
	}
	if current != "" && versionLess(v, current) {
		return invalid("kubernetesVersion cannot be downgraded from %s to %s.", current, v)
	}
	return nil
}

// versionLess compares two versions of versionRE's form.
func versionLess(a, b string) bool {
	am, bm := versionRE.FindStringSubmatch(a), versionRE.FindStringSubmatch(b)
	if am == nil || bm == nil {
		return false
	}
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(am[i])
		y, _ := strconv.Atoi(bm[i])
		if x != y {
			return x < y
		}
	}
	return false
}

func checkShape(shape string, sc *ce.NodeShapeConfig) *sim.Reply {
	if !shapeRE.MatchString(shape) {
		return invalid("nodeShape %q is not a compute shape (such as VM.Standard.E4.Flex).", shape)
	}
	flex := strings.HasSuffix(shape, ".Flex")
	switch {
	case flex && (sc == nil || sc.Ocpus == nil):
		return invalid("nodeShapeConfig.ocpus is required for the flexible shape %s.", shape)
	case !flex && sc != nil && (sc.Ocpus != nil || sc.MemoryInGBs != nil):
		return invalid("nodeShapeConfig can only be given for a flexible shape, not %s.", shape)
	case sc == nil:
		return nil
	}
	o, m := ptr.Deref(sc.Ocpus, 0), ptr.Deref(sc.MemoryInGBs, 0)
	if o < 1 || o > 114 {
		return invalid("nodeShapeConfig.ocpus must be between 1 and 114 for %s, got %v.", shape, o)
	}
	if sc.MemoryInGBs != nil && (m < 1 || m > 64*o || m > 1776) {
		return invalid("nodeShapeConfig.memoryInGBs must be between 1 and 64 GB per OCPU (at most 1776) for %s, got %v.", shape, m)
	}
	return nil
}

func checkSource(src ce.NodeSourceDetails) *sim.Reply {
	img, ok := src.(ce.NodeSourceViaImageDetails)
	if !ok {
		return invalid("nodeSourceDetails.sourceType must be IMAGE.")
	}
	if !strings.HasPrefix(ptr.Deref(img.ImageId, ""), "ocid1.image.") {
		return invalid("nodeSourceDetails.imageId %q is not an image OCID.", ptr.Deref(img.ImageId, ""))
	}
	if b := img.BootVolumeSizeInGBs; b != nil && (*b < 50 || *b > 32768) {
		return invalid("nodeSourceDetails.bootVolumeSizeInGBs must be between 50 and 32768, got %d.", *b)
	}
	return nil
}

// checkPlacement checks a pool's size and placement against its cluster.
func (c *cluster) checkPlacement(size *int, pcs []ce.NodePoolPlacementConfigDetails) *sim.Reply {
	if size != nil && *size < 0 {
		return invalid("nodeConfigDetails.size must be 0 or more, got %d.", *size)
	}
	if len(pcs) == 0 {
		return invalid("nodeConfigDetails.placementConfigs must name at least one availability domain.")
	}
	seen := map[string]bool{}
	preempt := -1
	for i, pc := range pcs {
		ad, sub := ptr.Deref(pc.AvailabilityDomain, ""), ptr.Deref(pc.SubnetId, "")
		switch {
		case ad == "":
			return missing(fmt.Sprintf("nodeConfigDetails.placementConfigs[%d].availabilityDomain", i))
		case sub == "":
			return missing(fmt.Sprintf("nodeConfigDetails.placementConfigs[%d].subnetId", i))
		case seen[ad]:
			return invalid("nodeConfigDetails.placementConfigs: availability domain %s is given twice.", ad)
		}
		seen[ad] = true
		want, ok := c.Subnets[ad]
		if !ok {
			return invalid("nodeConfigDetails.placementConfigs[%d].availabilityDomain %s is not an availability domain of region %s.", i, ad, c.Region)
		}
		if sub != want && !c.hasSubnet(sub) {
			return relatedNotFound("nodeConfigDetails.placementConfigs[%d].subnetId %s", i, sub)
		}
		p := 0
		if pc.PreemptibleNodeConfig != nil {
			p = 1
			if _, ok := pc.PreemptibleNodeConfig.PreemptionAction.(ce.TerminatePreemptionAction); !ok {
				return invalid("nodeConfigDetails.placementConfigs[%d].preemptibleNodeConfig.preemptionAction.type must be TERMINATE.", i)
			}
		}
		if preempt >= 0 && p != preempt {
			return invalid("nodeConfigDetails.placementConfigs: preemptibleNodeConfig must be the same in every placement configuration.")
		}
		preempt = p
	}
	return nil
}

func (c *cluster) hasSubnet(id string) bool {
	for _, s := range c.Subnets {
		if s == id {
			return true
		}
	}
	return false
}

// validateCreate checks CreateNodePoolDetails and returns the pool's
// cluster.
func (s *Server) validateCreate(in *ce.CreateNodePoolDetails) (*cluster, *sim.Reply) {
	for _, m := range []struct {
		name string
		v    *string
	}{{"compartmentId", in.CompartmentId}, {"clusterId", in.ClusterId}, {"name", in.Name}, {"nodeShape", in.NodeShape}} {
		if ptr.Deref(m.v, "") == "" {
			return nil, missing(m.name)
		}
	}
	c, ok := s.clusters[*in.ClusterId]
	if !ok || c.CompartmentID != *in.CompartmentId {
		return nil, relatedNotFound("clusterId %s", *in.ClusterId)
	}
	if n := *in.Name; len(n) > 255 || strings.TrimSpace(n) != n {
		return nil, invalid("name must be 1-255 characters without leading or trailing spaces.")
	}
	if in.KubernetesVersion != nil {
		if rep := c.checkVersion(*in.KubernetesVersion, ""); rep != nil {
			return nil, rep
		}
	}
	var sc *ce.NodeShapeConfig
	if in.NodeShapeConfig != nil {
		sc = &ce.NodeShapeConfig{Ocpus: in.NodeShapeConfig.Ocpus, MemoryInGBs: in.NodeShapeConfig.MemoryInGBs}
	}
	if rep := checkShape(*in.NodeShape, sc); rep != nil {
		return nil, rep
	}
	switch {
	case in.NodeSourceDetails == nil && in.NodeImageName == nil:
		return nil, missing("nodeSourceDetails")
	case in.NodeSourceDetails == nil:
		return nil, invalid("nodeImageName is deprecated and not emulated by kpool cloudsim: give nodeSourceDetails.")
	}
	if rep := checkSource(in.NodeSourceDetails); rep != nil {
		return nil, rep
	}
	switch {
	case in.QuantityPerSubnet != nil || len(in.SubnetIds) > 0:
		return nil, invalid("quantityPerSubnet and subnetIds are not emulated by kpool cloudsim: give nodeConfigDetails.")
	case in.NodeConfigDetails == nil:
		return nil, missing("nodeConfigDetails")
	case in.NodeConfigDetails.Size == nil:
		return nil, missing("nodeConfigDetails.size")
	}
	if rep := c.checkPlacement(in.NodeConfigDetails.Size, in.NodeConfigDetails.PlacementConfigs); rep != nil {
		return nil, rep
	}
	if rep := c.checkOffered(*in.NodeShape, in.NodeConfigDetails.PlacementConfigs); rep != nil {
		return nil, rep
	}
	if rep := checkLabels(in.InitialNodeLabels); rep != nil {
		return nil, rep
	}
	if rep := checkTags("freeformTags", in.FreeformTags); rep != nil {
		return nil, rep
	}
	if rep := checkTags("nodeConfigDetails.freeformTags", in.NodeConfigDetails.FreeformTags); rep != nil {
		return nil, rep
	}
	if rep := checkCycling(in.NodePoolCyclingDetails, *in.NodeConfigDetails.Size); rep != nil {
		return nil, rep
	}
	if rep := checkEviction(in.NodeEvictionNodePoolSettings); rep != nil {
		return nil, rep
	}
	return c, nil
}
