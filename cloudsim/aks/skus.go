package aks

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// SKUAPIVersion is the api-version armcompute/v6's ResourceSKUsClient
// sends; any well-formed one is answered alike.
const SKUAPIVersion = "2021-07-01"

// vmSize is one VM size of the emulator's catalogue in one location, with
// Azure's published figures (https://learn.microsoft.com/azure/virtual-machines/sizes).
type vmSize struct {
	name, family string
	vcpus        int
	memoryGB     string // as Compute writes it: "16", "0.75"
	gpus         int    // 0: no GPUs capability
	noSpot       bool   // LowPriorityCapable False (B-series: no Spot)
	// zones are the location's zones the size is offered in (locationInfo.zones).
	zones []string
	// zoneRestricted are zones the subscription may not use (a restriction
	// of type Zone, NotAvailableForSubscription).
	zoneRestricted []string
	// restricted: the subscription may not use the size in the location at
	// all (a restriction of type Location, NotAvailableForSubscription).
	restricted bool
}

var allZones = []string{"1", "2", "3"}

// catalogue are the VM sizes of the locations the emulator knows, by
// normalized location; a location not here offers any size (no check).
// westeurope is the demo's and the tests' location. It holds a size
// offered in two zones only (NC24ads_A100_v4), one a subscription may not
// use in zone 3 (M128ms), one retired and restricted in the location
// (NC6: NC-series v1 was retired in 2023) and one without Spot (B2ms).
var catalogue = map[string][]vmSize{
	"westeurope": {
		{name: "Standard_B2ms", family: "standardBSFamily", vcpus: 2, memoryGB: "8", noSpot: true, zones: allZones},
		{name: "Standard_D2s_v5", family: "standardDSv5Family", vcpus: 2, memoryGB: "8", zones: allZones},
		{name: "Standard_D4s_v5", family: "standardDSv5Family", vcpus: 4, memoryGB: "16", zones: allZones},
		{name: "Standard_D8s_v5", family: "standardDSv5Family", vcpus: 8, memoryGB: "32", zones: allZones},
		{name: "Standard_D4s_v3", family: "standardDSv3Family", vcpus: 4, memoryGB: "16", zones: allZones},
		{name: "Standard_D4as_v5", family: "standardDASv5Family", vcpus: 4, memoryGB: "16", zones: allZones},
		{name: "Standard_E4as_v5", family: "standardEASv5Family", vcpus: 4, memoryGB: "32", zones: allZones},
		{name: "Standard_NC6s_v3", family: "standardNCSv3Family", vcpus: 6, memoryGB: "112", gpus: 1, zones: allZones},
		{name: "Standard_NC24ads_A100_v4", family: "StandardNCADSA100v4Family", vcpus: 24, memoryGB: "220", gpus: 1, zones: []string{"1", "2"}},
		{name: "Standard_M128ms", family: "standardMSFamily", vcpus: 128, memoryGB: "3892", zones: allZones, zoneRestricted: []string{"3"}},
		{name: "Standard_NC6", family: "standardNCFamily", vcpus: 6, memoryGB: "56", gpus: 1, restricted: true},
	},
	"eastus": {
		{name: "Standard_B2ms", family: "standardBSFamily", vcpus: 2, memoryGB: "8", noSpot: true, zones: allZones},
		{name: "Standard_D2s_v5", family: "standardDSv5Family", vcpus: 2, memoryGB: "8", zones: allZones},
		{name: "Standard_D4s_v5", family: "standardDSv5Family", vcpus: 4, memoryGB: "16", zones: allZones},
		{name: "Standard_D8s_v5", family: "standardDSv5Family", vcpus: 8, memoryGB: "32", zones: allZones},
		{name: "Standard_NC24ads_A100_v4", family: "StandardNCADSA100v4Family", vcpus: 24, memoryGB: "220", gpus: 1, zones: []string{"2", "3"}},
	},
}

// sizeIn returns the catalogue's size of a name in a location (names
// compared without case, as ARM compares them); known is false when the
// emulator has no catalogue for the location.
func sizeIn(location, name string) (size *vmSize, known bool) {
	sizes, known := catalogue[normLocation(location)]
	for i := range sizes {
		if strings.EqualFold(sizes[i].name, name) {
			return &sizes[i], true
		}
	}
	return nil, known
}

// usableZones are the zones a size may be used in: offered and not
// restricted.
func (v *vmSize) usableZones() []string {
	var out []string
	for _, z := range v.zones {
		if !slices.Contains(v.zoneRestricted, z) {
			out = append(out, z)
		}
	}
	return out
}

