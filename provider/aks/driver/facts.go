package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.FactsReader = (*Driver)(nil)

// ClusterFacts learns what AKS offers a cluster's agent pools, from ARM's
// own catalogues, in three calls (and the further pages of the SKU list,
// which ARM rarely has for one location): the managed cluster (its
// version and location), its availableAgentPoolVersions (the versions a
// pool may run), and Compute's Resource SKUs of the location (the VM
// sizes, their figures, zones and restrictions). A catalogue the
// credential may not read (403) is noted in Partial; any other error is
// classified as the driver's other calls are.
func (d *Driver) ClusterFacts(ctx context.Context, c *kpool.Cluster) (*kpool.ClusterFacts, error) {
	cs, a, err := d.client(c)
	if err != nil {
		return nil, err
	}
	mc, err := cs.clusters.Get(ctx, a.ResourceGroup, a.ClusterName, nil)
	if err != nil {
		return nil, classify(err, "")
	}
	f := &kpool.ClusterFacts{LearnedAt: time.Now()}
	location := a.Location
	if mc.Location != nil {
		location = *mc.Location
	}
	if p := mc.Properties; p != nil {
		f.Version = ptr.Deref(p.CurrentKubernetesVersion, ptr.Deref(p.KubernetesVersion, ""))
	}
	versions, err := cs.pools.GetAvailableAgentPoolVersions(ctx, a.ResourceGroup, a.ClusterName, nil)
	switch {
	case forbidden(err):
		f.Partial = append(f.Partial, "the versions agent pools may run: the credential may not read the cluster's availableAgentPoolVersions ("+reasonOf(err)+")")
	case err != nil:
		return nil, classify(err, "")
	case versions.Properties != nil:
		f.PoolVersions = poolVersions(f.Version, versions.Properties.AgentPoolVersions)
	}
	skus, err := d.listSKUs(ctx, cs, location)
	switch {
	case forbidden(err):
		f.Partial = append(f.Partial, "the VM sizes and zones of "+location+": the credential may not read Compute's Resource SKUs ("+reasonOf(err)+")")
	case err != nil:
		return nil, classify(err, "")
	default:
		f.Zones, f.MachineTypes = offerings(c, location, skus)
	}
	f.Sort()
	return f, nil
}

// poolVersions are the available versions a pool of a cluster whose
// control plane runs controlPlane may run: AKS refuses a pool newer than
// its control plane (NodePoolMcVersionIncompatible, "Minor version of node
// pool version … is bigger than control plane version"; the version skew
// policy), so such a version of the list is left out. A version either
// side cannot read is kept: AKS decides.
func poolVersions(controlPlane string, items []*armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem) []string {
	cp, cpErr := version.ParseGeneric(controlPlane)
	var out []string
	for _, it := range items {
		v := ptr.Deref(ptrOr(it).KubernetesVersion, "")
		if v == "" || slices.Contains(out, v) {
			continue
		}
		if pv, err := version.ParseGeneric(v); cpErr == nil && err == nil && cp.LessThan(pv) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// ptrOr is an item of the versions list, empty when the list holds null.
func ptrOr(it *armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem) *armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem {
	if it == nil {
		return &armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem{}
	}
	return it
}

// listSKUs lists Compute's SKUs of a location, every page.
func (d *Driver) listSKUs(ctx context.Context, cs *clients, location string) ([]*armcompute.ResourceSKU, error) {
	filter := fmt.Sprintf("location eq '%s'", location)
	pager := cs.skus.NewListPager(&armcompute.ResourceSKUsClientListOptions{Filter: &filter})
	var out []*armcompute.ResourceSKU
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Value...)
	}
	return out, nil
}

// forbidden reports whether ARM answered 403: the credential may not
// read what was asked.
func forbidden(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusForbidden
}

// reasonOf is an ARM error's code and message, for Partial.
func reasonOf(err error) string {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return provider.FirstLine(err.Error())
	}
	if msg := armMessage(re); msg != "" {
		return re.ErrorCode + ": " + msg
	}
	return re.ErrorCode
}

