package aks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// resolveVersion checks an orchestratorVersion against the cluster's and
// returns the full version it means.
func resolveVersion(c *cluster, v string) (string, *sim.Reply) {
	cm := versionRE.FindStringSubmatch(c.version)
	if cm == nil {
		return v, nil // a cluster version the emulator cannot read: take any
	}
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return "", invalid("orchestratorVersion", "%q is not a Kubernetes version (major.minor or major.minor.patch)", v)
	}
	cmaj, cmin, cpatch := atoi(cm[1]), atoi(cm[2]), atoi(cm[3])
	maj, mnr := atoi(m[1]), atoi(m[2])
	if maj != cmaj || mnr > cmin || mnr < cmin-2 {
		return "", invalid("orchestratorVersion", "version %s is not supported with control plane version %s: an agent pool runs the control plane's minor version or one of the two before it", v, c.version)
	}
	if m[3] == "" {
		if mnr == cmin {
			return c.version, nil
		}
		return fmt.Sprintf("%d.%d.0", maj, mnr), nil
	}
	if mnr == cmin && atoi(m[3]) > cpatch {
		return "", invalid("orchestratorVersion", "version %s is newer than the control plane's %s", v, c.version)
	}
	return v, nil
}

// compareVersions compares two major.minor.patch versions.
func compareVersions(a, b string) int {
	am, bm := versionRE.FindStringSubmatch(a), versionRE.FindStringSubmatch(b)
	if am == nil || bm == nil {
		return strings.Compare(a, b)
	}
	for i := 1; i <= 3; i++ {
		if x, y := atoi(am[i]), atoi(bm[i]); x != y {
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