// sku is the size as Compute's Resource SKUs API answers it
// (armcompute.ResourceSKU, api-version 2021-07-01).
func (v *vmSize) sku(location string) *armcompute.ResourceSKU {
	capability := func(name, value string) *armcompute.ResourceSKUCapabilities {
		return &armcompute.ResourceSKUCapabilities{Name: ptr.To(name), Value: ptr.To(value)}
	}
	caps := []*armcompute.ResourceSKUCapabilities{
		capability("vCPUs", strconv.Itoa(v.vcpus)), capability("MemoryGB", v.memoryGB),
		capability("LowPriorityCapable", map[bool]string{false: "True", true: "False"}[v.noSpot]),
		capability("vCPUsAvailable", strconv.Itoa(v.vcpus)),
	}
	if v.gpus > 0 {
		caps = append(caps, capability("GPUs", strconv.Itoa(v.gpus)))
	}
	zones := make([]*string, 0, len(v.zones))
	for _, z := range v.zones {
		zones = append(zones, ptr.To(z))
	}
	out := &armcompute.ResourceSKU{
		ResourceType: ptr.To("virtualMachines"), Name: ptr.To(v.name), Tier: ptr.To("Standard"),
		Size: ptr.To(strings.TrimPrefix(v.name, "Standard_")), Family: ptr.To(v.family),
		Locations:    []*string{ptr.To(location)},
		LocationInfo: []*armcompute.ResourceSKULocationInfo{{Location: ptr.To(location), Zones: zones, ZoneDetails: []*armcompute.ResourceSKUZoneDetails{}}},
		Capabilities: caps, Restrictions: []*armcompute.ResourceSKURestrictions{},
	}
	notAvailable := ptr.To(armcompute.ResourceSKURestrictionsReasonCodeNotAvailableForSubscription)
	if v.restricted {
		out.Restrictions = append(out.Restrictions, &armcompute.ResourceSKURestrictions{
			Type: ptr.To(armcompute.ResourceSKURestrictionsTypeLocation), Values: []*string{ptr.To(location)},
			RestrictionInfo: &armcompute.ResourceSKURestrictionInfo{Locations: []*string{ptr.To(location)}}, ReasonCode: notAvailable})
	}
	if len(v.zoneRestricted) > 0 {
		var rz []*string
		for _, z := range v.zoneRestricted {
			rz = append(rz, ptr.To(z))
		}
		out.Restrictions = append(out.Restrictions, &armcompute.ResourceSKURestrictions{
			Type: ptr.To(armcompute.ResourceSKURestrictionsTypeZone), Values: []*string{ptr.To(location)},
			RestrictionInfo: &armcompute.ResourceSKURestrictionInfo{Locations: []*string{ptr.To(location)}, Zones: rz}, ReasonCode: notAvailable})
	}
	return out
}

// diskSKU is a SKU of another resource type, which the list also holds:
// a client keeps the virtualMachines ones.
func diskSKU(location string) *armcompute.ResourceSKU {
	return &armcompute.ResourceSKU{ResourceType: ptr.To("disks"), Name: ptr.To("Premium_LRS"), Tier: ptr.To("Premium"), Size: ptr.To("P1"),
		Locations:    []*string{ptr.To(location)},
		LocationInfo: []*armcompute.ResourceSKULocationInfo{{Location: ptr.To(location), Zones: []*string{ptr.To("1"), ptr.To("2"), ptr.To("3")}}},
		Capabilities: []*armcompute.ResourceSKUCapabilities{{Name: ptr.To("MaxSizeGiB"), Value: ptr.To("4")}},
		Restrictions: []*armcompute.ResourceSKURestrictions{}}
}

// locationFilter reads the one $filter the API takes: location eq 'x'.
var locationFilter = regexp.MustCompile(`(?i)^\s*location\s+eq\s+'([^']*)'\s*$`)

