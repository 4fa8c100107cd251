package provider_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/jsondoc"
	. "github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/eks"
)

// reg is every platform kpool knows; these tests put the five providers side
// by side, as the README's table does.
var reg = catalog.Registry()

var clusters = map[kpool.PlatformType]string{
	kpool.PlatformAzure: `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"aks","location":"westeurope"}}}`,
	kpool.PlatformAWS:   `{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"eks","nodeRoleArn":"arn:aws:iam::123456789012:role/n","subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`,
	kpool.PlatformGCP:   `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"gke"}}}`,
	kpool.PlatformOCI:   `{"platform":{"type":"oci","oci":{"region":"us-ashburn-1","compartmentId":"ocid1.compartment.oc1..a","clusterId":"ocid1.cluster.oc1..a","imageId":"ocid1.image.oc1..a","subnets":{"Uocm:US-ASHBURN-AD-1":"ocid1.subnet.oc1..a","Uocm:US-ASHBURN-AD-2":"ocid1.subnet.oc1..b"}}}}`,
	kpool.PlatformCivo:  `{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`,
	kpool.PlatformK3s:   `{"platform":{"type":"k3s"}}`,
}

var basePools = map[kpool.PlatformType]string{
	kpool.PlatformAzure: `{"platform":{"azure":{"vmSize":"Standard_D4s_v5","osDiskSizeGB":100}},"nodeCount":3}`,
	kpool.PlatformAWS:   `{"platform":{"aws":{"instanceType":"m5.xlarge","volumeSize":100}},"nodeCount":3}`,
	kpool.PlatformGCP:   `{"platform":{"gcp":{"machineType":"n2-standard-4","diskSize":100}},"nodeCount":3}`,
	kpool.PlatformOCI:   `{"platform":{"oci":{"shape":"VM.Standard.E4.Flex","ocpus":2,"bootVolumeSizeInGBs":100}},"nodeCount":3}`,
	kpool.PlatformCivo:  `{"platform":{"civo":{"size":"g4s.kube.medium"}},"nodeCount":3}`,
}

func cluster(t *testing.T, pt kpool.PlatformType) *kpool.Cluster {
	t.Helper()
	c := &kpool.Cluster{Name: "prod"}
	if !jsondoc.Decode([]byte(clusters[pt]), &c.Spec, "spec", func(f, r string) { t.Fatalf("%s: %s", f, r) }) {
		t.Fatal("not decoded")
	}
	return c
}

func spec(t *testing.T, c *kpool.Cluster, patch string) *kpool.NodePoolSpec {
	t.Helper()
	s, err := checked(t, c, patch)
	if err != nil {
		t.Fatalf("test spec invalid: %v", err)
	}
	return s
}

// checked is a pool spec of cluster c (the platform's base pool with patch
// merged), defaulted and validated as the service does.
func checked(t *testing.T, c *kpool.Cluster, patch string) (*kpool.NodePoolSpec, error) {
	t.Helper()
	merged, err := jsondoc.Merge([]byte(basePools[c.Spec.Platform.Type]), []byte(patch), true)
	if err != nil {
		t.Fatal(err)
	}
	var s kpool.NodePoolSpec
	if !jsondoc.Decode(merged, &s, "spec", func(f, r string) { t.Fatalf("%s: %s", f, r) }) {
		t.Fatal("not decoded")
	}
	kpool.DefaultNodePoolSpec(&s, c, reg.Profile(c.Spec.Platform.Type).Region(&c.Spec))
	p := &kpool.NodePool{Name: "workers", Spec: s}
	return &p.Spec, kpool.ValidateNodePool(reg, p, c)
}

