package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"

	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/googleapi"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
)

var _ provider.FactsReader = (*Driver)(nil)

// publicCompute is Compute Engine's API, which the cluster's catalogue
// (machineTypes) is read from when the cluster is at GKE's public API.
const publicCompute = "https://compute.googleapis.com"

// ClusterFacts learns what GKE offers a cluster's pools: its control
// plane's version and the node versions its location offers (within the
// version skew GKE allows), its region's zones and the cluster's default
// node locations (where a pool that names no zones goes), and the machine
// types of its region's zones with their CPUs, memory and GPUs. It costs
// 2 + Z calls, Z the region's zones (3 or 4): clusters.get,
// getServerConfig, and Compute Engine's machineTypes.list of each zone
// (one page each: a zone lists a few hundred types, under the default
// page of 500). A catalogue the credential may not read (403) is noted in
// Partial. Compute Engine says nothing of spot per machine type, and no
// published source names a type without spot: NoSpot is never set.
func (d *Driver) ClusterFacts(ctx context.Context, c *kpool.Cluster) (*kpool.ClusterFacts, error) {
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	cl, err := cs.gke.Projects.Locations.Clusters.Get(parent(g)).Context(ctx).Do()
	if err != nil {
		return nil, classify(err, "")
	}
	f := &kpool.ClusterFacts{LearnedAt: time.Now(), Version: gkeBuild.ReplaceAllString(cl.CurrentMasterVersion, "")}
	region := profile.Region(&c.Spec)
	zones := gke.Zones(region)
	for _, z := range zones {
		f.Zones = append(f.Zones, logical(c, z))
	}
	defaults := cl.Locations
	if len(defaults) == 0 {
		defaults = []string{g.Location}
	}
	for _, z := range defaults {
		f.DefaultZones = append(f.DefaultZones, logical(c, z))
	}
	cfg, err := cs.gke.Projects.Locations.GetServerConfig("projects/" + g.ProjectID + "/locations/" + g.Location).Context(ctx).Do()
	switch {
	case forbidden(err):
		f.Partial = append(f.Partial, "versions: the credential may not read GKE's server config (getServerConfig): "+provider.FirstLine(err.Error()))
	case err != nil:
		return nil, classify(err, "")
	default:
		f.PoolVersions = poolVersions(cl.CurrentMasterVersion, cfg.ValidNodeVersions)
	}
	if err := d.machineTypes(ctx, cs, c, zones, f); err != nil {
		return nil, err
	}
	f.Sort()
	return f, nil
}

// machineTypes fills the facts' machine types from each zone's
// machineTypes.list; a type missing from some zones is offered in the
// others alone.
func (d *Driver) machineTypes(ctx context.Context, cs *clients, c *kpool.Cluster, zones []string, f *kpool.ClusterFacts) error {
	origin, err := provider.Endpoint(c, publicEndpoint, "the GKE API")
	if err != nil {
		return err
	}
	if origin == publicEndpoint {
		origin = publicCompute
	}
	svc, err := d.computeFor(ctx, cs, origin)
	if err != nil {
		return err
	}
	byName := map[string]*kpool.MachineType{}
	var names []string
	for _, z := range zones {
		err := svc.MachineTypes.List(c.Spec.Platform.GCP.ProjectID, z).Pages(ctx, func(l *compute.MachineTypeList) error {
			for _, m := range l.Items {
				if m == nil || m.Deprecated != nil && m.Deprecated.State != "" && m.Deprecated.State != "ACTIVE" {
					continue
				}
				mt, ok := byName[m.Name]
				if !ok {
					mt = machine(m)
					byName[m.Name] = mt
					names = append(names, m.Name)
				}
				mt.Zones = append(mt.Zones, logical(c, z))
			}
			return nil
		})
		switch {
		case forbidden(err):
			f.Partial = append(f.Partial, "machine types: the credential may not read Compute Engine's machineTypes.list in "+z+": "+provider.FirstLine(err.Error()))
			return nil
		case err != nil:
			return classify(err, "")
		}
	}
	for _, n := range names {
		mt := byName[n]
		if len(mt.Zones) == len(zones) {
			mt.Zones = nil // offered in every zone
		}
		f.MachineTypes = append(f.MachineTypes, *mt)
	}
	return nil
}

// machine is a Compute Engine machine type's figures; its GPUs are those
// it comes with (G2, A2...), not those an N1 type may be given.
func machine(m *compute.MachineType) *kpool.MachineType {
	mt := &kpool.MachineType{Name: m.Name, CPUs: int(m.GuestCpus), MemoryMiB: int(m.MemoryMb)}
	for _, a := range m.Accelerators {
		if a != nil {
			mt.GPUs += int(a.GuestAcceleratorCount)
		}
	}
	return mt
}

// logical is a zone's logical name, or the zone itself when the profile
// does not know it.
func logical(c *kpool.Cluster, zone string) string {
	if l, err := profile.LogicalZone(c, zone); err == nil {
		return l
	}
	return zone
}

// forbidden reports whether err is the API's 403 (a permission the
// credential lacks), which leaves that part of the facts unknown.
func forbidden(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusForbidden
}

// minorRE reads a version's major, minor and patch numbers.
var minorRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)

// poolVersions are the node versions a pool of a cluster whose control
// plane runs master may run, as kpool specs name them ("1.30.5"): GKE's
// valid node versions of the location that are not newer than the control
// plane and at most three minor versions older (GKE's version skew
// policy, https://cloud.google.com/kubernetes-engine/versioning).
func poolVersions(master string, valid []string) []string {
	cp := versionKey(master)
	var out []string
	for _, v := range valid {
		k := versionKey(v)
		if k == nil || cp == nil || k[0] != cp[0] || k[1] > cp[1] || k[1] == cp[1] && k[2] > cp[2] || cp[1]-k[1] > 3 {
			continue
		}
		if s := fmt.Sprintf("%d.%d.%d", k[0], k[1], k[2]); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// versionKey is a version's major, minor and patch; nil for none.
func versionKey(v string) []int {
	m := minorRE.FindStringSubmatch(v)
	if m == nil {
		return nil
	}
	out := make([]int, 3)
	for i := range out {
		out[i], _ = strconv.Atoi(m[i+1])
	}
	return out
}
