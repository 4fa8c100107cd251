package aks_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

// skus lists the Resource SKUs of subscription through Compute's own Go
// client, every page, with a $filter ("" for none).
func (e *env) skus(subscription, filter string) ([]*armcompute.ResourceSKU, error) {
	e.t.Helper()
	cl, err := armcompute.NewResourceSKUsClient(subscription, staticToken(token), clientOptions(e.ep.URL, e.http))
	if err != nil {
		e.t.Fatal(err)
	}
	var opts *armcompute.ResourceSKUsClientListOptions
	if filter != "" {
		opts = &armcompute.ResourceSKUsClientListOptions{Filter: ptr.To(filter)}
	}
	var out []*armcompute.ResourceSKU
	for pager := cl.NewListPager(opts); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Value...)
	}
	return out, nil
}

// capability is a SKU's capability of a name, "" when it has none.
func capability(k *armcompute.ResourceSKU, name string) string {
	for _, c := range k.Capabilities {
		if ptr.Deref(c.Name, "") == name {
			return ptr.Deref(c.Value, "")
		}
	}
	return ""
}

// The Resource SKUs list answers a location's SKUs in Compute's shapes,
// over pages, read by armcompute's own client: figures, zones,
// restrictions of a location and of a zone, and SKUs of other resource
// types among them.
func TestResourceSKUs(t *testing.T) {
	e := newEnv(t, aks.Options{PageSize: 4})
	got, err := e.skus(sub, "location eq 'westeurope'")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*armcompute.ResourceSKU{}
	for _, k := range got {
		if ptr.Deref(k.ResourceType, "") == "virtualMachines" {
			byName[*k.Name] = k
		}
	}
	if len(byName) != 11 || len(got) != 12 {
		t.Fatalf("got %d SKUs, %d VM sizes, want 12 and 11 (pages followed)", len(got), len(byName))
	}
	for _, tc := range []struct {
		name, vcpus, memory, gpus, spot string
		zones                           []string
		restriction                     armcompute.ResourceSKURestrictionsType
		restricted                      []string
	}{
		{name: "Standard_D4s_v5", vcpus: "4", memory: "16", spot: "True", zones: []string{"1", "2", "3"}},
		{name: "Standard_B2ms", vcpus: "2", memory: "8", spot: "False", zones: []string{"1", "2", "3"}},
		{name: "Standard_NC6s_v3", vcpus: "6", memory: "112", gpus: "1", spot: "True", zones: []string{"1", "2", "3"}},
		{name: "Standard_NC24ads_A100_v4", vcpus: "24", memory: "220", gpus: "1", spot: "True", zones: []string{"1", "2"}},
		{name: "Standard_M128ms", vcpus: "128", memory: "3892", spot: "True", zones: []string{"1", "2", "3"},
			restriction: armcompute.ResourceSKURestrictionsTypeZone, restricted: []string{"3"}},
		{name: "Standard_NC6", vcpus: "6", memory: "56", gpus: "1", spot: "True", restriction: armcompute.ResourceSKURestrictionsTypeLocation},
	} {
		k := byName[tc.name]
		if k == nil {
			t.Fatalf("%s: not listed", tc.name)
		}
		if capability(k, "vCPUs") != tc.vcpus || capability(k, "MemoryGB") != tc.memory || capability(k, "GPUs") != tc.gpus ||
			capability(k, "LowPriorityCapable") != tc.spot {
			t.Errorf("%s: capabilities %v", tc.name, k.Capabilities)
		}
		var zones []string
		for _, z := range k.LocationInfo[0].Zones {
			zones = append(zones, *z)
		}
		if !slices.Equal(zones, tc.zones) || *k.LocationInfo[0].Location != "westeurope" {
			t.Errorf("%s: location info %s %v", tc.name, *k.LocationInfo[0].Location, zones)
		}
		switch {
		case tc.restriction == "" && len(k.Restrictions) != 0:
			t.Errorf("%s: restrictions %v", tc.name, k.Restrictions)
		case tc.restriction != "" && (len(k.Restrictions) != 1 || *k.Restrictions[0].Type != tc.restriction ||
			*k.Restrictions[0].ReasonCode != armcompute.ResourceSKURestrictionsReasonCodeNotAvailableForSubscription):
			t.Errorf("%s: restrictions %v", tc.name, k.Restrictions)
		case tc.restricted != nil && (len(k.Restrictions[0].RestrictionInfo.Zones) != 1 || *k.Restrictions[0].RestrictionInfo.Zones[0] != "3"):
			t.Errorf("%s: restricted zones %v", tc.name, k.Restrictions[0].RestrictionInfo.Zones)
		}
	}
	all, err := e.skus(sub, "")
	if err != nil || len(all) <= len(got) {
		t.Fatalf("without a filter: %d SKUs, %v", len(all), err)
	}
}