// listSKUs answers GET /subscriptions/{sub}/providers/Microsoft.Compute/skus:
// the SKUs of every location the emulator knows, or of the one $filter
// names, in pages with nextLink.
func (s *Server) listSKUs(req *request) *sim.Reply {
	sub := req.vars["subscription"]
	if rep := s.subscriptionOf(sub); rep != nil {
		return rep
	}
	if s.deniedSKUs[strings.ToLower(sub)] {
		return errorReply(http.StatusForbidden, "AuthorizationFailed",
			"The client '%s' with object id '%s' does not have authorization to perform action 'Microsoft.Compute/skus/read' over scope '/subscriptions/%s' or the scope is invalid. If access was recently granted, please refresh your credentials.",
			demoObjectID, demoObjectID, sub)
	}
	q := req.HTTP.URL.Query()
	locations := slices.Sorted(func(yield func(string) bool) {
		for l := range catalogue {
			if !yield(l) {
				return
			}
		}
	})
	if f := q.Get("$filter"); f != "" {
		m := locationFilter.FindStringSubmatch(f)
		if m == nil {
			return errorReply(http.StatusBadRequest, "InvalidFilterInQueryString",
				"The $filter '%s' is not supported: only location eq '<location>' is.", f)
		}
		locations = []string{normLocation(m[1])}
	}
	var all []*armcompute.ResourceSKU
	for _, l := range locations {
		for i := range catalogue[l] {
			all = append(all, catalogue[l][i].sku(l))
		}
		if len(catalogue[l]) > 0 {
			all = append(all, diskSKU(l))
		}
	}
	return s.skuPage(req, all)
}

// demoObjectID is the object id ARM's AuthorizationFailed names: the
// emulator has no principals of its own.
const demoObjectID = "00000000-0000-0000-0000-00000000a11c"

// skuPage answers a page of SKUs, sorted by location, resource type and
// name, with nextLink when more follow.
func (s *Server) skuPage(req *request, all []*armcompute.ResourceSKU) *sim.Reply {
	key := func(k *armcompute.ResourceSKU) string {
		return strings.ToLower(*k.Locations[0] + "/" + *k.ResourceType + "/" + *k.Name)
	}
	slices.SortFunc(all, func(a, b *armcompute.ResourceSKU) int { return strings.Compare(key(a), key(b)) })
	q := req.HTTP.URL.Query()
	page, next, err := sim.Page(all, key, q.Get("$skipToken"), s.skuPageSize)
	if err != nil {
		return errorReply(http.StatusBadRequest, "InvalidSkipToken", "The $skipToken '%s' is invalid.", q.Get("$skipToken"))
	}
	out := armcompute.ResourceSKUsResult{Value: page}
	if next != "" {
		q.Set("$skipToken", next)
		out.NextLink = ptr.To(req.base + req.HTTP.URL.Path + "?" + q.Encode())
	}
	return jsonReply(http.StatusOK, out)
}

// subscriptionOf answers ARM's 404 for a subscription none of the
// emulator's clusters is in.
func (s *Server) subscriptionOf(sub string) *sim.Reply {
	for _, c := range s.clusters {
		if strings.EqualFold(c.subscription, sub) {
			return nil
		}
	}
	return errorReply(http.StatusNotFound, "SubscriptionNotFound", "The subscription '%s' could not be found.", sub)
}

// DenySKUs makes the Resource SKUs list of a subscription answer 403
// AuthorizationFailed, as ARM does to a principal without
// Microsoft.Compute/skus/read (a role scoped to the cluster's resource
// group, say).
func (s *Server) DenySKUs(subscription string) {
	s.Do(func(time.Time) { s.deniedSKUs[strings.ToLower(subscription)] = true })
}

// offered answers AKS's refusal of an agent pool whose VM size the
// cluster's location does not offer the subscription (400 BadRequest, as
// AKS answers it), or not in every zone the pool names (400
// AvailabilityZoneNotSupported). A location the catalogue does not hold
// takes any size.
func offered(c *cluster, name string, p *props) *sim.Reply {
	size, known := sizeIn(c.location, ptr.Deref(p.VMSize, ""))
	if !known {
		return nil
	}
	if size == nil || size.restricted {
		return errorReply(http.StatusBadRequest, "BadRequest",
			"The VM size of AgentPoolProfile:%s is not allowed in your subscription in location '%s'. For more details, please visit https://aka.ms/aks/quotas-skus-regions",
			name, c.location)
	}
	usable := size.usableZones()
	var missing []string
	for _, z := range p.AvailabilityZones {
		if z != nil && !slices.Contains(usable, *z) {
			missing = append(missing, *z)
		}
	}
	if len(missing) > 0 {
		return errorReply(http.StatusBadRequest, "AvailabilityZoneNotSupported",
			"The zone(s) '%s' for resource '%s' is not supported. The supported zones for location '%s' are '%s'",
			strings.Join(missing, ","), name, c.location, strings.Join(usable, ","))
	}
	return nil
}
