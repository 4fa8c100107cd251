package provider

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
)

// Logical zones are "1", "2", "3"…; each provider maps them to its own:
//   - AKS: the same "1", "2", "3";
//   - EKS: the region's Nth availability zone (<region>a, b, c…), whose
//     subnet comes from the cluster's subnet map (keyed by zone name, or by
//     zone id such as use1-az1, whose number is N);
//   - GKE: <region>-a, -b, -c…;
//   - OKE: the availability domain whose name ends in AD-N.
// The guide's provider-native values in the platform blocks are accepted
// too and mapped back.

var (
	adRE     = regexp.MustCompile(`(?i)AD-([1-9][0-9]?)$`)
	azIDRE   = regexp.MustCompile(`-az([1-9][0-9]?)$`)
	digitsRE = regexp.MustCompile(`^[1-9][0-9]?$`)
)

func letter(n int) string { return string(rune('a' + n - 1)) }

// ProviderZone maps a logical zone to the provider's value for cluster c.
func ProviderZone(c *kpool.Cluster, logical string) (string, error) {
	n, err := strconv.Atoi(logical)
	if err != nil || n < 1 || n > 26 {
		return "", fmt.Errorf("%q is not a logical zone", logical)
	}
	region := c.Spec.Region()
	switch c.Spec.Platform.Type {
	case kpool.PlatformAzure:
		return logical, nil
	case kpool.PlatformAWS, kpool.PlatformGCP:
		sep := ""
		if c.Spec.Platform.Type == kpool.PlatformGCP {
			sep = "-"
		}
		return region + sep + letter(n), nil
	case kpool.PlatformOCI:
		for _, ad := range ads(c) {
			if m := adRE.FindStringSubmatch(ad); m != nil && m[1] == logical {
				return ad, nil
			}
		}
		return "", fmt.Errorf("cluster %s has no availability domain ending in AD-%s among its subnets (%s)", c.Name, logical, strings.Join(ads(c), ", "))
	}
	return "", fmt.Errorf("platform %s has no zones", c.Spec.Platform.Type)
}

// LogicalZone maps a provider's zone value back to the logical zone.
func LogicalZone(c *kpool.Cluster, native string) (string, error) {
	region := c.Spec.Region()
	switch c.Spec.Platform.Type {
	case kpool.PlatformAzure:
		// The API's "2", or the node label's "<location>-2".
		if n := strings.TrimPrefix(strings.ToLower(native), strings.ToLower(region)+"-"); digitsRE.MatchString(n) {
			return n, nil
		}
	case kpool.PlatformAWS:
		if rest, ok := strings.CutPrefix(native, region); ok && len(rest) == 1 && rest[0] >= 'a' && rest[0] <= 'z' {
			return strconv.Itoa(int(rest[0]-'a') + 1), nil
		}
		if m := azIDRE.FindStringSubmatch(native); m != nil {
			return m[1], nil
		}
	case kpool.PlatformGCP:
		if rest, ok := strings.CutPrefix(native, region+"-"); ok && len(rest) == 1 && rest[0] >= 'a' && rest[0] <= 'z' {
			return strconv.Itoa(int(rest[0]-'a') + 1), nil
		}
	case kpool.PlatformOCI:
		if m := adRE.FindStringSubmatch(native); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("%q is not a zone of %s region %q", native, c.Spec.Platform.Type, region)
}

// ads lists the availability domains an OKE cluster has subnets in.
func ads(c *kpool.Cluster) []string {
	if c.Spec.Platform.OCI == nil {
		return nil
	}
	var out []string
	for ad := range c.Spec.Platform.OCI.Subnets {
		out = append(out, ad)
	}
	sort.Strings(out)
	return out
}

// nativeZones returns the platform block's own zone list and its field path.
func nativeZones(s *kpool.NodePoolSpec) ([]string, string) {
	p := s.Platform
	switch {
	case p.GCP != nil && len(p.GCP.Zones) > 0:
		return p.GCP.Zones, "spec.platform.gcp.zones"
	case p.AWS != nil && len(p.AWS.AvailabilityZones) > 0:
		return p.AWS.AvailabilityZones, "spec.platform.aws.availabilityZones"
	case p.Azure != nil && len(p.Azure.AvailabilityZones) > 0:
		return p.Azure.AvailabilityZones, "spec.platform.azure.availabilityZones"
	case p.OCI != nil && len(p.OCI.AvailabilityDomains) > 0:
		return p.OCI.AvailabilityDomains, "spec.platform.oci.availabilityDomains"
	}
	return nil, ""
}

// PoolZones returns a spec's logical zones, sorted, and the field they came
// from: spec.zones, or the platform block's native list mapped back. When
// both are given they must name the same zones.
func PoolZones(c *kpool.Cluster, s *kpool.NodePoolSpec) ([]string, string, error) {
	if CapabilitiesOf(c.Spec.Platform.Type).Zones == ZonesNone {
		return s.Zones, "spec.zones", nil // nothing to map; CheckCreate says NOT_IMPLEMENTED
	}
	native, field := nativeZones(s)
	var fe kpool.FieldErrors
	var mapped []string
	for i, z := range native {
		l, err := LogicalZone(c, z)
		if err != nil {
			fe.Add(fmt.Sprintf("%s[%d]", field, i), "%v", err)
			continue
		}
		mapped = append(mapped, l)
	}
	for i, z := range s.Zones {
		if _, err := ProviderZone(c, z); err != nil {
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
