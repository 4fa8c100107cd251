package main

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// table splits a table's output into its lines' fields.
func table(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	aks := createCluster(t, srv, "aks", kpool.PlatformAzure)
	p := createPool(t, srv, "gpu-workers", aks, "--machine-type", "Standard_D4s_v5", "--zones", "westeurope-1", "--count", "2")
	if p.ProviderName != "gpuworkers" || !reflect.DeepEqual(p.Spec.Zones, []string{"1"}) || p.Spec.Platform.Azure.AvailabilityZones != nil {
		t.Fatalf("created %+v", p)
	}
	id := p.ID

	// Before a controller reports that the pool exists at AKS, nothing
	// limits a change: it is made by the create.
	out := mustRun(t, srv, "nodepool", "update", id, "--machine-type", "Standard_D8s_v5", "--dry-run")
	if rows := table(out); len(rows) != 3 || !reflect.DeepEqual(rows[1][:4], []string{"spec.platform.azure.vmSize", "in_place", `"Standard_D4s_v5"`, `"Standard_D8s_v5"`}) ||
		!strings.Contains(out, "the pool does not exist at the provider yet") {
		t.Errorf("plan of a pool not at the provider:\n%s", out)
	}
	reportAs(t, srv, id, 1, `{"exists": true}`)
	p = decode[*kpool.NodePool](t, srv, "nodepool", "get", id)

	t.Run("table", func(t *testing.T) {
		out := mustRun(t, srv, "nodepool", "update", id, "--count", "5", "--kubernetes-version", "1.31", "--dry-run")
		rows := table(out)
		want := [][]string{
			{"FIELD", "CLASS", "FROM", "TO", "REASON"},
			append([]string{"spec.nodeCount", "in_place", "2", "5"}, strings.Fields("the agent pool scales in place")...),
			append([]string{"spec.kubernetesVersion", "rolls_nodes", `""`, `"1.31"`}, strings.Fields("AKS upgrades the nodes with surge and drain")...),
		}
		if len(rows) != 4 || !reflect.DeepEqual(rows[:3], want) {
			t.Errorf("plan:\n%s", out)
		}
		if last := strings.Split(strings.TrimSpace(out), "\n")[3]; last != "provider azure (agent pool gpuworkers): 2 changes, rolls nodes" {
			t.Errorf("summary %q", last)
		}
		// The columns line up.
		lines := strings.Split(out, "\n")
		if strings.Index(lines[0], "CLASS") != strings.Index(lines[1], "in_place") || strings.Index(lines[0], "TO") != strings.Index(lines[2], `"1.31"`) {
			t.Errorf("columns:\n%s", out)
		}
	})

	t.Run("scale, in place", func(t *testing.T) {
		out := mustRun(t, srv, "nodepool", "scale", id, "--count", "4", "--dry-run")
		if !strings.HasSuffix(out, "\nprovider azure (agent pool gpuworkers): 1 change, no node replaced\n") || !reflect.DeepEqual(table(out)[1][:4], []string{"spec.nodeCount", "in_place", "2", "4"}) {
			t.Errorf("scale --dry-run:\n%s", out)
		}
		// Autoscaling from nothing: "-" for the absent value, the bounds as JSON.
		out = mustRun(t, srv, "nodepool", "scale", id, "--min", "1", "--max", "4", "--dry-run")
		if row := table(out)[1]; !reflect.DeepEqual(row[:4], []string{"spec.autoscaling", "in_place", "-", `{"enabled":true,"maxNodes":4,"minNodes":1}`}) {
			t.Errorf("scale --min --max --dry-run:\n%s", out)
		}
	})

	t.Run("no changes", func(t *testing.T) {
		if out := mustRun(t, srv, "nodepool", "scale", id, "--count", "2", "--dry-run"); out != "No changes.\n" {
			t.Errorf("no-op dry run: %q", out)
		}
	})

	t.Run("json and yaml", func(t *testing.T) {
		d := decode[api.DryRun](t, srv, "nodepool", "update", id, "--label", "tier=gpu", "--zones", "1", "--dry-run")
		if !d.DryRun || d.Plan == nil || len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Field != "spec.labels" || d.Plan.Changes[0].Class != kpool.UpdateInPlace ||
			d.NodePool == nil || d.NodePool.Spec.Labels["tier"] != "gpu" || d.NodePool.Generation != 2 {
			b, _ := json.Marshal(d)
			t.Errorf("dry run: %s", b)
		}
		var y api.DryRun
		if err := yaml.Unmarshal([]byte(mustRun(t, srv, "nodepool", "scale", id, "--count", "3", "--dry-run", "-o", "yaml")), &y); err != nil ||
			!y.DryRun || y.Plan.Provider != "azure" || y.NodePool.Spec.Count() != 3 {
			t.Errorf("yaml: %v %+v", err, y)
		}
	})

	t.Run("replace, dry run", func(t *testing.T) {
		// The plan the write would be refused for, with the replace row
		// and its reason: what a dry run is for.
		tests := []struct {
			args     []string
			field    string
			from, to string
			reason   string
		}{
			{[]string{"--machine-type", "Standard_D8s_v5"}, "spec.platform.azure.vmSize", `"Standard_D4s_v5"`, `"Standard_D8s_v5"`, "AKS does not change an agent pool's vmSize"},
			{[]string{"--zones", "1,2"}, "spec.zones", `["1"]`, `["1","2"]`, "AKS does not change an agent pool's availabilityZones"},
		}
		for _, tt := range tests {
			out := mustRun(t, srv, append([]string{"nodepool", "update", id, "--dry-run"}, tt.args...)...)
			rows := table(out)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(rows) != 4 || !reflect.DeepEqual(rows[1][:4], []string{tt.field, "replace", tt.from, tt.to}) || !strings.Contains(lines[1], tt.reason) ||
				lines[2] != "provider azure (agent pool gpuworkers): 1 change, needs a new pool" ||
				!strings.HasPrefix(lines[3], "Without --dry-run this change is refused (VALIDATION_ERROR): the rows marked replace need a new pool") {
				t.Errorf("%v --dry-run:\n%s", tt.args, out)
			}
			d := decode[api.DryRun](t, srv, append([]string{"nodepool", "update", id, "--dry-run"}, tt.args...)...)
			if d.Plan == nil || len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Class != kpool.UpdateReplace || d.Refused == nil ||
				d.Refused.Code != kpool.CodeValidation || len(d.Refused.Fields) != 1 || d.Refused.Fields[0].Field != tt.field ||
				d.NodePool == nil || d.NodePool.Generation != 1 {
				b, _ := json.Marshal(d)
				t.Errorf("%v --dry-run -o json: %s", tt.args, b)
			}
		}
		civo := createCluster(t, srv, "civo-plan", kpool.PlatformCivo)
		cp := createPool(t, srv, "small", civo, "--machine-type", "g4s.kube.medium")
		reportAs(t, srv, cp.ID, 1, `{"exists": true}`)
		out := mustRun(t, srv, "nodepool", "update", cp.ID, "--kubernetes-version", "1.31", "--dry-run")
		if rows := table(out); len(rows) < 4 || !reflect.DeepEqual(rows[1][:2], []string{"spec.kubernetesVersion", "not_implemented"}) ||
			!strings.Contains(out, "Without --dry-run this change is refused (NOT_IMPLEMENTED)") {
			t.Errorf("civo version --dry-run:\n%s", out)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, args := range [][]string{
			{"update", id, "--machine-type", "Standard_D8s_v5"},
			{"update", id, "--zones", "1,2"},
		} {
			_, err := run(srv, "", append([]string{"nodepool"}, args...)...)
			var e *kpool.Error
			if !errors.As(err, &e) || e.Code != kpool.CodeValidation || len(e.Fields) != 1 {
				t.Fatalf("%v: %v", args, err)
			}
			field := "spec.platform.azure.vmSize"
			if args[2] == "--zones" {
				field = "spec.zones"
			}
			f, err := os.CreateTemp(t.TempDir(), "stderr")
			if err != nil {
				t.Fatal(err)
			}
			if exitCode(e, f) != 1 {
				t.Errorf("%v: exit code", args)
			}
			f.Close()
			b, _ := os.ReadFile(f.Name())
			if e.Fields[0].Field != field || !strings.HasPrefix(string(b), "Error: VALIDATION_ERROR: ") || !strings.Contains(string(b), "  "+field+": cannot be changed in place on azure") {
				t.Errorf("%v: %+v, printed %q", args, e.Fields, b)
			}
		}
		// What Civo cannot do at all.
		civo := createCluster(t, srv, "civo", kpool.PlatformCivo)
		cp := createPool(t, srv, "small", civo, "--machine-type", "g4s.kube.medium")
		if _, err := run(srv, "", "nodepool", "update", cp.ID, "--kubernetes-version", "1.31"); errCodeOf(err) != kpool.CodeNotImplemented ||
			!strings.Contains(err.Error()+" "+err.(*kpool.Error).Details, "kubernetesVersion") {
			t.Errorf("civo version: %v", err)
		}
	})

	// Nothing of that was stored.
	if got := decode[kpool.NodePool](t, srv, "nodepool", "get", id); got.Generation != 1 || got.ResourceVersion != p.ResourceVersion {
		t.Errorf("dry runs changed the pool: %+v", got)
	}
	if _, err := run(srv, "", "nodepool", "scale", id, "--count", "3", "--dry-run", "--resource-version", "0000000000000000"); errCodeOf(err) != kpool.CodeConflict {
		t.Errorf("stale dry run: %v", err)
	}
}

func TestLogicalZones(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	machine := map[kpool.PlatformType]string{kpool.PlatformGCP: "e2-small", kpool.PlatformAWS: "m5.large", kpool.PlatformAzure: "Standard_D4s_v5", kpool.PlatformOCI: "VM.Standard.E2.1"}
	tests := []struct {
		platform kpool.PlatformType
		zones    string
		want     []string
	}{
		{kpool.PlatformGCP, "1,2", []string{"1", "2"}},
		{kpool.PlatformGCP, "us-central1-3", []string{"3"}},
		{kpool.PlatformAWS, "2,1", []string{"2", "1"}},
		{kpool.PlatformAWS, "us-west-2-1", []string{"1"}},
		{kpool.PlatformAzure, "westeurope-1,westeurope-2", []string{"1", "2"}},
		{kpool.PlatformOCI, "1", []string{"1"}},
		{kpool.PlatformOCI, "us-ashburn-1-1", []string{"1"}},
	}
	clusters := map[kpool.PlatformType]string{}
	for i, tt := range tests {
		if clusters[tt.platform] == "" {
			clusters[tt.platform] = createCluster(t, srv, "c-"+string(tt.platform), tt.platform)
		}
		p := createPool(t, srv, "pool-"+string(rune('a'+i)), clusters[tt.platform], "--machine-type", machine[tt.platform], "--zones", tt.zones, "--count", "6")
		b, _ := json.Marshal(p.Spec.Platform)
		if !reflect.DeepEqual(p.Spec.Zones, tt.want) || strings.Contains(string(b), "ones") || strings.Contains(string(b), "Domains") {
			t.Errorf("%s --zones %s: zones %v, platform %s", tt.platform, tt.zones, p.Spec.Zones, b)
		}
	}

	// Native names still go to the platform's own field, and get shows both.
	gke := clusters[kpool.PlatformGCP]
	p := createPool(t, srv, "native", gke, "--machine-type", "e2-small", "--zones", "us-central1-a", "--count", "2")
	if p.Spec.Zones != nil || !reflect.DeepEqual(p.Spec.Platform.GCP.Zones, []string{"us-central1-a"}) {
		t.Fatalf("native zones: %+v", p.Spec)
	}
	// Moving to logical zones: a rolling change on GKE (once the pool
	// exists there).
	reportAs(t, srv, p.ID, 1, `{"exists": true}`)
	out := mustRun(t, srv, "nodepool", "update", p.ID, "--zones", "1,2", "--dry-run")
	if rows := table(out); len(rows) != 3 || !reflect.DeepEqual(rows[1][:4], []string{"spec.zones", "rolls_nodes", `["1"]`, `["1","2"]`}) ||
		!strings.HasSuffix(out, "provider gcp (node pool native): 1 change, rolls nodes\n") {
		t.Errorf("update --zones --dry-run:\n%s", out)
	}
	up := decode[kpool.NodePool](t, srv, "nodepool", "update", p.ID, "--zones", "1,2")
	if !reflect.DeepEqual(up.Spec.Zones, []string{"1", "2"}) || up.Spec.Platform.GCP.Zones != nil || up.Generation != 2 {
		t.Errorf("update --zones: %+v", up.Spec)
	}
	// The same zones by their names are no change; back to names.
	if out := mustRun(t, srv, "nodepool", "update", p.ID, "--zones", "us-central1-a,us-central1-b", "--dry-run"); out != "No changes.\n" {
		t.Errorf("same zones by name:\n%s", out)
	}
	out = mustRun(t, srv, "nodepool", "get", p.ID)
	for _, w := range []string{"Provider name:", "native", "Zones:", "1, 2"} {
		if !strings.Contains(out, w) {
			t.Errorf("get: no %q in\n%s", w, out)
		}
	}
	aks := createPool(t, srv, "agent-pool-1", clusters[kpool.PlatformAzure], "--machine-type", "Standard_D4s_v5", "--zones", "3")
	out = mustRun(t, srv, "nodepool", "get", aks.ID)
	if !strings.Contains(out, "Provider name:") || !strings.Contains(out, "agentpool1") || !regexpMatch(out, `(?m)^Zones:\s+3$`) {
		t.Errorf("get of an AKS pool:\n%s", out)
	}

	// Errors.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nodepool", "create", "mixed", "--cluster", gke, "--machine-type", "e2-small", "--zones", "1,us-central1-b"},
			"--zones 1,us-central1-b: give logical zones (1, 2, 3 or us-central1-1…) or gcp's own zone names (us-central1-b), not both"},
		{[]string{"nodepool", "create", "far", "--cluster", clusters[kpool.PlatformAWS], "--machine-type", "m5.large", "--zones", "3"}, "subnet"},
		{[]string{"nodepool", "create", "x", "--cluster", createCluster(t, srv, "civo", kpool.PlatformCivo), "--machine-type", "g4s.kube.small", "--zones", "1"},
			"--zones does not apply to civo node pools"},
	} {
		if _, err := run(srv, "", c.args...); err == nil || !strings.Contains(errText(err), c.want) {
			t.Errorf("%v: %v, want %q", c.args, errText(err), c.want)
		}
	}
}

