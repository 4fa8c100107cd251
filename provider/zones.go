package provider

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
)

// Logical zones are "1", "2", "3"… (kpool.IsLogicalZone); each profile maps
// them to its provider's own (ProviderZone, LogicalZone). The platform
// blocks' own zone lists are accepted too and mapped back.

// ZoneNumber parses a logical zone: 1 to 26.
func ZoneNumber(logical string) (int, error) {
	n, err := strconv.Atoi(logical)
	if err != nil || n < 1 || n > 26 || !kpool.IsLogicalZone(logical) {
		return 0, fmt.Errorf("%q is not a logical zone", logical)
	}
	return n, nil
}

// ZoneLetter is the letter of the Nth zone of a region: 1 is "a".
func ZoneLetter(n int) string { return string(rune('a' + n - 1)) }

// LetterZone maps a zone named region+sep+letter back to its logical zone.
func LetterZone(native, region, sep string) (string, bool) {
	rest, ok := strings.CutPrefix(native, region+sep)
	if !ok || len(rest) != 1 || rest[0] < 'a' || rest[0] > 'z' {
		return "", false
	}
	return strconv.Itoa(int(rest[0]-'a') + 1), true
}

// PoolZones returns a spec's logical zones, sorted, and the field they came
// from: spec.zones, or the platform block's own list mapped back. When both
// are given they must name the same zones.
func PoolZones(p Profile, c *kpool.Cluster, s *kpool.NodePoolSpec) ([]string, string, error) {
	if p.Capabilities().Zones == ZonesNone {
		return s.Zones, "spec.zones", nil // nothing to map; CheckCreate says NOT_IMPLEMENTED
	}
	b := p.Block(c, s)
	native, field := b.Zones, b.Path(FieldZones)
	var fe kpool.FieldErrors
	var mapped []string
	for i, z := range native {
		l, err := p.LogicalZone(c, z)
		if err != nil {
			fe.Add(fmt.Sprintf("%s[%d]", field, i), "%v", err)
			continue
		}
		mapped = append(mapped, l)
	}
	for i, z := range s.Zones {
		if _, err := p.ProviderZone(c, z); err != nil {
			fe.Add(fmt.Sprintf("spec.zones[%d]", i), "%v", err)
		}
	}
	if err := fe.Err(); err != nil {
		return nil, "", err
	}
	logical := append([]string(nil), s.Zones...)
	sortZones(logical)
	sortZones(mapped)
	switch {
	case len(s.Zones) > 0 && len(native) > 0:
		if strings.Join(logical, ",") != strings.Join(mapped, ",") {
			return nil, "", kpool.Invalid(field, "names zones %s but spec.zones names %s: give one or make them agree", strings.Join(mapped, ","), strings.Join(logical, ","))
		}
		return logical, "spec.zones", nil
	case len(s.Zones) > 0:
		return logical, "spec.zones", nil
	case len(native) > 0:
		return mapped, field, nil
	}
	return nil, "spec.zones", nil
}

func sortZones(z []string) {
	sort.Slice(z, func(i, j int) bool {
		a, _ := strconv.Atoi(z[i])
		b, _ := strconv.Atoi(z[j])
		return a < b
	})
}
