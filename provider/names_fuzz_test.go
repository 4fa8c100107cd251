package provider_test

import (
	"slices"
	"testing"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// FuzzProviderNames: for any pool name and every platform with pools, the
// provider names derived either are refused with an error or all fit the
// provider's rules, are distinct, and are the same every time.
func FuzzProviderNames(f *testing.F) {
	for _, s := range []string{"workers", "gpu-pool-1", "a", "", "-", "a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p", "UPPER", "é", "x.y_z",
		"production-workers-with-a-very-long-name-that-goes-past-every-limit-of-every-provider"} {
		f.Add(s)
	}
	profiles := catalog.Profiles()
	f.Fuzz(func(t *testing.T, pool string) {
		for _, p := range profiles {
			c := p.Capabilities()
			if !c.NodePools {
				continue
			}
			names, err := provider.ProviderNames(c, pool, 0)
			if err != nil {
				continue
			}
			if len(names) == 0 {
				t.Fatalf("%s, %q: no names and no error", c.Provider, pool)
			}
			for i, n := range names {
				if !c.Names.Match(n) {
					t.Fatalf("%s, %q: name %q breaks the provider's rules %+v", c.Provider, pool, n, c.Names)
				}
				if slices.Contains(names[:i], n) {
					t.Fatalf("%s, %q: name %q twice in %v", c.Provider, pool, n, names)
				}
			}
			again, _ := provider.ProviderNames(c, pool, 1)
			if len(again) != 1 || again[0] != names[0] {
				t.Fatalf("%s, %q: first name %v, then %v", c.Provider, pool, names, again)
			}
		}
	})
}