// errText is an error with its server details and fields.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	var e *kpool.Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	s := e.Error() + " " + e.Details
	for _, f := range e.Fields {
		s += " " + f.Field + ": " + f.Reason
	}
	return s
}

func regexpMatch(s, re string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestZonesOverFile: --zones replaces the zones of a -f FILE in either form.
func TestZonesOverFile(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	gke := createCluster(t, srv, "gke", kpool.PlatformGCP)
	file := writeFile(t, "pool.yaml", "name: from-file\ncluster_id: "+gke+"\nspec:\n  platform:\n    gcp: {machineType: e2-small, zones: [us-central1-a]}\n")
	p := decode[kpool.NodePool](t, srv, "nodepool", "create", "-f", file, "--zones", "2,3", "--count", "2")
	if !reflect.DeepEqual(p.Spec.Zones, []string{"2", "3"}) || p.Spec.Platform.GCP.Zones != nil {
		t.Errorf("create -f --zones 2,3: %+v", p.Spec)
	}
	// The output of get (with its read-only provider_name) is a valid file.
	got := mustRun(t, srv, "nodepool", "get", p.ID, "-o", "yaml")
	if !strings.Contains(got, "provider_name: from-file") {
		t.Fatalf("get -o yaml:\n%s", got)
	}
	up := decode[kpool.NodePool](t, srv, "nodepool", "update", p.ID, "-f", writeFile(t, "got.yaml", got), "--zones", "us-central1-c")
	if up.Spec.Zones != nil || !reflect.DeepEqual(up.Spec.Platform.GCP.Zones, []string{"us-central1-c"}) || up.Generation != 2 {
		t.Errorf("update -f --zones us-central1-c: %+v", up.Spec)
	}
}

// TestAdvisoryWarnings checks that the CLI shows the server's warnings of
// fields stored but not applied, and plans them advisory.
func TestAdvisoryWarnings(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	aks := createCluster(t, srv, "aks", kpool.PlatformAzure)
	file := writeFile(t, "pool.yaml", `
name: web
spec:
  platform: {azure: {vmSize: Standard_D4s_v5}}
  autoscaling: {enabled: true, minNodes: 1, maxNodes: 5, targetCPUUtilization: 70}
`)
	out, errOut, err := execute("", "nodepool", "create", "-f", file, "--cluster", aks, "-o", "json", "--server", srv, "--user", testUser)
	if err != nil {
		t.Fatal(err)
	}
	var p kpool.NodePool
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(errOut, "Warning: spec.autoscaling.targetCPUUtilization is stored but not applied to the pool: AKS takes") {
		t.Errorf("create: stderr %q", errOut)
	}
	reportAs(t, srv, p.ID, 1, `{"exists": true}`)
	out = mustRun(t, srv, "nodepool", "update", p.ID, "-f", writeFile(t, "tune.yaml", "spec: {autoscaling: {targetCPUUtilization: 60}}"), "--dry-run")
	if rows := table(out); len(rows) != 3 || !reflect.DeepEqual(rows[1][:4], []string{"spec.autoscaling.targetCPUUtilization", "advisory", "70", "60"}) ||
		!strings.HasSuffix(out, "1 change, no node replaced, some stored but not applied (advisory)\n") {
		t.Errorf("plan:\n%s", out)
	}
}
