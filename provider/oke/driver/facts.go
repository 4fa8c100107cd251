package driver

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
)

var _ provider.FactsReader = (*Driver)(nil)

// ClusterFacts learns what OKE offers the cluster's node pools:
// GetNodePoolOptions of the cluster (the Kubernetes versions its pools may
// run, the newest being the control plane's, and the shapes OKE takes),
// and Compute's ListShapes in each availability domain the cluster has a
// worker subnet in (each shape's OCPUs, memory and GPUs, and the domains
// that offer it). The zones are those domains, logical; a pool that names
// none is placed in all of them, so they are the default zones too.
//
// Cost: one GetNodePoolOptions and one ListShapes per availability domain
// (one to three, each a page of a hundred shapes or so). A key that may not
// read Compute's shapes (404 NotAuthorizedOrNotFound, 401, 403, or an
// operator who has not allowed the Compute endpoint for the credential)
// leaves the shapes without figures or zones, said in Partial.
//
// CPUs are OCPUs, the unit of OKE's pools (spec.platform.oci.ocpus); a
// flexible shape's CPUs and memory are the pool's own, so none are given.
// NoSpot is never set: ListShapes does not say which shapes preemptible
// capacity takes.
func (d *Driver) ClusterFacts(ctx context.Context, c *kpool.Cluster) (*kpool.ClusterFacts, error) {
	cn, err := d.client(c)
	if err != nil {
		return nil, err
	}
	resp, err := cn.cl.GetNodePoolOptions(provider.Detached(ctx), ce.GetNodePoolOptionsRequest{NodePoolOptionId: common.String(cn.oci.ClusterID)})
	if err != nil {
		return nil, classify(err, resp.RawResponse, "")
	}
	d.versions.Add(cn.key+" "+cn.oci.ClusterID, versionSet{list: resp.KubernetesVersions, at: time.Now()})
	f := &kpool.ClusterFacts{LearnedAt: time.Now()}
	for _, v := range resp.KubernetesVersions {
		if m := versionRE.FindStringSubmatch(v); m != nil && m[3] != "" {
			f.PoolVersions = append(f.PoolVersions, strings.TrimPrefix(v, "v"))
			if f.Version == "" || newer(strings.TrimPrefix(v, "v"), f.Version) {
				f.Version = strings.TrimPrefix(v, "v")
			}
		}
	}
	ads := kpool.SortedKeys(cn.oci.Subnets)
	zoneOf := map[string]string{}
	for _, ad := range ads {
		z, err := profile.LogicalZone(c, ad)
		if err != nil {
			f.Partial = append(f.Partial, fmt.Sprintf("availability domain %s: %v", ad, err))
			continue
		}
		zoneOf[ad] = z
		f.Zones = append(f.Zones, z)
	}
	f.DefaultZones = slices.Clone(f.Zones)
	figures, why, err := d.shapes(ctx, c, cn, ads)
	if err != nil {
		return nil, err
	}
	if why != "" {
		f.Partial = append(f.Partial, why)
	}
	f.MachineTypes = machineTypes(resp.Shapes, figures, zoneOf, len(f.Zones))
	f.Sort()
	return f, nil
}

// offered is a shape as ListShapes gave it, with the domains listing it.
type offered struct {
	shape core.Shape
	ads   []string
}

// machineTypes are the shapes OKE takes (names), with their figures and
// logical zones where Compute's ListShapes was read (figures not nil):
// then a shape no domain of the cluster offers is left out.
func machineTypes(names []string, figures map[string]*offered, zoneOf map[string]string, zones int) []kpool.MachineType {
	var out []kpool.MachineType
	for _, name := range names {
		mt := kpool.MachineType{Name: name}
		if figures == nil {
			out = append(out, mt)
			continue
		}
		o, ok := figures[name]
		if !ok {
			continue
		}
		if o.shape.IsFlexible == nil || !*o.shape.IsFlexible {
			mt.CPUs = int(math.Round(float64(deref32(o.shape.Ocpus))))
			mt.MemoryMiB = int(math.Round(float64(deref32(o.shape.MemoryInGBs)) * 1024))
		}
		if o.shape.Gpus != nil {
			mt.GPUs = *o.shape.Gpus
		}
		if len(o.ads) < zones {
			mt.Zones = []string{}
			for _, ad := range o.ads {
				if z, ok := zoneOf[ad]; ok {
					mt.Zones = append(mt.Zones, z)
				}
			}
		}
		out = append(out, mt)
	}
	return out
}