// TestPlanFollowsTheResearch checks the change classes of the table.
func TestPlanFollowsTheResearch(t *testing.T) {
	type row map[kpool.PlatformType]kpool.UpdateClass
	const (
		in    = kpool.UpdateInPlace
		rolls = kpool.UpdateRollsNodes
		fresh = kpool.UpdateNewNodesOnly
		repl  = kpool.UpdateReplace
		ni    = kpool.UpdateNotImplemented
	)
	patches := map[kpool.PlatformType]map[string]string{
		kpool.PlatformAzure: {"machine": `{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}`, "zones": `{"zones":["1"]}`, "spot": `{"platform":{"azure":{"spotInstances":true}}}`, "disk": `{"platform":{"azure":{"osDiskSizeGB":200}}}`},
		kpool.PlatformAWS:   {"machine": `{"platform":{"aws":{"instanceType":"m5.2xlarge"}}}`, "zones": `{"zones":["1"]}`, "spot": `{"platform":{"aws":{"spotInstances":true}}}`, "disk": `{"platform":{"aws":{"volumeSize":200}}}`},
		kpool.PlatformGCP:   {"machine": `{"platform":{"gcp":{"machineType":"n2-standard-8"}}}`, "zones": `{"zones":["1"]}`, "spot": `{"platform":{"gcp":{"preemptible":true}}}`, "disk": `{"platform":{"gcp":{"diskSize":200}}}`},
		kpool.PlatformOCI:   {"machine": `{"platform":{"oci":{"shape":"VM.Standard.E5.Flex"}}}`, "zones": `{"zones":["1"]}`, "spot": `{"platform":{"oci":{"preemptible":true}}}`, "disk": `{"platform":{"oci":{"bootVolumeSizeInGBs":200}}}`},
		kpool.PlatformCivo:  {"machine": `{"platform":{"civo":{"size":"g4s.kube.large"}}}`, "zones": `{"zones":["1"]}`},
	}
	common := map[string]string{
		"count":   `{"nodeCount":5}`,
		"auto":    `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":9}}`,
		"labels":  `{"labels":{"team":"a"}}`,
		"taints":  `{"taints":[{"key":"a","effect":"NoSchedule"}]}`,
		"version": `{"kubernetesVersion":"1.31"}`,
		"tags":    `{"tags":{"owner":"me"}}`,
	}
	table := map[string]row{
		"count":   {kpool.PlatformAzure: in, kpool.PlatformAWS: in, kpool.PlatformGCP: in, kpool.PlatformOCI: in, kpool.PlatformCivo: in},
		"auto":    {kpool.PlatformAzure: in, kpool.PlatformAWS: in, kpool.PlatformGCP: in, kpool.PlatformOCI: in, kpool.PlatformCivo: in},
		"machine": {kpool.PlatformAzure: repl, kpool.PlatformAWS: repl, kpool.PlatformGCP: rolls, kpool.PlatformOCI: fresh, kpool.PlatformCivo: repl},
		"zones":   {kpool.PlatformAzure: repl, kpool.PlatformAWS: repl, kpool.PlatformGCP: rolls, kpool.PlatformOCI: fresh, kpool.PlatformCivo: ni},
		"labels":  {kpool.PlatformAzure: in, kpool.PlatformAWS: in, kpool.PlatformGCP: in, kpool.PlatformOCI: fresh, kpool.PlatformCivo: in},
		"taints":  {kpool.PlatformAzure: in, kpool.PlatformAWS: in, kpool.PlatformGCP: in, kpool.PlatformOCI: ni, kpool.PlatformCivo: in},
		"spot":    {kpool.PlatformAzure: repl, kpool.PlatformAWS: repl, kpool.PlatformGCP: repl, kpool.PlatformOCI: fresh},
		"disk":    {kpool.PlatformAzure: repl, kpool.PlatformAWS: rolls, kpool.PlatformGCP: rolls, kpool.PlatformOCI: fresh},
		"version": {kpool.PlatformAzure: rolls, kpool.PlatformAWS: rolls, kpool.PlatformGCP: rolls, kpool.PlatformOCI: fresh, kpool.PlatformCivo: ni},
		"tags":    {kpool.PlatformAzure: in, kpool.PlatformAWS: in, kpool.PlatformGCP: in, kpool.PlatformOCI: in, kpool.PlatformCivo: ni},
	}
	for field, classes := range table {
		for pt, want := range classes {
			t.Run(field+"/"+string(pt), func(t *testing.T) {
				c := cluster(t, pt)
				patch, ok := common[field]
				if !ok {
					patch = patches[pt][field]
				}
				old := spec(t, c, `{}`)
				next := spec(t, c, patch)
				plan, err := reg.Plan(c, old, next)
				if err != nil {
					t.Fatal(err)
				}
				if len(plan.Changes) != 1 || plan.Changes[0].Class != want || plan.Changes[0].Reason == "" {
					t.Fatalf("plan %+v; want one change of class %s", plan.Changes, want)
				}
			})
		}
	}
}

