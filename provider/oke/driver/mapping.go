package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The node tags (nodeConfigDetails.freeformTags, which OKE puts on the
// nodes it creates) kpool keeps on its pools: the pool's mode, and a stamp
// of the configuration new nodes get. OKE's Node shows its tags and its
// Kubernetes version, not its shape, image or boot volume: a node whose
// stamp is not the pool's was created before the pool's last change of
// those, and is counted in StaleNodes.
const (
	TagConfig = "kpool-config"
	TagMode   = "kpool-mode"
)

// stamp is the configuration stamp of a spec: what OKE applies to new
// nodes only, but the version (which nodes show themselves).
func stamp(c *kpool.Cluster, s provider.PoolSpec) string {
	ads, _ := placementADs(c, s.Zones)
	var labels []string
	for k, v := range s.Labels {
		labels = append(labels, k+"="+v)
	}
	sort.Strings(labels)
	parts := []string{s.MachineType, num(s.Settings["ocpus"]), num(s.Settings["memoryInGBs"]), s.Settings["imageId"],
		strconv.Itoa(s.DiskSizeGB), strconv.FormatBool(s.Spot), strings.Join(ads, ","), strings.Join(labels, ",")}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:8])
}

// num is a number setting in one form ("2", "2.0" and "2.00" alike).
func num(v string) string {
	f, err := strconv.ParseFloat(v, 32)
	if err != nil {
		return v
	}
	return strconv.FormatFloat(float64(float32(f)), 'f', -1, 32)
}

// placementADs maps logical zones to the cluster's availability domains:
// a pool in no zone is placed in every domain the cluster has a subnet in.
func placementADs(c *kpool.Cluster, zones []string) ([]string, error) {
	o := c.Spec.Platform.OCI
	if len(zones) == 0 {
		out := kpool.SortedKeys(o.Subnets)
		if len(out) == 0 {
			return nil, provider.ValidationError(platform, "spec.platform.oci.subnets", "cluster %s has no subnets", c.Name)
		}
		return out, nil
	}
	var out []string
	for _, z := range zones {
		ad, err := profile.ProviderZone(c, z)
		if err != nil {
			return nil, provider.ValidationError(platform, "spec.zones", "%v", err)
		}
		out = append(out, ad)
	}
	return out, nil
}

// placement is the pool's placement configurations: one per availability
// domain, with the cluster's subnet there, preemptible (terminated when
// preempted) for a spot pool.
func placement(c *kpool.Cluster, s provider.PoolSpec) ([]ce.NodePoolPlacementConfigDetails, error) {
	ads, err := placementADs(c, s.Zones)
	if err != nil {
		return nil, err
	}
	var out []ce.NodePoolPlacementConfigDetails
	for _, ad := range ads {
		pc := ce.NodePoolPlacementConfigDetails{AvailabilityDomain: common.String(ad), SubnetId: common.String(c.Spec.Platform.OCI.Subnets[ad])}
		if s.Spot {
			pc.PreemptibleNodeConfig = &ce.PreemptibleNodeConfigDetails{PreemptionAction: ce.TerminatePreemptionAction{IsPreserveBootVolume: common.Bool(false)}}
		}
		out = append(out, pc)
	}
	return out, nil
}

// shapeConfig reads the shape's OCPUs and memory from the settings.
func shapeConfig(s provider.PoolSpec) (ocpus, memory *float32, err error) {
	for _, f := range []struct {
		key string
		to  **float32
	}{{"ocpus", &ocpus}, {"memoryInGBs", &memory}} {
		v := s.Settings[f.key]
		if v == "" {
			continue
		}
		x, perr := strconv.ParseFloat(v, 32)
		if perr != nil || x <= 0 {
			return nil, nil, provider.ValidationError(platform, "spec.platform.oci."+f.key, "%q is not a positive number", v)
		}
		*f.to = common.Float32(float32(x))
	}
	return ocpus, memory, nil
}

// source is the pool's node source: its image and boot volume.
func source(s provider.PoolSpec) (ce.NodeSourceViaImageDetails, error) {
	img := s.Settings["imageId"]
	if img == "" {
		return ce.NodeSourceViaImageDetails{}, provider.ValidationError(platform, "spec.platform.oci.imageId", "required: the pool and its cluster name no image")
	}
	src := ce.NodeSourceViaImageDetails{ImageId: common.String(img)}
	if s.DiskSizeGB > 0 {
		src.BootVolumeSizeInGBs = common.Int64(int64(s.DiskSizeGB))
	}
	return src, nil
}

