package oke

import (
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"github.com/oracle/oci-go-sdk/v65/core"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// ComputeAPIVersion is the path prefix of the Compute (iaas) operations
// emulated: ListShapes alone, which OKE's node pools take their shapes
// from. Tests reach it at the emulator's one endpoint, as the Container
// Engine operations.
const ComputeAPIVersion = "20160918"

// offer is a Compute shape of the emulator's catalogue, with the figures
// Oracle publishes for it (Compute Shapes,
// https://docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm).
// A flexible shape's ocpus and memory are ListShapes' defaults (1 OCPU,
// 16 GB): a node pool's own come from its nodeShapeConfig.
type offer struct {
	name, processor string
	ocpus, memGB    float32
	gpus            int
	gpuDesc         string
	flex            bool
	maxOcpus, maxGB float32 // a flexible shape's bounds
}

// shapes are the shapes of the catalogue, every region's.
var shapes = []offer{
	{name: "VM.Standard.E4.Flex", processor: "2.55 GHz AMD EPYC™ 7J13 (Milan)", ocpus: 1, memGB: 16, flex: true, maxOcpus: 64, maxGB: 1024},
	{name: "VM.Standard.E5.Flex", processor: "2.4 GHz AMD EPYC™ 9J14 (Genoa)", ocpus: 1, memGB: 16, flex: true, maxOcpus: 94, maxGB: 1049},
	{name: "VM.Standard.A1.Flex", processor: "3.0 GHz Ampere® Altra™", ocpus: 1, memGB: 6, flex: true, maxOcpus: 80, maxGB: 512},
	{name: "VM.Standard3.Flex", processor: "2.0 GHz Intel® Xeon® Platinum 8358 (Ice Lake)", ocpus: 1, memGB: 16, flex: true, maxOcpus: 32, maxGB: 512},
	{name: "VM.Standard.E2.1", processor: "2.0 GHz AMD EPYC™ 7551 (Naples)", ocpus: 1, memGB: 8},
	{name: "VM.Standard2.1", processor: "2.0 GHz Intel® Xeon® Platinum 8167M (Skylake)", ocpus: 1, memGB: 15},
	{name: "VM.Standard2.2", processor: "2.0 GHz Intel® Xeon® Platinum 8167M (Skylake)", ocpus: 2, memGB: 30},
	{name: "VM.Standard2.4", processor: "2.0 GHz Intel® Xeon® Platinum 8167M (Skylake)", ocpus: 4, memGB: 60},
	{name: "VM.GPU.A10.1", processor: "2.6 GHz Intel® Xeon® Platinum 8358 (Ice Lake)", ocpus: 15, memGB: 240, gpus: 1, gpuDesc: "NVIDIA® A10"},
	{name: "BM.GPU.A10.4", processor: "2.6 GHz Intel® Xeon® Platinum 8358 (Ice Lake)", ocpus: 64, memGB: 1024, gpus: 4, gpuDesc: "NVIDIA® A10"},
}

// regionOffers are the catalogue's regions: for each, the shapes not
// offered in one of its availability domains (by AD number), as OCI's
// GPU and Arm shapes are not in every domain. A region not listed offers
// every shape in every domain.
var regionOffers = map[string]map[string][]int{
	"us-ashburn-1": {"BM.GPU.A10.4": {1, 3}, "VM.GPU.A10.1": {3}},
	"us-phoenix-1": {"BM.GPU.A10.4": {2, 3}, "VM.GPU.A10.1": {3}, "VM.Standard.A1.Flex": {3}},
}

var adNumberRE = regexp.MustCompile(`(?i)AD-(\d+)$`)

// adNumber is an availability domain's number ("Uocm:PHX-AD-2" is 2).
func adNumber(ad string) int {
	m := adNumberRE.FindStringSubmatch(ad)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// findOffer returns the catalogue's shape of a name (names are exact).
func findOffer(name string) (offer, bool) {
	i := slices.IndexFunc(shapes, func(o offer) bool { return o.name == name })
	if i < 0 {
		return offer{}, false
	}
	return shapes[i], true
}

// offeredIn reports whether a region offers a shape in an availability
// domain.
func offeredIn(region, shape, ad string) bool {
	return !slices.Contains(regionOffers[region][shape], adNumber(ad))
}

// checkOffered refuses a shape the catalogue lacks, or one a placement's
// availability domain does not offer. The second answer is OKE's own
// (400 InvalidParameter, as oracle/terraform-provider-oci#2172 records
// it); the first's wording is the emulator's, with OKE's "Invalid
// nodeShape:" prefix.
func (c *cluster) checkOffered(shape string, pcs []ce.NodePoolPlacementConfigDetails) *sim.Reply {
	if _, ok := findOffer(shape); !ok {
		return invalid("Invalid nodeShape: %s is not a shape offered in region %s.", shape, c.Region)
	}
	for _, pc := range pcs {
		if !offeredIn(c.Region, shape, ptr.Deref(pc.AvailabilityDomain, "")) {
			return invalid("Invalid nodeShape|nodeConfigDetails.placementConfigs[].availabilityDomain|subnetIds: Node shape is unavailable in subnet availability domain(s).")
		}
	}
	return nil
}

// shapeNames are the names of the catalogue's shapes, which every region
// of it offers (in some of its availability domains at least).
func shapeNames() []string {
	out := make([]string, len(shapes))
	for i, o := range shapes {
		out[i] = o.name
	}
	return out
}

// wire is the shape as ListShapes answers it (core.Shape).
func (o offer) wire() core.Shape {
	sh := core.Shape{Shape: common.String(o.name), ProcessorDescription: common.String(o.processor), Ocpus: common.Float32(o.ocpus),
		MemoryInGBs: common.Float32(o.memGB), Gpus: common.Int(o.gpus), IsFlexible: common.Bool(o.flex)}
	if o.gpuDesc != "" {
		sh.GpuDescription = common.String(o.gpuDesc)
	}
	if o.flex {
		sh.OcpuOptions = &core.ShapeOcpuOptions{Min: common.Float32(1), Max: common.Float32(o.maxOcpus)}
		sh.MemoryOptions = &core.ShapeMemoryOptions{MinInGBs: common.Float32(1), MaxInGBs: common.Float32(o.maxGB),
			DefaultPerOcpuInGBs: common.Float32(o.memGB), MinPerOcpuInGBs: common.Float32(1), MaxPerOcpuInGBs: common.Float32(64)}
	}
	return sh
}

// listShapes answers Compute's ListShapes: the shapes of the region of
// the availability domain asked for (the region of the compartment's
// clusters when none is), those offered there; compartmentId is
// mandatory, a compartment with no cluster 404 NotAuthorizedOrNotFound,
// as is every call while SetShapesDenied holds.
func (s *Server) listShapes(req *sim.Request) *sim.Reply {
	q := req.HTTP.URL.Query()
	comp := q.Get("compartmentId")
	if comp == "" {
		return missing("compartmentId")
	}
	size, ok := sim.PageSize(q.Get("limit"), s.pageSize, 1000)
	if !ok {
		return invalid("limit must be between 1 and 1000.")
	}
	region, ads := s.compartmentADs(comp)
	if region == "" || s.shapesDenied {
		return notFound("compartment", comp)
	}
	if ad := q.Get("availabilityDomain"); ad != "" {
		if !slices.Contains(ads, ad) {
			return invalid("availabilityDomain %s is not an availability domain of region %s.", ad, region)
		}
		ads = []string{ad}
	}
	var out []core.Shape
	for _, o := range shapes {
		if name := q.Get("shape"); name != "" && name != o.name {
			continue
		}
		if slices.ContainsFunc(ads, func(ad string) bool { return offeredIn(region, o.name, ad) }) {
			out = append(out, o.wire())
		}
	}
	// Pages follow the shapes' names (sim.Page takes items in key order).
	slices.SortFunc(out, func(a, b core.Shape) int { return strings.Compare(*a.Shape, *b.Shape) })
	page, next, err := sim.Page(out, func(sh core.Shape) string { return *sh.Shape }, q.Get("page"), size)
	if err != nil {
		return invalid("The page token is invalid.")
	}
	rep := jsonReply(http.StatusOK, append([]core.Shape{}, page...))
	if next != "" {
		rep.Header.Set("opc-next-page", next)
	}
	return rep
}

// compartmentADs is the region of a compartment's clusters (the first by
// OCID) and the availability domains their subnets are in.
func (s *Server) compartmentADs(comp string) (string, []string) {
	var ids []string
	for id, c := range s.clusters {
		if c.CompartmentID == comp {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", nil
	}
	sort.Strings(ids)
	region := s.clusters[ids[0]].Region
	var ads []string
	for _, id := range ids {
		if c := s.clusters[id]; c.Region == region {
			for ad := range c.Subnets {
				if !slices.Contains(ads, ad) {
					ads = append(ads, ad)
				}
			}
		}
	}
	sort.Strings(ads)
	return region, ads
}

// SetShapesDenied makes ListShapes answer 404 NotAuthorizedOrNotFound,
// as OCI does for a compartment the key's IAM policies do not let it
// read (no "inspect instance-family"): tests of a credential that may
// manage node pools but not read Compute's catalogue.
func (s *Server) SetShapesDenied(denied bool) { s.Do(func(time.Time) { s.shapesDenied = denied }) }