// TestPlanAdvisory checks that the autoscaler's targets and delays are
// planned apart from its bounds, advisory on every provider (none applies
// them per pool), and accepted at create.
func TestPlanAdvisory(t *testing.T) {
	const auto = `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":9}}`
	const tuned = `{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":9,"targetCPUUtilization":70,"scaleDownDelay":"10m"}}`
	for pt := range basePools {
		t.Run(string(pt), func(t *testing.T) {
			c := cluster(t, pt)
			old, next := spec(t, c, auto), spec(t, c, tuned)
			if !reg.Profile(pt).Capabilities().Autoscaling {
				// No autoscaling, so no tuning: refused, saying what to do instead.
				err := reg.CheckCreate(c, next)
				if kpool.ErrorCode(err) != kpool.CodeNotImplemented || !strings.Contains(err.Error(), "spec.autoscaling") || !strings.Contains(err.Error(), "MIN:MAX") {
					t.Fatalf("create with autoscaling on %s: %v", pt, err)
				}
				return
			}
			plan, err := reg.Plan(c, old, next)
			if err != nil {
				t.Fatal(err)
			}
			fields := map[string]kpool.UpdateClass{}
			for _, ch := range plan.Changes {
				fields[ch.Field] = ch.Class
				if ch.Reason == "" || !strings.Contains(ch.Reason, "cluster") {
					t.Errorf("%s: reason %q does not say where the provider takes it", ch.Field, ch.Reason)
				}
			}
			if len(fields) != 2 || fields["spec.autoscaling.targetCPUUtilization"] != kpool.UpdateAdvisory || fields["spec.autoscaling.scaleDownDelay"] != kpool.UpdateAdvisory {
				t.Fatalf("plan %+v; want the two advisory fields only", plan.Changes)
			}
			if err := plan.Refusal(); err != nil {
				t.Fatalf("advisory changes refused: %v", err)
			}
			if err := reg.CheckCreate(c, next); err != nil {
				t.Fatalf("create with advisory fields: %v", err)
			}
			// The bounds alone are in place, whatever the targets.
			plan, _ = reg.Plan(c, next, spec(t, c, `{"autoscaling":{"enabled":true,"minNodes":2,"maxNodes":9,"targetCPUUtilization":70,"scaleDownDelay":"10m"}}`))
			if len(plan.Changes) != 1 || plan.Changes[0].Field != "spec.autoscaling" || plan.Changes[0].Class != kpool.UpdateInPlace {
				t.Fatalf("bounds: %+v", plan.Changes)
			}
		})
	}
}

func TestPlanNoChange(t *testing.T) {
	for pt := range basePools {
		c := cluster(t, pt)
		plan, err := reg.Plan(c, spec(t, c, `{}`), spec(t, c, `{}`))
		if err != nil || len(plan.Changes) != 0 {
			t.Fatalf("%s: identical specs planned %v, %v", pt, plan.Changes, err)
		}
	}
	// Native zones and the same logical zones are no change.
	c := cluster(t, kpool.PlatformGCP)
	plan, err := reg.Plan(c, spec(t, c, `{"platform":{"gcp":{"zones":["us-central1-a","us-central1-b"]}},"nodeCount":2}`), spec(t, c, `{"zones":["2","1"],"nodeCount":2}`))
	if err != nil || len(plan.Changes) != 0 {
		t.Fatalf("native vs logical zones: %+v %v", plan.Changes, err)
	}
}

func TestPlanRefusal(t *testing.T) {
	c := cluster(t, kpool.PlatformAzure)
	plan, err := reg.Plan(c, spec(t, c, `{}`), spec(t, c, `{"zones":["1","2"],"platform":{"azure":{"vmSize":"Standard_D8s_v5"}},"nodeCount":4}`))
	if err != nil {
		t.Fatal(err)
	}
	refusal := plan.Refusal()
	e, ok := refusal.(*kpool.Error)
	if !ok || e.Code != kpool.CodeValidation || len(e.Fields) != 2 {
		t.Fatalf("refusal %v", refusal)
	}
	for _, f := range e.Fields {
		if !strings.Contains(f.Reason, "azure") || (f.Field != "spec.zones" && f.Field != "spec.platform.azure.vmSize") {
			t.Fatalf("field %+v", f)
		}
	}
	civo := cluster(t, kpool.PlatformCivo)
	plan, _ = reg.Plan(civo, spec(t, civo, `{}`), spec(t, civo, `{"kubernetesVersion":"1.31"}`))
	if kpool.ErrorCode(plan.Refusal()) != kpool.CodeNotImplemented {
		t.Fatalf("civo version change: %v", plan.Refusal())
	}
}