// poolLabel is the OKE profile's pool label. OKE labels no node with its
// pool (it annotates oci.oraclecloud.com/node-pool-id), so the driver puts
// poolLabel=<the pool's name> in the pool's initialNodeLabels, with which
// OKE's kubelets register each node they start; observe hides it.
var poolLabel = profile.PoolLabel()

// initialLabels are the initialNodeLabels of a pool of spec s: its labels
// and the pool label, valued with its name when that is a valid label value
// (an imported pool's name may not be: its nodes then carry none).
func initialLabels(s provider.PoolSpec) []ce.KeyValue {
	l := copyMap(s.Labels)
	delete(l, poolLabel)
	if len(validation.IsValidLabelValue(s.ProviderName)) == 0 {
		l[poolLabel] = s.ProviderName
	}
	return keyValues(l)
}

// lacksPoolLabel reports whether the pool's initialNodeLabels lack the pool
// label its name gives: the nodes it starts next would carry none.
func lacksPoolLabel(np *ce.NodePool) bool {
	name := ptr.Deref(np.Name, "")
	if len(validation.IsValidLabelValue(name)) > 0 {
		return false
	}
	for _, kv := range np.InitialNodeLabels {
		if ptr.Deref(kv.Key, "") == poolLabel {
			return ptr.Deref(kv.Value, "") != name
		}
	}
	return true
}

func keyValues(labels map[string]string) []ce.KeyValue {
	out := []ce.KeyValue{}
	for _, k := range kpool.SortedKeys(labels) {
		out = append(out, ce.KeyValue{Key: common.String(k), Value: common.String(labels[k])})
	}
	return out
}

// nodeTags are the node tags kpool sets on a pool of spec s.
func nodeTags(c *kpool.Cluster, s provider.PoolSpec) map[string]string {
	return map[string]string{TagConfig: stamp(c, s), TagMode: mode(s)}
}

// createDetails maps a neutral spec to CreateNodePool (the version is
// resolved by the caller).
func createDetails(c *kpool.Cluster, o *kpool.OCICluster, s provider.PoolSpec) (ce.CreateNodePoolDetails, error) {
	pcs, err := placement(c, s)
	if err != nil {
		return ce.CreateNodePoolDetails{}, err
	}
	src, err := source(s)
	if err != nil {
		return ce.CreateNodePoolDetails{}, err
	}
	ocpus, memory, err := shapeConfig(s)
	if err != nil {
		return ce.CreateNodePoolDetails{}, err
	}
	in := ce.CreateNodePoolDetails{
		CompartmentId: common.String(o.CompartmentID), ClusterId: common.String(o.ClusterID), Name: common.String(s.ProviderName),
		NodeShape: common.String(s.MachineType), NodeSourceDetails: src, InitialNodeLabels: initialLabels(s), FreeformTags: poolTags(s),
		NodeConfigDetails:      &ce.CreateNodePoolNodeConfigDetails{Size: common.Int(s.Count), PlacementConfigs: pcs, FreeformTags: nodeTags(c, s)},
		NodePoolCyclingDetails: cyclingDetails(s.Upgrade, false), NodeEvictionNodePoolSettings: evictionSettings(s.Upgrade),
	}
	if ocpus != nil || memory != nil {
		in.NodeShapeConfig = &ce.CreateNodeShapeConfigDetails{Ocpus: ocpus, MemoryInGBs: memory}
	}
	return in, nil
}