// The list's refusals: an unknown subscription, a principal that may not
// read SKUs, a filter the API does not take.
func TestResourceSKUsRefused(t *testing.T) {
	e := newEnv(t, aks.Options{})
	_, err := e.skus("11111111-2222-3333-4444-555555555555", "")
	wantError(t, err, http.StatusNotFound, "SubscriptionNotFound")
	_, err = e.skus(sub, "name eq 'Standard_D4s_v5'")
	wantError(t, err, http.StatusBadRequest, "InvalidFilterInQueryString")
	e.sim.DenySKUs(sub)
	_, err = e.skus(sub, "location eq 'westeurope'")
	if re := wantError(t, err, http.StatusForbidden, "AuthorizationFailed"); !strings.Contains(re.Error(), "'Microsoft.Compute/skus/read'") {
		t.Fatalf("message: %v", re)
	}
}

// AKS refuses an agent pool whose VM size the location does not offer the
// subscription (400 BadRequest), or not in a zone the pool names (400
// AvailabilityZoneNotSupported), with AKS's wording; sizes compare
// without case.
func TestVMSizeOffered(t *testing.T) {
	e := newEnv(t, aks.Options{})
	for _, tc := range []struct {
		name, size string
		zones      []string
		code, msg  string
	}{
		{name: "bogus", size: "Standard_Bogus_v9", code: "BadRequest",
			msg: "The VM size of AgentPoolProfile:bogus is not allowed in your subscription in location 'westeurope'. For more details, please visit https://aka.ms/aks/quotas-skus-regions"},
		{name: "retired", size: "Standard_NC6", code: "BadRequest", msg: "AgentPoolProfile:retired is not allowed"},
		{name: "a100", size: "Standard_NC24ads_A100_v4", zones: []string{"2", "3"}, code: "AvailabilityZoneNotSupported",
			msg: "The zone(s) '3' for resource 'a100' is not supported. The supported zones for location 'westeurope' are '1,2'"},
		{name: "mem", size: "Standard_M128ms", zones: []string{"1", "2", "3"}, code: "AvailabilityZoneNotSupported", msg: "'3' for resource 'mem'"},
		{name: "a100ok", size: "Standard_NC24ads_A100_v4", zones: []string{"1", "2"}},
		{name: "regional", size: "Standard_NC24ads_A100_v4"},
		{name: "anycase", size: "standard_d4s_V5", zones: []string{"3"}},
	} {
		pr := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{VMSize: ptr.To(tc.size), Count: ptr.To(int32(1))}
		for _, z := range tc.zones {
			pr.AvailabilityZones = append(pr.AvailabilityZones, ptr.To(z))
		}
		_, err := e.pools.BeginCreateOrUpdate(ctx, group, cluster, tc.name, armcontainerservice.AgentPool{Properties: pr}, nil)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if re := wantError(t, err, http.StatusBadRequest, tc.code); !strings.Contains(re.Error(), tc.msg) {
			t.Errorf("%s: %v", tc.name, re)
		}
	}
	// A location without a catalogue in the emulator takes any size.
	e.sim.AddCluster(sub, group, "elsewhere", "brazilsouth", "1.30.4")
	pr := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{VMSize: ptr.To("Standard_Bogus_v9"), Count: ptr.To(int32(1))}
	if _, err := e.pools.BeginCreateOrUpdate(ctx, group, "elsewhere", "any", armcontainerservice.AgentPool{Properties: pr}, nil); err != nil {
		t.Fatalf("a location without a catalogue: %v", err)
	}
}
