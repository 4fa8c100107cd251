package placement

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// How each cloud labels its nodes, from the clouds' own documentation (not
// from kpool's profiles): the label naming a node's pool, with the pool's
// name at the cloud, and topology.kubernetes.io/zone's value for a logical
// zone ("" on a cloud without zones).
var cloudNodes = map[kpool.PlatformType]struct {
	poolKey string
	zone    func(logical string) string
}{
	kpool.PlatformAzure: {"kubernetes.azure.com/agentpool", func(z string) string { return "westeurope-" + z }},
	kpool.PlatformAWS:   {"eks.amazonaws.com/nodegroup", func(z string) string { return "us-west-2" + string("abcd"[z[0]-'1']) }},
	kpool.PlatformGCP:   {"cloud.google.com/gke-nodepool", func(z string) string { return "us-central1-" + string("abcf"[z[0]-'1']) }},
	kpool.PlatformOCI:   {"oke.oraclecloud.com/node-pool", func(z string) string { return "US-ASHBURN-AD-" + z }},
	kpool.PlatformCivo:  {"kubernetes.civo.com/civo-node-pool", nil},
}

// fleet is the nodes of a cluster's pools as the cloud labels them: one
// node per pool and zone it runs in (every zone when it names none), with
// the kompox.dev labels the pool was created with (status.placementLabels
// where a controller saw them, else what kpool creates), the cloud's pool
// and zone labels, the pool's own labels and taints.
func fleet(t *testing.T, c *Cluster) []*corev1.Node {
	t.Helper()
	cn := cloudNodes[c.Cluster.Spec.Platform.Type]
	var out []*corev1.Node
	for _, p := range c.Pools {
		if p.Deleting() {
			continue
		}
		zones, _, err := provider.PoolZones(c.Profile, c.Cluster, &p.Spec)
		if err != nil {
			t.Fatal(err)
		}
		carried := map[string]string{}
		if l := p.Status.PlacementLabels; l != nil {
			carried = *l
		} else if !p.Spec.Observed() {
			carried[provider.LabelPool] = p.LogicalPool()
			if len(zones) == 1 {
				carried[provider.LabelZone] = zones[0]
			}
		}
		if cn.zone == nil {
			zones = []string{""}
		} else if len(zones) == 0 {
			zones = []string{"1", "2", "3"}
		}
		pn := p.ProviderName
		if pn == "" {
			pn = p.Name
		}
		d, err := provider.Desired(c.Profile, c.Cluster, p)
		if err != nil {
			d = provider.PoolSpec{Taints: p.Spec.Taints}
		}
		for _, z := range zones {
			labels := map[string]string{cn.poolKey: pn}
			for k, v := range p.Spec.Labels {
				labels[k] = v
			}
			for k, v := range carried {
				labels[k] = v
			}
			name := p.Name
			if z != "" {
				labels[provider.LabelTopologyZone] = cn.zone(z)
				labels[labelBetaZone] = cn.zone(z)
				name += "-" + z
			}
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
			for _, tt := range c.Profile.NodeTaints(d) {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: tt.Key, Value: tt.Value, Effect: corev1.TaintEffect(tt.Effect)})
			}
			out = append(out, n)
		}
	}
	return out
}

// documents splits and decodes every document of data.
func documents(data []byte) ([]*document, error) {
	chunks, _, err := split(data)
	if err != nil {
		return nil, err
	}
	var fe kpool.FieldErrors
	var out []*document
	for i, c := range chunks {
		if d, ok := decode(i+1, c, &fe); ok {
			out = append(out, d)
		}
	}
	return out, fe.Err()
}

// landing is where each placed workload's pods can run: the nodes whose
// labels its required node affinity and nodeSelector match and whose
// NoSchedule and NoExecute taints it tolerates, as the Kubernetes scheduler
// decides it (k8s.io/component-helpers), by workload name.
func landing(t *testing.T, manifests string, nodes []*corev1.Node, ignoreTaints bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	docs, err := documents([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.obj == nil {
			continue
		}
		gk, _ := kindOf(d.obj)
		wl, ok := workloads[gk]
		if !ok {
			continue
		}
		specMap, _ := path(d.obj, wl.podSpec, false)
		b, _ := json.Marshal(specMap)
		var pod corev1.Pod
		if err := json.Unmarshal(b, &pod.Spec); err != nil {
			t.Fatalf("%s: the placed pod spec is not a Kubernetes pod spec: %v", gk, err)
		}
		meta, _ := d.obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		affinity := nodeaffinity.GetRequiredNodeAffinity(&pod)
		noSchedule := func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}
		out[name] = []string{}
		for _, n := range nodes {
			match, err := affinity.Match(n)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations, noSchedule, false)
			if match && (!untolerated || ignoreTaints) {
				out[name] = append(out[name], n.Name)
			}
		}
		slices.Sort(out[name])
	}
	return out
}

