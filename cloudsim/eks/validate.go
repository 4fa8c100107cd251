package eks

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// EKS's rules for node groups. The enums (AMITypes, CapacityTypes,
// TaintEffect) and the required members are the service model's
// (aws-sdk-go-v2/service/eks v1.105 types/enums.go and validators.go);
// the bounds and patterns are those the EKS API reference documents for
// CreateNodegroup and UpdateNodegroupConfig, which the model does not
// carry.
var (
	amiTypes = []string{"AL2_x86_64", "AL2_x86_64_GPU", "AL2_ARM_64", "CUSTOM", "BOTTLEROCKET_ARM_64", "BOTTLEROCKET_x86_64",
		"BOTTLEROCKET_ARM_64_FIPS", "BOTTLEROCKET_x86_64_FIPS", "BOTTLEROCKET_ARM_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA",
		"BOTTLEROCKET_ARM_64_NVIDIA_FIPS", "BOTTLEROCKET_x86_64_NVIDIA_FIPS", "WINDOWS_CORE_2019_x86_64", "WINDOWS_FULL_2019_x86_64",
		"WINDOWS_CORE_2022_x86_64", "WINDOWS_FULL_2022_x86_64", "WINDOWS_CORE_2025_x86_64", "WINDOWS_FULL_2025_x86_64",
		"AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "AL2023_x86_64_NEURON", "AL2023_x86_64_NVIDIA", "AL2023_ARM_64_NVIDIA"}
	capacityTypes = []string{"ON_DEMAND", "SPOT", "CAPACITY_BLOCK"}
	taintEffects  = []string{"NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE"}

	nodegroupNameRE  = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]{0,62}$`)
	roleRE           = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$`)
	instanceTypeRE   = regexp.MustCompile(`^[a-z][a-z0-9-]*\.[a-z0-9]+$`)
	versionRE        = regexp.MustCompile(`^1\.(\d{1,2})$`)
	releaseVersionRE = regexp.MustCompile(`^1\.(\d{1,2})\.\d{1,3}-\d{8}$`)
)

const (
	maxTaints        = 50
	maxLabels        = 100
	maxTags          = 50
	maxInstanceTypes = 20
	// The quotas of Amazon EKS service quotas (service-quotas.html):
	// managed node groups per cluster and nodes per managed node group.
	maxNodegroups  = 30
	maxDesiredSize = 450
	// maxLabelLength bounds a label's key and value: 1-63 characters each
	// (CreateNodegroup and UpdateLabelsPayload, labels: "Key Length
	// Constraints: Minimum length of 1. Maximum length of 63." and the same
	// for values, EKS API Reference).
	maxLabelLength = 63
)

// validateCreate checks a CreateNodegroup request and returns the node
// group it makes, with EKS's defaults.
func (s *Server) validateCreate(c *cluster, in *createRequest) (*Nodegroup, *sim.Reply) {
	if rep := checkCreate(c, in); rep != nil {
		return nil, rep
	}
	name := *in.NodegroupName
	ng := &Nodegroup{
		NodegroupName: name, ClusterName: c.name, NodeRole: *in.NodeRole,
		NodegroupArn: fmt.Sprintf("arn:aws:eks:%s:%s:nodegroup/%s/%s/%s", c.region, c.account, c.name, name, s.NewID()),
		Status:       statusCreating, CapacityType: "ON_DEMAND", AmiType: "AL2023_x86_64_STANDARD",
		Subnets: slices.Clone(in.Subnets), InstanceTypes: []string{"t3.medium"}, Version: c.version,
		Labels: maps.Clone(in.Labels), Tags: maps.Clone(in.Tags), Taints: slices.Clone(in.Taints),
		UpdateConfig: updateConfig{MaxUnavailable: ptr.To(int32(1))},
		DiskSize:     ptr.To(int32(20)),
	}
	if ng.Labels == nil {
		ng.Labels = map[string]string{}
	}
	if ng.Tags == nil {
		ng.Tags = map[string]string{}
	}
	if ng.Taints == nil {
		ng.Taints = []taint{}
	}
	ng.ScalingConfig = scalingDefaults(in.ScalingConfig)
	if in.UpdateConfig != nil {
		ng.UpdateConfig = *in.UpdateConfig
	}
	for _, check := range []func() *sim.Reply{
		func() *sim.Reply { return checkUpdateConfig(c, name, &ng.UpdateConfig) },
		func() *sim.Reply { return checkScaling(c, name, ng.ScalingConfig) },
		func() *sim.Reply { return createCompute(c, ng, in) },
		func() *sim.Reply { return checkOffered(c, ng) },
		func() *sim.Reply {
			if in.LaunchTemplate.given() {
				return s.useTemplate(c, ng, in)
			}
			return nil
		},
		func() *sim.Reply { return checkLabels(c, name, ng.Labels) },
		func() *sim.Reply { return checkTaints(c, name, ng.Taints) },
		func() *sim.Reply {
			if msg := checkTags(ng.Tags); msg != "" {
				return invalid(c, name, "%s", msg)
			}
			return nil
		},
		func() *sim.Reply { return createVersion(c, ng, in) },
	} {
		if rep := check(); rep != nil {
			return nil, rep
		}
	}
	return ng, nil
}

