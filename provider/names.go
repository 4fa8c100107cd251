package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
)

// ProviderNames derives the names a pool may have at the provider from its
// kpool name, the preferred first: the kpool name itself where the provider's
// rules allow it; then the name squeezed into the rules (AKS: letters and
// digits only, 12 at most) with a hash of the full name, and of the name and
// a counter, so that two kpool names that squeeze alike still get distinct,
// repeatable names. The same pool name always gives the same list. n > 0
// asks for the first n only (a create needs one unless it is taken).
func ProviderNames(t kpool.PlatformType, pool string, n int) ([]string, error) {
	c := CapabilitiesOf(t)
	if !c.NodePools {
		return nil, NotImplemented(t, "platform %s has no node pools", t)
	}
	re := namePatterns[t]
	name := pool
	if t == kpool.PlatformAzure {
		name = strings.ReplaceAll(pool, "-", "")
	}
	var out []string
	if len(name) <= c.MaxNameLength && re.MatchString(name) {
		out = append(out, name)
	}
	keep := c.MaxNameLength - 5
	sep := ""
	if t != kpool.PlatformAzure {
		sep = "-"
		keep--
	}
	keep = min(keep, len(name))
	prefix := strings.TrimRight(name[:keep], "-_.")
	for i := 0; i < 10 && (n <= 0 || len(out) < n); i++ {
		seed := pool
		if i > 0 {
			seed = fmt.Sprintf("%s/%d", pool, i)
		}
		sum := sha256.Sum256([]byte(seed))
		hashed := prefix + sep + hex.EncodeToString(sum[:])[:5]
		if re.MatchString(hashed) && !slices.Contains(out, hashed) {
			out = append(out, hashed)
		}
	}
	if len(out) == 0 {
		return nil, &kpool.Error{Code: kpool.CodeValidation, Message: "No provider name for node pool '" + pool + "'",
			Details: "no name derived from it fits " + string(t) + "'s rules; choose another pool name"}
	}
	return out, nil
}

// ProviderName returns the first of a pool's ProviderNames that is not in
// taken; if all are taken, the pool cannot be created (CONFLICT).
func ProviderName(t kpool.PlatformType, pool string, taken []string) (string, error) {
	names, err := ProviderNames(t, pool, 0)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if !slices.Contains(taken, n) {
			return n, nil
		}
	}
	return "", &kpool.Error{Code: kpool.CodeConflict, Message: "No free provider name for node pool '" + pool + "'",
		Details: "every name derived from it is taken in this cluster at " + string(t) + "; choose another pool name"}
}