// zonalCluster is a cluster of platform pt with the pools of real life:
// user in zones 1-3, gpu in zone 1 (tainted), legacy that kpool only
// observes, in zones 1 and 2, whose nodes carry only the cloud's labels,
// and narrowed, created in zones 1 and 2 and narrowed to 1 (its nodes never
// got kompox.dev/node-zone). On Civo the pools have no zones.
func zonalCluster(t *testing.T, pt kpool.PlatformType) *Cluster {
	t.Helper()
	specs := map[kpool.PlatformType]struct{ cluster, pool string }{
		kpool.PlatformAzure: {`{"type":"azure","azure":{"subscriptionId":"6f0c2a4e-0000-4000-8000-000000000001","resourceGroup":"rg","clusterName":"c","location":"westeurope"}}`,
			`{"type":"azure","azure":{"vmSize":"Standard_D4s_v5"}}`},
		kpool.PlatformAWS: {`{"type":"aws","aws":{"region":"us-west-2","clusterName":"c","nodeRoleArn":"arn:aws:iam::123456789012:role/n",
			"subnets":{"us-west-2a":"subnet-0aaaaaaaaaaaaaaa1","us-west-2b":"subnet-0bbbbbbbbbbbbbbb2","us-west-2c":"subnet-0ccccccccccccccc3"}}}`,
			`{"type":"aws","aws":{"instanceType":"m5.large"}}`},
		kpool.PlatformGCP: {`{"type":"gcp","gcp":{"projectId":"acme","location":"us-central1","clusterName":"c"}}`,
			`{"type":"gcp","gcp":{"machineType":"e2-standard-4"}}`},
		kpool.PlatformOCI: {`{"type":"oci","oci":{"region":"us-ashburn-1","compartmentId":"ocid1.compartment.oc1..a","clusterId":"ocid1.cluster.oc1.iad.a","imageId":"ocid1.image.oc1.iad.a",
			"subnets":{"Uocm:US-ASHBURN-AD-1":"ocid1.subnet.oc1.iad.a1","Uocm:US-ASHBURN-AD-2":"ocid1.subnet.oc1.iad.a2","Uocm:US-ASHBURN-AD-3":"ocid1.subnet.oc1.iad.a3"}}}`,
			`{"type":"oci","oci":{"shape":"VM.Standard.E4.Flex","ocpus":2}}`},
		kpool.PlatformCivo: {`{"type":"civo","civo":{"region":"LON1","clusterId":"6f0c2a4e-0000-4000-8000-000000000002"}}`,
			`{"type":"civo","civo":{"size":"g4s.kube.medium"}}`},
	}
	s := specs[pt]
	var c kpool.Cluster
	if err := json.Unmarshal([]byte(`{"id":"c1","name":"c","spec":{"platform":`+s.cluster+`}}`), &c); err != nil {
		t.Fatal(err)
	}
	zonal := pt != kpool.PlatformCivo
	zones := func(zs string) string {
		if !zonal {
			return ""
		}
		return `,"zones":` + zs
	}
	pool := func(js string) *kpool.NodePool {
		var p kpool.NodePool
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return &p
	}
	gpuCarried := `{"kompox.dev/node-pool":"gpu","kompox.dev/node-zone":"1"}`
	if !zonal {
		gpuCarried = `{"kompox.dev/node-pool":"gpu"}`
	}
	out := &Cluster{Cluster: &c, Profile: catalog.Registry().Profile(pt), Pools: []*kpool.NodePool{
		pool(`{"name":"system","provider_name":"system","spec":{"mode":"system","nodeCount":3,"platform":` + s.pool + zones(`["1","2","3"]`) + `},
			"status":{"phase":"Ready","placementLabels":{"kompox.dev/node-pool":"system"}}}`),
		pool(`{"name":"user","provider_name":"user","spec":{"nodeCount":3,"platform":` + s.pool + zones(`["1","2","3"]`) + `},
			"status":{"phase":"Ready","placementLabels":{"kompox.dev/node-pool":"user"}}}`),
		pool(`{"name":"gpu","provider_name":"gpu","spec":{"nodeCount":1,"platform":` + s.pool + zones(`["1"]`) + `,
			"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]},"status":{"phase":"Ready","placementLabels":` + gpuCarried + `}}`),
		pool(`{"name":"legacy","provider_name":"legacy-np","spec":{"management":"observe","nodeCount":2,"platform":` + s.pool + zones(`["1","2"]`) + `},
			"status":{"phase":"Ready","placementLabels":{}}}`),
		pool(`{"name":"narrowed","provider_name":"narrowed","spec":{"nodeCount":1,"platform":` + s.pool + zones(`["1"]`) + `},
			"status":{"phase":"Ready","placementLabels":{"kompox.dev/node-pool":"narrowed"}}}`),
	}}
	if zonal {
		// A zonal logical pool (issue 18): one provider pool per zone, all
		// labelled kompox.dev/node-pool=zonal, each with its zone.
		for _, z := range []string{"1", "2", "3"} {
			out.Pools = append(out.Pools, pool(`{"name":"zonal-`+z+`","provider_name":"zonal`+z+`","spec":{"placementPool":"zonal","nodeCount":1,"platform":`+s.pool+`,"zones":["`+z+`"]},
				"status":{"phase":"Ready","placementLabels":{"kompox.dev/node-pool":"zonal","kompox.dev/node-zone":"`+z+`"}}}`))
		}
	}
	return out
}