// kpool's versions: 1.31 (OKE's newest patch of it for the cluster's node
// pools) or 1.31.1 (that patch); OKE's: v1.31.1.
var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?$`)

// version resolves a kpool version to the OKE version a node pool takes:
// a minor version is the newest patch of it that GetNodePoolOptions lists
// for the cluster; a full one is sent as it is, v-prefixed. "" is nil (the
// cluster's own).
func (d *Driver) version(ctx context.Context, cn *conn, v string) (*string, error) {
	if v == "" {
		return nil, nil
	}
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return nil, provider.ValidationError(platform, "spec.kubernetesVersion", "%q is not a Kubernetes version (1.31 or 1.31.1)", v)
	}
	if m[3] != "" {
		return common.String("v" + m[1] + "." + m[2] + "." + m[3]), nil
	}
	list, err := d.poolVersions(ctx, cn)
	if err != nil {
		return nil, err
	}
	best, bestPatch := "", -1
	for _, x := range list {
		xm := versionRE.FindStringSubmatch(x)
		if xm == nil || xm[1] != m[1] || xm[2] != m[2] || xm[3] == "" {
			continue
		}
		if p, _ := strconv.Atoi(xm[3]); p > bestPatch {
			best, bestPatch = x, p
		}
	}
	if best == "" {
		return nil, provider.ValidationError(platform, "spec.kubernetesVersion", "OKE offers no %s for the node pools of cluster %s (it offers %s)", v, cn.oci.ClusterID, strings.Join(list, ", "))
	}
	return common.String(best), nil
}

// poolVersions lists the versions the cluster's node pools may run
// (GetNodePoolOptions of the cluster), kept for versionsFor.
func (d *Driver) poolVersions(ctx context.Context, cn *conn) ([]string, error) {
	key := cn.key + " " + cn.oci.ClusterID
	if vs, ok := d.versions.Get(key); ok && time.Since(vs.at) < versionsFor {
		return vs.list, nil
	}
	resp, err := cn.cl.GetNodePoolOptions(provider.Detached(ctx), ce.GetNodePoolOptionsRequest{NodePoolOptionId: common.String(cn.oci.ClusterID)})
	if err != nil {
		return nil, classify(err, resp.RawResponse, "spec.kubernetesVersion")
	}
	d.versions.Add(key, versionSet{list: resp.KubernetesVersions, at: time.Now()})
	return resp.KubernetesVersions, nil
}

// minor is an OKE version's major.minor ("v1.31.1" is "1.31").
func minor(v string) string {
	if m := versionRE.FindStringSubmatch(v); m != nil {
		return m[1] + "." + m[2]
	}
	return v
}

// versionMatches reports whether a pool of OKE version have runs the
// spec's version: its minor, or that exact patch.
func versionMatches(have, want string) bool {
	if want == "" {
		return true
	}
	m := versionRE.FindStringSubmatch(want)
	if m == nil {
		return false
	}
	if m[3] == "" {
		return minor(have) == m[1]+"."+m[2]
	}
	return strings.TrimPrefix(have, "v") == m[1]+"."+m[2]+"."+m[3]
}

// older reports whether version a is before b (missing parts compare as
// equal).
func older(a, b string) bool {
	am, bm := versionRE.FindStringSubmatch(a), versionRE.FindStringSubmatch(b)
	if am == nil || bm == nil {
		return false
	}
	for i := 1; i <= 3; i++ {
		if am[i] == "" || bm[i] == "" {
			return false
		}
		x, _ := strconv.Atoi(am[i])
		y, _ := strconv.Atoi(bm[i])
		if x != y {
			return x < y
		}
	}
	return false
}

// downgrade refuses a spec whose version is older than the pool's: OKE
// upgrades node pools and never downgrades them, so only a new pool can
// run it.
func downgrade(np *ce.NodePool, s provider.PoolSpec) error {
	have := ptr.Deref(np.KubernetesVersion, "")
	if s.Version != "" && older(s.Version, have) {
		return provider.ValidationError(platform, "spec.kubernetesVersion", "node pool %s runs Kubernetes %s and OKE cannot downgrade it to %s; create a new pool", ptr.Deref(np.Name, ""), have, s.Version)
	}
	return nil
}

// poolTags are a node pool's freeform tags (NodePool's freeformTags, not
// the node tags in nodeConfigDetails): the user's and the owner's mark.
// OCI's free-form tag keys are 1-100 printable characters without periods
// or spaces, values at most 256 ("Limits on Tags",
// https://docs.oracle.com/iaas/Content/Tagging/Concepts/taggingoverview.htm).
func poolTags(s provider.PoolSpec) map[string]string { return provider.TagKeys.Put(s.Tags, s.Owner) }

// adopt answers a create for a pool that exists (provider.Adopt). A
// version older than the pool's needs a new pool (downgrade), whatever the
// capability table says of versions, which OKE otherwise applies to new
// nodes; a pool being deleted, or failed, is returned as it is, to be
// waited on or repaired by the update that follows.
func adopt(c *kpool.Cluster, np *ce.NodePool, s provider.PoolSpec, a *autoscaler) (*provider.Pool, error) {
	p := observe(c, *np)
	observeBounds([]provider.Pool{p}, a)
	if provider.Foreign(&p, s.Owner) {
		return nil, provider.ForeignError(platform, p.ProviderName, p.Owner)
	}
	if err := downgrade(np, s); err != nil {
		return nil, err
	}
	if np.LifecycleState == ce.NodePoolLifecycleStateDeleting || np.LifecycleState == ce.NodePoolLifecycleStateFailed {
		return &p, nil
	}
	s.Mode = mode(s)
	return provider.Adopt(profile, s, &p)
}

func mode(s provider.PoolSpec) string {
	if s.Mode == "" {
		return kpool.ModeUser
	}
	return s.Mode
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
