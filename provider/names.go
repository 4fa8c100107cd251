package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/kpool/kpool"
)

// NameRules are a provider's rules for pool names, and how kpool squeezes a
// kpool name into them.
type NameRules struct {
	MaxLength int    `json:"maxLength"`
	Pattern   string `json:"pattern"`
	// Drop lists characters removed from a kpool name before it is tried
	// (AKS allows no '-').
	Drop string `json:"drop,omitempty"`
	// Separator goes between a shortened name and its hash ("" where the
	// pattern allows none).
	Separator string `json:"separator,omitempty"`
}

// patterns caches compiled NameRules patterns.
var patterns sync.Map // string -> *regexp.Regexp

// Match reports whether name is a valid pool name at the provider.
func (r NameRules) Match(name string) bool {
	re, ok := patterns.Load(r.Pattern)
	if !ok {
		re, _ = patterns.LoadOrStore(r.Pattern, regexp.MustCompile(r.Pattern))
	}
	return len(name) <= r.MaxLength && re.(*regexp.Regexp).MatchString(name)
}

// ProviderNames derives the names a pool may have at the provider from its
// kpool name, the preferred first: the kpool name itself where the provider's
// rules allow it; then the name squeezed into the rules with a hash of the
// full name, and of the name and a counter, so that two kpool names that
// squeeze alike still get distinct, repeatable names. The same pool name
// always gives the same list. n > 0 asks for the first n only (a create needs
// one unless it is taken).
func ProviderNames(c Capabilities, pool string, n int) ([]string, error) {
	if !c.NodePools {
		return nil, NotImplementedError(c.Provider, "platform %s has no node pools", c.Provider)
	}
	r := c.Names
	name := pool
	for _, d := range r.Drop {
		name = strings.ReplaceAll(name, string(d), "")
	}
	var out []string
	if r.Match(name) {
		out = append(out, name)
	}
	keep := min(r.MaxLength-5-len(r.Separator), len(name))
	prefix := strings.TrimRight(name[:max(keep, 0)], "-_.")
	for i := 0; i < 10 && (n <= 0 || len(out) < n); i++ {
		seed := pool
		if i > 0 {
			seed = fmt.Sprintf("%s/%d", pool, i)
		}
		sum := sha256.Sum256([]byte(seed))
		hashed := prefix + r.Separator + hex.EncodeToString(sum[:])[:5]
		if r.Match(hashed) && !slices.Contains(out, hashed) {
			out = append(out, hashed)
		}
	}
	if len(out) == 0 {
		return nil, &kpool.Error{Code: kpool.CodeValidation, Message: "No provider name for node pool '" + pool + "'",
			Details: "no name derived from it fits " + string(c.Provider) + "'s rules; choose another pool name"}
	}
	return out, nil
}

// ProviderName returns the first of a pool's ProviderNames that is not in
// taken; if all are taken, the pool cannot be created (CONFLICT).
func ProviderName(c Capabilities, pool string, taken []string) (string, error) {
	names, err := ProviderNames(c, pool, 0)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if !slices.Contains(taken, n) {
			return n, nil
		}
	}
	return "", &kpool.Error{Code: kpool.CodeConflict, Message: "No free provider name for node pool '" + pool + "'",
		Details: "every name derived from it is taken in this cluster at " + string(c.Provider) + "; choose another pool name"}
}