// checkCreate checks a create's required members, what the emulator does
// not emulate, and the forms of its name and role.
func checkCreate(c *cluster, in *createRequest) *sim.Reply {
	name := ptr.Deref(in.NodegroupName, "")
	switch {
	case in.NodegroupName == nil:
		return invalid(c, "", "nodegroupName is required.")
	case !nodegroupNameRE.MatchString(name):
		return invalid(c, name, "Nodegroup name %s is invalid: it must be 1-63 letters, digits, '-' or '_', starting with a letter or digit.", name)
	case len(in.RemoteAccess) > 0 && string(in.RemoteAccess) != "null" && !in.LaunchTemplate.given():
		return invalid(c, name, "remoteAccess: kpool cloudsim does not emulate remote access.")
	case in.NodeRole == nil || *in.NodeRole == "":
		return invalid(c, name, "nodeRole is required.")
	case !roleRE.MatchString(*in.NodeRole):
		return invalid(c, name, "The role with name %s cannot be found: nodeRole must be an IAM role ARN.", *in.NodeRole)
	case len(in.Subnets) == 0:
		return invalid(c, name, "subnets is required: give at least one subnet of the cluster's VPC.")
	}
	for _, id := range in.Subnets {
		if _, ok := c.subnets[id]; !ok {
			return invalid(c, name, "The subnet ID '%s' does not exist (Service: AmazonEC2; Error Code: InvalidSubnetID.NotFound)", id)
		}
	}
	return nil
}

// scalingDefaults is the scalingConfig of a create: EKS's 1/2/2 when it
// gives none; a minSize of 0, a maxSize of max(minSize, 1) and a
// desiredSize of minSize for what it leaves out.
func scalingDefaults(in *scalingConfig) scalingConfig {
	if in == nil {
		return scalingConfig{MinSize: ptr.To(int32(1)), MaxSize: ptr.To(int32(2)), DesiredSize: ptr.To(int32(2))}
	}
	sc := *in
	if sc.MinSize == nil {
		sc.MinSize = ptr.To(int32(0))
	}
	if sc.MaxSize == nil {
		sc.MaxSize = ptr.To(max(*sc.MinSize, 1))
	}
	if sc.DesiredSize == nil {
		sc.DesiredSize = sc.MinSize
	}
	return sc
}

// createCompute applies a create's instance types, capacity type, AMI
// type (Graviton's by default for Graviton instances) and disk size.
func createCompute(c *cluster, ng *Nodegroup, in *createRequest) *sim.Reply {
	name := ng.NodegroupName
	if len(in.InstanceTypes) > 0 {
		if len(in.InstanceTypes) > maxInstanceTypes {
			return invalid(c, name, "instanceTypes: at most %d instance types, got %d.", maxInstanceTypes, len(in.InstanceTypes))
		}
		for _, t := range in.InstanceTypes {
			if !instanceTypeRE.MatchString(t) {
				return invalid(c, name, "Instance type %s is not supported: instanceTypes must be EC2 instance types such as m5.large.", t)
			}
		}
		ng.InstanceTypes = slices.Clone(in.InstanceTypes)
	}
	if in.CapacityType != nil {
		if !slices.Contains(capacityTypes, *in.CapacityType) {
			return invalid(c, name, "capacityType %q is invalid: it must be one of %s.", *in.CapacityType, strings.Join(capacityTypes, ", "))
		}
		ng.CapacityType = *in.CapacityType
	}
	if in.AmiType != nil {
		if !slices.Contains(amiTypes, *in.AmiType) || *in.AmiType == "CUSTOM" {
			return invalid(c, name, "amiType %q is invalid: it must be one of the AMITypes (CUSTOM only with a launch template).", *in.AmiType)
		}
		ng.AmiType = *in.AmiType
	} else if strings.Contains(first(ng.InstanceTypes), "g.") || strings.Contains(first(ng.InstanceTypes), "gd.") {
		ng.AmiType = "AL2023_ARM_64_STANDARD" // Graviton
	}
	if in.DiskSize != nil {
		if *in.DiskSize < 1 || *in.DiskSize > 16384 {
			return invalid(c, name, "diskSize must be between 1 and 16384 GiB, got %d.", *in.DiskSize)
		}
		ng.DiskSize = in.DiskSize
	}
	return nil
}