func TestCheckCreate(t *testing.T) {
	tests := []struct {
		platform kpool.PlatformType
		patch    string
		code     string
	}{
		{kpool.PlatformAzure, `{"zones":["1","2","3"],"taints":[{"key":"a","effect":"NoSchedule"}]}`, ""},
		{kpool.PlatformAzure, `{"platform":{"azure":{"availabilityZones":["1"]}},"zones":["2"]}`, kpool.CodeValidation},
		{kpool.PlatformCivo, `{"zones":["1"]}`, kpool.CodeNotImplemented},
		{kpool.PlatformCivo, `{"kubernetesVersion":"1.30"}`, kpool.CodeNotImplemented},
		{kpool.PlatformCivo, `{"tags":{"a":"b"}}`, kpool.CodeNotImplemented},
		{kpool.PlatformCivo, `{"labels":{"a":"b"},"taints":[{"key":"a","effect":"NoSchedule"}]}`, ""},
		{kpool.PlatformOCI, `{"platform":{"oci":{"labels":{"a":"b"}}}}`, ""},
		{kpool.PlatformOCI, `{"taints":[{"key":"a","effect":"NoSchedule"}]}`, kpool.CodeNotImplemented},
		{kpool.PlatformOCI, `{"zones":["3"]}`, kpool.CodeValidation}, // no AD-3 subnet
		{kpool.PlatformAWS, `{"zones":["1","2"]}`, ""},               // by zone name and by zone id
		{kpool.PlatformAWS, `{"zones":["3"]}`, kpool.CodeValidation}, // no subnet in us-west-2c
		{kpool.PlatformAWS, `{"platform":{"aws":{"availabilityZones":["eu-west-1a"]}}}`, kpool.CodeValidation},
		{kpool.PlatformGCP, `{"platform":{"gcp":{"zones":["us-central1-a"],"accelerators":[{"type":"nvidia-l4","count":1}]}}}`, ""},
	}
	for _, tc := range tests {
		// A create is validated, then checked against the provider.
		c := cluster(t, tc.platform)
		s, err := checked(t, c, tc.patch)
		if err == nil {
			err = reg.CheckCreate(c, s)
		}
		if got := kpool.ErrorCode(err); got != tc.code {
			t.Errorf("%s %s: got %v, want %q", tc.platform, tc.patch, err, tc.code)
		}
	}
	k3s := cluster(t, kpool.PlatformK3s)
	if err := reg.CheckCreate(k3s, &kpool.NodePoolSpec{}); kpool.ErrorCode(err) != kpool.CodeNotImplemented {
		t.Errorf("k3s: %v", err)
	}
}

func TestZones(t *testing.T) {
	tests := []struct {
		platform              kpool.PlatformType
		logical, native, node string // node: the topology.kubernetes.io/zone value
	}{
		{kpool.PlatformAzure, "2", "2", "westeurope-2"},
		{kpool.PlatformAWS, "3", "us-west-2c", "us-west-2c"},
		{kpool.PlatformGCP, "1", "us-central1-a", "us-central1-a"},
		{kpool.PlatformOCI, "2", "Uocm:US-ASHBURN-AD-2", "US-ASHBURN-AD-2"},
	}
	for _, tc := range tests {
		c := cluster(t, tc.platform)
		p := reg.Profile(tc.platform)
		n, err := p.ProviderZone(c, tc.logical)
		if err != nil || n != tc.native {
			t.Errorf("%s: zone %s maps to %q (%v), want %q", tc.platform, tc.logical, n, err, tc.native)
		}
		l, err := p.LogicalZone(c, tc.native)
		if err != nil || l != tc.logical {
			t.Errorf("%s: %s maps back to %q (%v), want %q", tc.platform, tc.native, l, err, tc.logical)
		}
		// Placement writes the nodes' label, and maps it back when a
		// person gives it.
		if got, err := p.NodeZone(c, tc.logical); err != nil || got != tc.node {
			t.Errorf("%s: zone %s is %q (%v) on nodes, want %q", tc.platform, tc.logical, got, err, tc.node)
		}
		if l, err := p.LogicalZone(c, tc.node); err != nil || l != tc.logical {
			t.Errorf("%s: %s maps back to %q (%v)", tc.platform, tc.node, l, err)
		}
	}
	aws := cluster(t, kpool.PlatformAWS)
	if id, err := eks.Subnet(aws, "2"); err != nil || id != "subnet-0123456789abcdef1" {
		t.Errorf("subnet by zone id: %q %v", id, err)
	}
	// "<region>-N" is normalised to N when the spec is defaulted.
	az := cluster(t, kpool.PlatformAzure)
	s := spec(t, az, `{"zones":["westeurope-2","1"]}`)
	if strings.Join(s.Zones, ",") != "2,1" {
		t.Errorf("normalised zones %v", s.Zones)
	}
}