// newer reports whether version a ("1.31.10") is newer than b, by number.
func newer(a, b string) bool {
	am, bm := versionRE.FindStringSubmatch(a), versionRE.FindStringSubmatch(b)
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(am[i])
		y, _ := strconv.Atoi(bm[i])
		if x != y {
			return x > y
		}
	}
	return false
}

func deref32(p *float32) float32 {
	if p == nil {
		return 0
	}
	return *p
}

// shapes reads Compute's ListShapes in each availability domain, every
// page. A catalogue the key may not read is nil figures and a sentence
// why; any other failure is classified as the driver's other calls are.
func (d *Driver) shapes(ctx context.Context, c *kpool.Cluster, cn *conn, ads []string) (map[string]*offered, string, error) {
	cl, err := d.computeClient(c, cn)
	if err != nil {
		return nil, "", err
	}
	out := map[string]*offered{}
	for _, ad := range ads {
		req := core.ListShapesRequest{CompartmentId: common.String(cn.oci.CompartmentID), AvailabilityDomain: common.String(ad)}
		for {
			resp, err := cl.ListShapes(provider.Detached(ctx), req)
			if err != nil {
				return denied(err, resp.RawResponse, cn.oci.CompartmentID)
			}
			for _, sh := range resp.Items {
				if sh.Shape == nil {
					continue
				}
				if out[*sh.Shape] == nil {
					out[*sh.Shape] = &offered{shape: sh}
				}
				out[*sh.Shape].ads = append(out[*sh.Shape].ads, ad)
			}
			if resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
				break
			}
			req.Page = resp.OpcNextPage
		}
	}
	return out, "", nil
}

// denied turns a ListShapes failure into Partial's sentence when the key
// may not read the shapes (or be sent to Compute), else an error.
func denied(err error, resp *http.Response, compartment string) (map[string]*offered, string, error) {
	const what = "shape figures and availability domains not learnt: "
	if provider.IsRefusedHost(err) {
		return nil, what + "the credential may not be sent to OCI Compute's endpoint (" + provider.FirstLine(err.Error()) + ")", nil
	}
	switch status(err) {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return nil, fmt.Sprintf("%sCompute's ListShapes in compartment %s answered %d (the key may not read its shapes)", what, compartment, status(err)), nil
	}
	return nil, "", classify(err, resp, "")
}

// computeClient returns the Compute client of a cluster's credential and
// region: at the cluster's endpoint when it names one (an emulator serves
// both APIs there), else the region's public Compute endpoint, with the
// same identity, guard and retries as the Container Engine client.
func (d *Driver) computeClient(c *kpool.Cluster, cn *conn) (*core.ComputeClient, error) {
	endpoint := cn.endpoint
	if c.Spec.Endpoint == "" {
		endpoint = oke.ComputeEndpoint(cn.oci.Region)
	}
	return d.computes.Load(cn.cr.Name+" "+cn.oci.Region+" "+endpoint, func() (*core.ComputeClient, error) {
		cp, err := d.identity(cn.cr, cn.oci.Region)
		if err != nil {
			return nil, err
		}
		cl, err := core.NewComputeClientWithConfigurationProvider(cp)
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform,
				Reason: fmt.Sprintf("credential %s: no usable OCI identity (the tenancy, user, fingerprint or private key could not be read)", cn.cr.Name), Err: err}
		}
		d.wire(&cl.BaseClient, cn.cr, endpoint)
		return &cl, nil
	})
}