// TestEveryPodLandsWhereIntended places workloads on a fleet of each cloud
// labelled as that cloud labels nodes, and checks with the scheduler's own
// helpers that each pod can run on exactly the nodes of the pools and
// zones intended: the cases found wrong in issue 15 (pools kpool only
// observes, zones pinned under another key, narrowed pools, ORed terms) and
// the usual ones.
func TestEveryPodLandsWhereIntended(t *testing.T) {
	t.Parallel()
	const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: c:1}]\n"
	withSpec := func(extra string) string {
		return strings.Replace(deployment, "      containers:", extra+"      containers:", 1)
	}
	cases := []struct {
		name      string
		intent    Intent
		manifest  string
		want      []string // node names: pool-zone, or pool on Civo
		zonesOnly bool     // needs zones
	}{
		{"a pool in three zones", Intent{Pool: "user"}, deployment, []string{"user-1", "user-2", "user-3"}, false},
		{"a pool kpool only observes", Intent{Pool: "legacy"}, deployment, []string{"legacy-1", "legacy-2"}, false},
		{"observed and managed pools in a zone", Intent{Pools: []string{"user", "legacy"}, Zone: "1"}, deployment, []string{"legacy-1", "user-1"}, true},
		{"a narrowed pool's zone", Intent{Pool: "narrowed", Zone: "1"}, deployment, []string{"narrowed-1"}, true},
		{"a tainted single-zone pool", Intent{Pool: "gpu"}, deployment, []string{"gpu-1"}, false},
		{"a tainted pool in its zone", Intent{Pool: "gpu", Zone: "1"}, deployment, []string{"gpu-1"}, true},
		{"zones of the default pool", Intent{Zones: []string{"1", "2"}}, deployment, []string{"user-1", "user-2"}, true},
		{"two pools in two zones", Intent{Pools: []string{"user", "system"}, Zones: []string{"2", "3"}}, deployment, []string{"system-2", "system-3", "user-2", "user-3"}, true},
		{"ORed terms, one allowing the pool", Intent{Pool: "user"},
			withSpec("      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kompox.dev/node-pool, operator: In, values: [system]}]}, {matchExpressions: [{key: kompox.dev/node-pool, operator: In, values: [user]}]}]}}}\n"),
			[]string{"user-1", "user-2", "user-3"}, false},
		{"a zonal logical pool in two zones", Intent{Pool: "zonal", Zones: []string{"1", "2"}}, deployment, []string{"zonal-1-1", "zonal-2-2"}, true},
		{"a zonal logical pool, anywhere", Intent{Pool: "zonal"}, deployment, []string{"zonal-1-1", "zonal-2-2", "zonal-3-3"}, true},
		{"one member by its own name", Intent{Pool: "zonal-2"}, deployment, []string{"zonal-2-2"}, true},
		{"ORed terms, observed pool", Intent{Pool: "legacy"},
			withSpec("      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kompox.dev/node-pool, operator: In, values: [system]}]}, {matchExpressions: [{key: team, operator: DoesNotExist}]}]}}}\n"),
			[]string{"legacy-1", "legacy-2"}, false},
	}
	for _, pt := range []kpool.PlatformType{kpool.PlatformAzure, kpool.PlatformAWS, kpool.PlatformGCP, kpool.PlatformOCI, kpool.PlatformCivo} {
		c := zonalCluster(t, pt)
		nodes := fleet(t, c)
		cases := cases
		// A zone pinned under the cloud's own zone key, the same zone.
		if z := cloudNodes[pt].zone; z != nil {
			cases = append(cases, struct {
				name      string
				intent    Intent
				manifest  string
				want      []string
				zonesOnly bool
			}{"the same zone pinned under topology.kubernetes.io/zone", Intent{Pool: "user", Zone: "2"},
				withSpec("      nodeSelector: {topology.kubernetes.io/zone: " + z("2") + "}\n"), []string{"user-2"}, true})
		}
		for _, tc := range cases {
			if tc.zonesOnly && cloudNodes[pt].zone == nil {
				continue
			}
			want := tc.want
			if cloudNodes[pt].zone == nil { // Civo: one node per pool
				want = nil
				for _, n := range tc.want {
					n, _, _ = strings.Cut(n, "-")
					if !slices.Contains(want, n) {
						want = append(want, n)
					}
				}
			}
			t.Run(string(pt)+"/"+tc.name, func(t *testing.T) {
				res, err := Place([]byte(tc.manifest), Options{Intent: tc.intent, DefaultPool: DefaultPool, Cluster: c})
				if err != nil {
					t.Fatal(err)
				}
				got := landing(t, res.Manifests, nodes, false)["w"]
				if !slices.Equal(got, want) {
					t.Fatalf("pods can run on %v, want %v; placed:\n%s", got, want, res.Manifests)
				}
			})
		}
	}
}

