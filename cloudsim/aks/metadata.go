package aks

import (
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

func checkTaint(t string, spot bool) *sim.Reply {
	kv, effect, ok := strings.Cut(t, ":")
	if !ok {
		return invalid("nodeTaints", "taint %q is not of the form key=value:effect", t)
	}
	k, v, _ := strings.Cut(kv, "=")
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return invalid("nodeTaints", "taint %q: key: %s", t, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return invalid("nodeTaints", "taint %q: value: %s", t, strings.Join(errs, "; "))
	}
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return invalid("nodeTaints", "taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t, effect)
	}
	if strings.HasPrefix(k, reservedPrefix) && !(spot && t == spotTaint) {
		return invalid("nodeTaints", "taint key %q uses the prefix %s, which AKS reserves", k, reservedPrefix)
	}
	return nil
}

// checkMetadata checks the node labels and taints: Kubernetes' syntax, and
// no label in the kubernetes.azure.com domain AKS sets itself, but the
// spot label on a spot pool.
func checkMetadata(p *props) *sim.Reply {
	spot := ptr.Deref(p.ScaleSetPriority, "") == armcontainerservice.ScaleSetPrioritySpot
	for k, v := range p.NodeLabels {
		val := ptr.Deref(v, "")
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return invalid("nodeLabels", "label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
			return invalid("nodeLabels", "label %s value %q: %s", k, val, strings.Join(errs, "; "))
		}
		if strings.HasPrefix(k, reservedPrefix) && !(spot && k == spotLabelKey && val == spotLabelValue) {
			return invalid("nodeLabels", "label key %q uses the prefix %s, which AKS reserves", k, reservedPrefix)
		}
	}
	for _, t := range p.NodeTaints {
		if rep := checkTaint(ptr.Deref(t, ""), spot); rep != nil {
			return rep
		}
	}
	return nil
}

// checkTags applies ARM's tag rules to the agent pool's tags
// (https://learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations):
// at most 50 tags a resource; names of 1-512 characters, which cannot
// contain < > % & \ ? /; values of at most 256.
func checkTags(p *props) *sim.Reply {
	if len(p.Tags) > 50 {
		return invalid("tags", "%d tags are more than the 50 allowed", len(p.Tags))
	}
	for k, v := range p.Tags {
		if k == "" || len(k) > 512 || len(ptr.Deref(v, "")) > 256 {
			return invalid("tags", "tag %q: names are 1 to 512 characters and values at most 256", k)
		}
		if strings.ContainsAny(k, `<>%&\?/`) {
			return invalid("tags", "tag name %q: tag names cannot contain < > %% & \\ ? /", k)
		}
	}
	return nil
}

// strs are enumerated values as strings.
func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
