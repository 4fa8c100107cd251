package kpool

import (
	"regexp"
	"sync"
)

// The patterns below bound their lengths with counted repetitions
// ({0,127}, {0,251}), which compile to programs of hundreds of
// instructions: together 0.6 MB allocated at start-up. They compile on
// first use instead, so that a process that validates nothing (an idle
// server, the CLI) does not build them.
var (
	machineTypeRE = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._\-]{0,127}$`)
	// versionRE is MAJOR.MINOR[.PATCH], and after a patch a provider's
	// build suffix (GKE's 1.30.5-gke.1014001, an EKS AMI's 1.31.2-20250101),
	// which the provider's profile checks.
	versionRE      = lazyRegexp(`^v?(\d{1,9})\.(\d{1,9})(\.\d{1,9}(-[0-9A-Za-z][0-9A-Za-z.\-]{0,62})?)?$`)
	zoneRE         = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9:._\-]{0,127}$`)
	controllerName = lazyRegexp(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	conditionType  = lazyRegexp(`^[A-Za-z][A-Za-z0-9_.-]{0,62}$`)
	credentialRE   = lazyRegexp(`^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$`)
	conditionWhy   = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
)

// lazyRegexp is pattern, compiled once, when it is first asked for.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