// offerings are the location's zones (logical) and the VM sizes the
// subscription may use there. A SKU of another resource type is not a VM
// size; a restriction of type Location (for the location) removes the
// size, one of type Zone the zones it names. A size's Zones are nil when
// it is offered in every zone of the location.
func offerings(c *kpool.Cluster, location string, skus []*armcompute.ResourceSKU) ([]string, []kpool.MachineType) {
	type sized struct {
		m     kpool.MachineType
		zones []string
	}
	var sizes []sized
	var all []string
	for _, k := range skus {
		if k == nil || !strings.EqualFold(ptr.Deref(k.ResourceType, ""), "virtualMachines") || ptr.Deref(k.Name, "") == "" {
			continue
		}
		zones, ok := usableZones(k, location)
		if !ok {
			continue
		}
		var logical []string
		for _, z := range zones {
			if l, err := profile.LogicalZone(c, z); err == nil && !slices.Contains(logical, l) {
				logical = append(logical, l)
			}
		}
		for _, l := range logical {
			if !slices.Contains(all, l) {
				all = append(all, l)
			}
		}
		sizes = append(sizes, sized{m: machineType(k), zones: logical})
	}
	slices.Sort(all)
	out := make([]kpool.MachineType, 0, len(sizes))
	for _, s := range sizes {
		slices.Sort(s.zones)
		if !slices.Equal(s.zones, all) {
			s.m.Zones = s.zones
			if s.m.Zones == nil {
				s.m.Zones = []string{} // offered in none of the location's zones: regional only
			}
		}
		out = append(out, s.m)
	}
	return all, out
}

// usableZones are the zones of location a SKU is offered in and not
// restricted in; ok is false when the SKU is not offered in the location
// or restricted there.
func usableZones(k *armcompute.ResourceSKU, location string) (zones []string, ok bool) {
	for _, li := range k.LocationInfo {
		if li != nil && strings.EqualFold(ptr.Deref(li.Location, ""), location) {
			ok = true
			for _, z := range li.Zones {
				if z != nil {
					zones = append(zones, *z)
				}
			}
		}
	}
	for _, r := range k.Restrictions {
		if r == nil || !restrictsLocation(r, location) {
			continue
		}
		switch ptr.Deref(r.Type, "") {
		case armcompute.ResourceSKURestrictionsTypeLocation:
			return nil, false
		case armcompute.ResourceSKURestrictionsTypeZone:
			if r.RestrictionInfo != nil {
				zones = slices.DeleteFunc(zones, func(z string) bool {
					return slices.ContainsFunc(r.RestrictionInfo.Zones, func(rz *string) bool { return ptr.Deref(rz, "") == z })
				})
			}
		}
	}
	return zones, ok
}

// restrictsLocation reports whether a restriction concerns location: its
// restrictionInfo.locations (or, without them, its values) name it.
func restrictsLocation(r *armcompute.ResourceSKURestrictions, location string) bool {
	names := r.Values
	if r.RestrictionInfo != nil && len(r.RestrictionInfo.Locations) > 0 {
		names = r.RestrictionInfo.Locations
	}
	return slices.ContainsFunc(names, func(l *string) bool { return strings.EqualFold(ptr.Deref(l, ""), location) })
}

// machineType reads a VM size's figures from its capabilities: vCPUs,
// MemoryGB (GiB, possibly fractional: "0.75"), GPUs, and
// LowPriorityCapable (Spot; a size that does not say is taken to allow
// it).
func machineType(k *armcompute.ResourceSKU) kpool.MachineType {
	m := kpool.MachineType{Name: *k.Name}
	for _, c := range k.Capabilities {
		if c == nil || c.Value == nil {
			continue
		}
		v := strings.TrimSpace(*c.Value)
		switch ptr.Deref(c.Name, "") {
		case "vCPUs":
			m.CPUs, _ = strconv.Atoi(v)
		case "MemoryGB":
			if gb, err := strconv.ParseFloat(v, 64); err == nil {
				m.MemoryMiB = int(math.Round(gb * 1024))
			}
		case "GPUs":
			m.GPUs, _ = strconv.Atoi(v)
		case "LowPriorityCapable":
			m.NoSpot = strings.EqualFold(v, "False")
		}
	}
	return m
}
