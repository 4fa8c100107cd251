package provider

import (
	"crypto/sha256"
	"encoding/hex"
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
	sum := sha256.Sum256([]byte(pool))
	tag := hex.EncodeToString(sum[:])[:5]
	keep := c.MaxNameLength - len(tag)
	sep := ""
	if t != kpool.PlatformAzure {
		sep = "-"
		keep--
	}
	if len(name) < keep {
		keep = len(name)
	}
	hashed := strings.TrimRight(name[:keep], "-_.") + sep + tag
	if !re.MatchString(hashed) || isTaken(hashed) {
		return "", &kpool.Error{Code: kpool.CodeConflict, Message: "No free provider name for node pool '" + pool + "'",
			Details: "both " + name + " and " + hashed + " are taken in this cluster at " + string(t) + "; choose another pool name"}
	}
	return hashed, nil
}
