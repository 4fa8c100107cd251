package aks

import (
	"fmt"
	"net/http"
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
	if rep := skew(c.version, v, want, cv); rep != nil {
		return "", rep
	}
	if len(want.Components()) == 2 {
		if want.Minor() == cv.Minor() {
			return c.version, nil
		}
		return fmt.Sprintf("%d.%d.0", want.Major(), want.Minor()), nil
	}
	return v, nil
}

// skew answers AKS's 400 NodePoolMcVersionIncompatible for a node pool
// version the control plane's does not allow: a newer minor, a newer
// patch of the same minor, or a minor more than two behind (Microsoft's
// troubleshooting article NodePoolMcVersionIncompatible, which quotes
// the messages; https://aka.ms/version-skew-policy).
func skew(cpVersion, v string, want, cv *version.Version) *sim.Reply {
	const prefix = "Node pool version %s and control plane version %s are incompatible. "
	var why string
	switch {
	case want.Major() != cv.Major():
		why = fmt.Sprintf("Major version of node pool version %d is not control plane version %d. For more information, please check https://aka.ms/version-skew-policy.", want.Major(), cv.Major())
	case want.Minor() > cv.Minor():
		why = fmt.Sprintf("Minor version of node pool version %d is bigger than control plane version %d. For more information, please check https://aka.ms/version-skew-policy.", want.Minor(), cv.Minor())
	case want.Minor()+2 < cv.Minor():
		why = fmt.Sprintf("Minor version of node pool cannot be more than 2 versions less than control plane's version. Minor version of node pool is %d and control plane is %d. For more information, please check https://aka.ms/version-skew-policy.", want.Minor(), cv.Minor())
	case len(want.Components()) == 3 && want.Minor() == cv.Minor() && want.Patch() > cv.Patch():
		why = fmt.Sprintf("Patch version of node pool version %d is bigger than control plane version %d. For more information, please check https://aka.ms/aks/nodepoolmcversionincompatible", want.Patch(), cv.Patch())
	default:
		return nil
	}
	return targetedError(http.StatusBadRequest, "NodePoolMcVersionIncompatible", "properties.orchestratorVersion", prefix+"%s", v, cpVersion, why)
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