// createVersion applies a create's Kubernetes version (the cluster's by
// default) and AMI release version (the version's latest by default).
func createVersion(c *cluster, ng *Nodegroup, in *createRequest) *sim.Reply {
	name := ng.NodegroupName
	if in.Version != nil {
		// CreateNodegroup: "You can only create a node group for your
		// cluster that is equal to the current Kubernetes version for the
		// cluster."
		if rep := checkVersion(c, name, *in.Version); rep != nil {
			return rep
		}
		if *in.Version != c.version {
			return invalid(c, name, "Requested Nodegroup version %s is not the cluster's version %s: a node group can only be created at the cluster's Kubernetes version.", *in.Version, c.version)
		}
		ng.Version = *in.Version
	}
	ng.ReleaseVersion = ng.Version + ".0-20260101"
	if in.ReleaseVersion != nil {
		m := releaseVersionRE.FindStringSubmatch(*in.ReleaseVersion)
		if m == nil || !strings.HasPrefix(*in.ReleaseVersion, ng.Version+".") {
			return invalid(c, name, "Requested release version %s is not valid for kubernetes version %s.", *in.ReleaseVersion, ng.Version)
		}
		ng.ReleaseVersion = *in.ReleaseVersion
	}
	return nil
}

// checkScaling checks a scalingConfig: minSize >= 0, maxSize >= 1,
// desiredSize >= 0, minSize <= desiredSize <= maxSize.
func checkScaling(c *cluster, name string, sc scalingConfig) *sim.Reply {
	lo, hi, want := *sc.MinSize, *sc.MaxSize, *sc.DesiredSize
	switch {
	case lo < 0:
		return invalid(c, name, "Minimum capacity %d can't be less than 0.", lo)
	case hi < 1:
		return invalid(c, name, "Maximum capacity %d can't be less than 1.", hi)
	case want < 0:
		return invalid(c, name, "Desired capacity %d can't be less than 0.", want)
	case lo > hi:
		return invalid(c, name, "Minimum capacity %d can't be greater than maximum capacity %d.", lo, hi)
	case want < lo:
		return invalid(c, name, "Desired capacity %d can't be less than minimum capacity %d.", want, lo)
	case want > hi:
		return invalid(c, name, "Desired capacity %d can't be greater than maximum capacity %d.", want, hi)
	case hi > maxDesiredSize:
		return fail(errResourceLimit, apiError{Message: fmt.Sprintf("Maximum capacity %d exceeds the limit of %d nodes per managed node group.", hi, maxDesiredSize), ClusterName: c.name, NodegroupName: name})
	}
	return nil
}

// checkLabels checks Kubernetes labels: qualified-name keys, label values.
func checkLabels(c *cluster, name string, labels map[string]string) *sim.Reply {
	if len(labels) > maxLabels {
		return invalid(c, name, "labels: at most %d labels, got %d.", maxLabels, len(labels))
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if len(k) > maxLabelLength || labels[k] == "" || len(labels[k]) > maxLabelLength {
			return invalid(c, name, "labels: key %q and its value %q must each be 1-%d characters long.", k, labels[k], maxLabelLength)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return invalid(c, name, "labels: key %q is invalid: %s", k, errs[0])
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			return invalid(c, name, "labels: value %q of key %q is invalid: %s", labels[k], k, errs[0])
		}
	}
	return nil
}

// checkTaints checks taints: key and value as labels have them, an
// effect of TaintEffect, at most 50, no key and effect twice.
func checkTaints(c *cluster, name string, ts []taint) *sim.Reply {
	if len(ts) > maxTaints {
		return invalid(c, name, "taints: at most %d taints, got %d.", maxTaints, len(ts))
	}
	seen := map[string]bool{}
	for _, t := range ts {
		if rep := checkTaint(c, name, t); rep != nil {
			return rep
		}
		id := ptr.Deref(t.Key, "") + ":" + t.Effect
		if seen[id] {
			return invalid(c, name, "taints: the taint %s is given twice.", id)
		}
		seen[id] = true
	}
	return nil
}

func checkTaint(c *cluster, name string, t taint) *sim.Reply {
	k := ptr.Deref(t.Key, "")
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return invalid(c, name, "taints: key %q is invalid: %s", k, errs[0])
	}
	if errs := validation.IsValidLabelValue(ptr.Deref(t.Value, "")); len(errs) > 0 {
		return invalid(c, name, "taints: value %q of key %q is invalid: %s", ptr.Deref(t.Value, ""), k, errs[0])
	}
	if !slices.Contains(taintEffects, t.Effect) {
		return invalid(c, name, "taints: effect %q of key %q is invalid: it must be one of %s.", t.Effect, k, strings.Join(taintEffects, ", "))
	}
	return nil
}

// checkVersion checks a node group's Kubernetes version: major.minor, not
// newer than the cluster's and at most three minors older.
func checkVersion(c *cluster, name, v string) *sim.Reply {
	m := versionRE.FindStringSubmatch(v)
	cm := versionRE.FindStringSubmatch(c.version)
	if m == nil || cm == nil {
		return invalid(c, name, "Requested Kubernetes version %s is invalid: give major.minor, such as %s.", v, c.version)
	}
	minor, _ := strconv.Atoi(m[1])
	cminor, _ := strconv.Atoi(cm[1])
	switch {
	case minor > cminor:
		return invalid(c, name, "Requested Nodegroup version %s is newer than the cluster's version %s.", v, c.version)
	case minor < cminor-3:
		return invalid(c, name, "Requested Nodegroup version %s is more than three minor versions older than the cluster's version %s.", v, c.version)
	}
	return nil
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
