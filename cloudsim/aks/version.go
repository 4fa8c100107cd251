package aks

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kpool/kpool/cloudsim/sim"
)

// parseVersion reads a Kubernetes version as AKS takes one:
// major.minor or major.minor.patch, nothing around it.
func parseVersion(s string) (*version.Version, bool) {
	if !versionRE.MatchString(s) {
		return nil, false
	}
	v, err := version.ParseGeneric(s)
	return v, err == nil
}

// resolveVersion checks an orchestratorVersion against the cluster's and
// returns the full version it means.
func resolveVersion(c *cluster, v string) (string, *sim.Reply) {
	cv, ok := parseVersion(c.version)
	if !ok {
		return v, nil // a cluster version the emulator cannot read: take any
	}
	want, ok := parseVersion(v)
	if !ok {
		return "", invalid("orchestratorVersion", "%q is not a Kubernetes version (major.minor or major.minor.patch)", v)
	}
	if want.Major() != cv.Major() || want.Minor() > cv.Minor() || want.Minor()+2 < cv.Minor() {
		return "", invalid("orchestratorVersion", "version %s is not supported with control plane version %s: an agent pool runs the control plane's minor version or one of the two before it", v, c.version)
	}
	if len(want.Components()) == 2 {
		if want.Minor() == cv.Minor() {
			return c.version, nil
		}
		return fmt.Sprintf("%d.%d.0", want.Major(), want.Minor()), nil
	}
	if want.Minor() == cv.Minor() && want.Patch() > cv.Patch() {
		return "", invalid("orchestratorVersion", "version %s is newer than the control plane's %s", v, c.version)
	}
	return v, nil
}

// compareVersions compares two versions numerically, or as strings when
// either is not one.
func compareVersions(a, b string) int {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	switch {
	case !okA || !okB:
		return strings.Compare(a, b)
	case va.LessThan(vb):
		return -1
	case vb.LessThan(va):
		return 1
	}
	return 0
}