// TestGoldenPodsLand: every workload the golden cases place against a
// cluster can run somewhere, and only on pools it names.
func TestGoldenPodsLand(t *testing.T) {
	t.Parallel()
	cs := clusters(t)
	cases, _ := filepath.Glob("testdata/*.yaml")
	checked := 0
	for _, path := range cases {
		in, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(in), "# place:") {
			continue
		}
		o := options(t, string(in), cs)
		if o.Cluster == nil {
			continue
		}
		res, err := Place(in, o)
		if err != nil {
			continue // a refusal: its golden says why
		}
		nodes := fleet(t, o.Cluster.withViews())
		docs, _ := documents(in)
		named := map[string][]string{}
		for _, d := range docs {
			if d.obj == nil {
				continue
			}
			meta, _ := d.obj["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			ann, _ := meta["annotations"].(map[string]any)
			var fe kpool.FieldErrors
			i := annotationIntent(&fe, "", ann)
			switch {
			case o.Intent.Pool != "":
				named[name] = []string{o.Intent.Pool}
			case len(o.Intent.Pools) > 0:
				named[name] = o.Intent.Pools
			case i.Pool != "":
				named[name] = []string{i.Pool}
			case len(i.Pools) > 0:
				named[name] = i.Pools
			}
		}
		// --no-tolerations leaves tolerations to the workload: taints aside.
		for name, on := range landing(t, res.Manifests, nodes, o.NoTolerations) {
			checked++
			if len(on) == 0 {
				t.Errorf("%s: %s's pods can run nowhere:\n%s", path, name, res.Manifests)
			}
			for _, n := range on {
				pool, _, _ := strings.Cut(n, "-")
				if ps := named[name]; ps != nil && !slices.Contains(ps, pool) {
					t.Errorf("%s: %s's pods can run on %s, outside the pools named %v", path, name, n, ps)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no golden workload placed against a cluster")
	}
}
