package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// ProviderName derives a pool's name at the provider from its kpool name:
// the kpool name itself where the provider's rules allow it; otherwise the
// name squeezed into the rules (AKS: letters and digits only, 12 at most)
// with a hash of the full name when it had to be cut, so that the result is
// the same every time. A name in taken gets the hashed form instead; if
// that is taken too, the pool cannot be created (CONFLICT).
func ProviderName(t kpool.PlatformType, pool string, taken []string) (string, error) {
	c := CapabilitiesOf(t)
	if !c.NodePools {
		return "", NotImplemented(t, "platform %s has no node pools", t)
	}
	re := namePatterns[t]
	isTaken := func(n string) bool {
		for _, x := range taken {
			if strings.EqualFold(x, n) {
				return true
			}
		}
		return false
	}
	name := pool
	if t == kpool.PlatformAzure {
		name = strings.ReplaceAll(pool, "-", "")
	}
	if len(name) <= c.MaxNameLength && re.MatchString(name) && !isTaken(name) {
		return name, nil
	}
	keep := c.MaxNameLength - 5
	sep := ""
	if t != kpool.PlatformAzure {
		sep = "-"
		keep--
	}
	keep = min(keep, len(name))
	prefix := strings.TrimRight(name[:keep], "-_.")
	// The hash of the full name, then of the name and a counter, until one
	// is free: the same pool name and taken names give the same result.
	for i := 0; i < 10; i++ {
		seed := pool
		if i > 0 {
			seed = fmt.Sprintf("%s/%d", pool, i)
		}
		sum := sha256.Sum256([]byte(seed))
		hashed := prefix + sep + hex.EncodeToString(sum[:])[:5]
		if re.MatchString(hashed) && !isTaken(hashed) {
			return hashed, nil
		}
	}
	return "", &kpool.Error{Code: kpool.CodeConflict, Message: "No free provider name for node pool '" + pool + "'",
		Details: "every name derived from it is taken in this cluster at " + string(t) + "; choose another pool name"}
}