func TestProviderNames(t *testing.T) {
	tests := []struct {
		platform    kpool.PlatformType
		pool, want  string
		taken       []string
		wantTooLong bool
	}{
		{platform: kpool.PlatformAzure, pool: "workers", want: "workers"},
		{platform: kpool.PlatformAzure, pool: "gpu-a100", want: "gpua100"},
		{platform: kpool.PlatformAzure, pool: "production-workers"}, // hashed
		{platform: kpool.PlatformAzure, pool: "workers", taken: []string{"workers"}},
		{platform: kpool.PlatformAWS, pool: "production-workers", want: "production-workers"},
		{platform: kpool.PlatformGCP, pool: strings.Repeat("a", 50)},
		{platform: kpool.PlatformOCI, pool: "workers", want: "workers"},
	}
	for _, tc := range tests {
		caps := reg.Profile(tc.platform).Capabilities()
		got, err := ProviderName(caps, tc.pool, tc.taken)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.platform, tc.pool, err)
		}
		if !caps.Names.Match(got) {
			t.Errorf("%s %s: %q breaks the provider's rules", tc.platform, tc.pool, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.platform, tc.pool, got, tc.want)
		}
		for _, x := range tc.taken {
			if got == x {
				t.Errorf("%s %s: reused taken %q", tc.platform, tc.pool, got)
			}
		}
		again, _ := ProviderName(caps, tc.pool, tc.taken)
		if again != got {
			t.Errorf("%s %s: not deterministic (%q, %q)", tc.platform, tc.pool, got, again)
		}
	}
	if _, err := ProviderName(reg.Profile(kpool.PlatformK3s).Capabilities(), "x", nil); !IsNotImplemented(err) {
		t.Errorf("k3s: %v", err)
	}
}

func TestCapabilitiesAreComplete(t *testing.T) {
	for _, p := range reg.Profiles() {
		c := p.Capabilities()
		pt := p.Type()
		if !c.NodePools {
			continue
		}
		for _, f := range Fields {
			if u, ok := c.Updates[f]; !ok || u.Class == "" || u.Reason == "" {
				t.Errorf("%s: no update class for %s", pt, f)
			}
		}
		if _, err := json.Marshal(c); err != nil {
			t.Error(err)
		}
	}
}

func TestErrors(t *testing.T) {
	err := error(&Error{Kind: KindThrottled, Provider: kpool.PlatformAzure, RetryAfter: 7e9})
	if !IsThrottled(err) || IsTransient(err) || !Retryable(err) {
		t.Fatal("kinds")
	}
	if d, ok := RetryAfter(err); !ok || d.Seconds() != 7 {
		t.Fatal("retry after")
	}
	v := ValidationError(kpool.PlatformAzure, "spec.platform.azure.vmSize", "fixed")
	api := APIError(v).(*kpool.Error)
	if api.Code != kpool.CodeValidation || api.Fields[0].Field != "spec.platform.azure.vmSize" {
		t.Fatalf("API error %+v", api)
	}
}

// TestPlanStrategy: a change of the strategy's cloud settings is one row,
// in place everywhere, showing the strategy as the spec writes it; a
// change of replacement alone (kpool's own) is none.
func TestPlanStrategy(t *testing.T) {
	for pt := range basePools {
		c := cluster(t, pt)
		plan, err := reg.Plan(c, spec(t, c, `{"updateStrategy":{"replacement":"Surge"}}`), spec(t, c, `{"updateStrategy":{"maxSurge":"2"}}`))
		if err != nil || len(plan.Changes) != 1 {
			t.Fatalf("%s: %+v %v", pt, plan.Changes, err)
		}
		ch := plan.Changes[0]
		from, _ := json.Marshal(ch.From)
		to, _ := json.Marshal(ch.To)
		if ch.Field != "spec.updateStrategy" || ch.Class != kpool.UpdateInPlace || string(from) != "null" || string(to) != `{"maxSurge":"2"}` {
			t.Errorf("%s: %+v (from %s, to %s)", pt, ch, from, to)
		}
		if plan, _ := reg.Plan(c, spec(t, c, `{}`), spec(t, c, `{"updateStrategy":{"replacement":"Surge"}}`)); len(plan.Changes) != 0 {
			t.Errorf("%s: replacement alone planned %+v", pt, plan.Changes)
		}
	}
}
