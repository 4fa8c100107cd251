package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
	"github.com/kpool/kpool/service"
)

// TestDevCreateWait is README's first two steps: kpool dev, then the
// nodepool create --wait it suggests, which must end with the pool Ready
// on the AKS emulator. The emulator runs on a clock the test moves once
// --wait has shown the pool Provisioning, and --wait polls every 10ms.
func TestDevCreateWait(t *testing.T) {
	ctx := context.Background()
	clock := sim.NewManualClock(time.Now())
	printed := startDev(t, clock)
	var try string
	for _, line := range strings.Split(printed, "\n") {
		if try == "" && strings.Contains(line, "nodepool create") {
			try = strings.TrimSpace(line)
		}
	}
	if try == "" {
		t.Fatalf("kpool dev printed no nodepool create to try:\n%s", printed)
	}
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	if m == nil || !auth.LooksLikeToken(m[2]) {
		t.Fatalf("kpool dev printed no server and token:\n%s", printed)
	}
	args, ok := strings.CutPrefix(try, "go run ./cmd/kpool ")
	if !ok || !strings.Contains(args, "--wait") {
		t.Fatalf("suggested command %q", try)
	}

	// Run it; once it shows the pool Provisioning, let the emulator's
	// operation finish.
	root := newRootOn(pollEvery(10 * time.Millisecond))
	var out bytes.Buffer
	// Provisioning shows once the create is claimed, before it is sent:
	// the clock moves only once the emulator has the operation.
	progress := &watched{want: "Creating at azure", seen: make(chan struct{})}
	root.SetOut(&out)
	root.SetErr(progress)
	root.SetArgs(append(strings.Fields(args), "--server", m[1], "--token", m[2], "--timeout", "2m", "-o", "json"))
	ran := make(chan error, 1)
	go func() { ran <- root.ExecuteContext(ctx) }()
	var err error
	select {
	case <-progress.seen:
		clock.Advance(time.Hour)
		err = <-ran
	case err = <-ran:
		t.Fatalf("%s ended before the pool was Provisioning: %v\n%s", try, err, progress)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", try, err, progress)
	}
	if stderr := progress.String(); !strings.Contains(stderr, "nodepool web: Provisioning") || !strings.Contains(stderr, "nodepool web: Ready  3/3 nodes ready") {
		t.Errorf("progress:\n%s", stderr)
	}
	var p kpool.NodePool
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != kpool.PhaseReady || p.Status.ObservedGeneration != p.Generation {
		t.Errorf("pool after --wait: %+v", p.Status)
	}
	// The demo cluster is visible to its owner, by the token and, on
	// loopback in header mode, by X-User-Email as the guide does it.
	byToken := api.NewClient(m[1], "")
	byToken.Token = m[2]
	for name, c := range map[string]*api.Client{"token": byToken, "header": api.NewClient(m[1], devUser)} {
		// One demo cluster per emulator (AKS, EKS, ...), the pool's among
		// them, and a k3s one.
		list, err := c.Clusters(ctx, service.ListOptions{})
		found, k3s := false, false
		for i := 0; err == nil && i < len(list.Clusters); i++ {
			found = found || list.Clusters[i].ID == p.ClusterID
			k3s = k3s || list.Clusters[i].Spec.Platform.Type == kpool.PlatformK3s
		}
		if err != nil || len(list.Clusters) != len(clouds.Emulators())+1 || !found || !k3s {
			t.Errorf("the demo clusters by %s: %+v, %v", name, list, err)
		}
	}
}

// TestEventRetentionFlag checks --event-retention's bounds on every command
// that runs a kpool process.
func TestEventRetentionFlag(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "kpool.db")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--event-retention", "10s"}, "--event-retention 10s: give 0 (keep every event) or at least 1m"},
		{[]string{"controller", "--event-retention", "59s"}, "--event-retention 59s"},
		{[]string{"dev", "--event-retention", "1ms"}, "--event-retention 1ms"},
		{[]string{"serve", "--event-retention", "soon"}, `invalid argument "soon" for "--event-retention"`},
	} {
		_, _, err := execute("", append(tt.args, "--database", db, "--listen", "127.0.0.1:0")...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
	t.Setenv("KPOOL_EVENT_RETENTION", "a day")
	if _, _, err := execute("", "serve", "--database", db, "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), `KPOOL_EVENT_RETENTION "a day"`) {
		t.Errorf("a bad KPOOL_EVENT_RETENTION: %v", err)
	}
}

// TestDevEveryCloud runs, for each demo cluster kpool dev registers (one
// per emulator), the nodepool create it suggests, then a scale and a
// delete, each with --wait: the pool goes Ready at its emulator, scales
// there, and is deleted there (its record goes only once its controller has
// seen it gone). --wait's poll moves the emulators' clock a minute each
// time, so operations end as fast as the test polls.
func TestDevEveryCloud(t *testing.T) {
	ctx := context.Background()
	clock := sim.NewManualClock(time.Now())
	polls := clockWaits(clock)
	printed := startDev(t, clock)
	var creates []string
	for _, line := range strings.Split(printed, "\n") {
		if args, ok := strings.CutPrefix(strings.TrimSpace(line), "go run ./cmd/kpool nodepool create "); ok {
			creates = append(creates, args)
		}
	}
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	if m == nil || len(creates) != len(clouds.Emulators()) {
		t.Fatalf("kpool dev printed %d nodepool creates for %d emulators:\n%s", len(creates), len(clouds.Emulators()), printed)
	}
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := executeOn(polls, "", append(args, "--server", m[1], "--token", m[2], "--timeout", "2m", "-o", "json")...)
		if err != nil {
			t.Fatalf("kpool %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	for _, args := range creates {
		var p kpool.NodePool
		if err := json.Unmarshal([]byte(cli(append([]string{"nodepool", "create"}, strings.Fields(args)...)...)), &p); err != nil {
			t.Fatal(err)
		}
		c := api.NewClient(m[1], "")
		c.Token = m[2]
		cl, err := c.Cluster(ctx, p.ClusterID)
		if err != nil {
			t.Fatal(err)
		}
		name := string(cl.Spec.Platform.Type)
		// nodes is what the pool's controller last saw at the cloud.
		nodes := func() int {
			d, err := c.NodePoolStatus(ctx, p.ID)
			if err != nil || len(d.ControllerStatus) != 1 {
				t.Fatalf("%s: status %+v, %v", name, d, err)
			}
			var meta struct {
				Active int `json:"active_nodes"`
			}
			_ = json.Unmarshal(d.ControllerStatus[0].Metadata, &meta)
			return meta.Active
		}
		if n := nodes(); p.Status.Phase != kpool.PhaseReady || n != 3 {
			t.Errorf("%s: after create --wait: %s with %d nodes", name, p.Status.Phase, n)
		}
		if err := json.Unmarshal([]byte(cli("nodepool", "scale", p.ID, "--count", "5", "--wait")), &p); err != nil {
			t.Fatal(err)
		}
		if n := nodes(); p.Status.Phase != kpool.PhaseReady || n != 5 || p.Status.ObservedGeneration != 2 {
			t.Errorf("%s: after scale --wait: %s with %d nodes at generation %d", name, p.Status.Phase, n, p.Status.ObservedGeneration)
		}
		cli("nodepool", "delete", p.ID, "--wait")
		if _, err := c.NodePool(ctx, p.ID); kpool.ErrorCode(err) != kpool.CodeNotFound {
			t.Errorf("%s: after delete --wait: %v", name, err)
		}
	}
	// The demo k3s cluster has no pools: a create is NOT_IMPLEMENTED,
	// naming the operation and saying what to do instead.
	k3s := regexp.MustCompile(`demo-k3s\s+(\S+)`).FindStringSubmatch(printed)
	if k3s == nil {
		t.Fatalf("no demo k3s cluster in:\n%s", printed)
	}
	_, stderr, err := execute("", "nodepool", "create", "web", "--cluster", k3s[1], "--count", "1", "--server", m[1], "--token", m[2])
	if errCodeOf(err) != kpool.CodeNotImplemented || !strings.Contains(stderr+err.Error(), "nodepool create: k3s clusters have no node pools") {
		t.Errorf("a pool on the demo k3s cluster: %v\n%s", err, stderr)
	}
}

// TestDevPreflight is issue 31's "done when" on kpool dev: once the
// controllers have learnt what each demo cluster offers, a create with an
// unknown machine type, one not offered in the chosen zone, and (GKE's
// regional cluster) a count that does not divide over its default zones
// are VALIDATION_ERRORs naming the field and the fact, and the dry run
// says the same.
func TestDevPreflight(t *testing.T) {
	ctx := context.Background()
	clock := sim.NewManualClock(time.Now())
	printed := startDev(t, clock)
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("no server in:\n%s", printed)
	}
	c := api.NewClient(m[1], "")
	c.Token = m[2]
	tests := []struct {
		cluster, field, says string
		args                 []string
	}{
		{"demo-aks", "spec.platform.azure.vmSize", "Standard_Bogus_v9 is not offered in westeurope", []string{"--machine-type", "Standard_Bogus_v9", "--count", "1"}},
		{"demo-aks", "spec.platform.azure.vmSize", "is not offered in westeurope zone 3", []string{"--machine-type", "Standard_NC24ads_A100_v4", "--count", "1", "--zones", "3"}},
		{"demo-eks", "spec.platform.aws.instanceType", "m5.banana is not offered in us-west-2", []string{"--machine-type", "m5.banana", "--count", "1"}},
		{"demo-eks", "spec.platform.aws.instanceType", "p4d.24xlarge is not offered in us-west-2 zone 1", []string{"--machine-type", "p4d.24xlarge", "--count", "1", "--zones", "1"}},
		{"demo-gke", "spec.platform.gcp.machineType", "banana is not offered in us-central1", []string{"--machine-type", "banana", "--count", "1", "--zones", "1"}},
		{"demo-gke", "spec.platform.gcp.machineType", "g2-standard-8 is not offered in us-central1 zone 4", []string{"--machine-type", "g2-standard-8", "--count", "1", "--zones", "4"}},
		{"demo-gke", "spec.nodeCount", "1 nodes do not divide evenly over the cluster's default zones 1, 2, 3", []string{"--machine-type", "n2-standard-4", "--count", "1"}},
		{"demo-oke", "spec.platform.oci.shape", "VM.Bogus.E9 is not offered in us-ashburn-1", []string{"--machine-type", "VM.Bogus.E9", "--count", "1"}},
		{"demo-oke", "spec.platform.oci.shape", "BM.GPU.A10.4 is not offered in us-ashburn-1 zone 1", []string{"--machine-type", "BM.GPU.A10.4", "--count", "1", "--zones", "1"}},
		{"demo-civo", "spec.platform.civo.size", "g4s.kube.banana is not offered in LON1", []string{"--machine-type", "g4s.kube.banana", "--count", "1"}},
	}
	// The controllers learn each cluster's facts once they reach it.
	learnt := map[string]bool{}
	deadline := time.Now().Add(time.Minute)
	for _, tc := range tests {
		for !learnt[tc.cluster] {
			id, err := c.ClusterID(ctx, tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			f, err := c.ClusterFacts(ctx, id)
			switch {
			case err != nil:
				t.Fatal(err)
			case f != nil:
				learnt[tc.cluster] = true
			case time.Now().After(deadline):
				t.Fatalf("%s: no facts learnt in a minute", tc.cluster)
			default:
				clock.Advance(time.Second)
				_ = pollEvery(20 * time.Millisecond).Tick(ctx)
			}
		}
	}
	for _, tc := range tests {
		for _, dry := range []bool{false, true} {
			args := append([]string{"nodepool", "create", "bogus", "--cluster", tc.cluster, "--server", m[1], "--token", m[2]}, tc.args...)
			if dry {
				args = append(args, "--dry-run")
			}
			_, stderr, err := execute("", args...)
			if errCodeOf(err) != kpool.CodeValidation || !strings.Contains(stderr+err.Error(), tc.field+": ") || !strings.Contains(stderr+err.Error(), tc.says) {
				t.Errorf("%s %v (dry run %v): %v\n%s", tc.cluster, tc.args, dry, err, stderr)
			}
		}
	}
}

// TestDevOperable is issue 32's "done when": on kpool dev's AKS demo
// cluster, a create, a scale, a scale whose operation the emulator fails,
// a delete behind kpool's back and a delete each leave one INFO (or, for
// the failure, WARN) line in the controllers' JSON log naming the cluster
// and pool, and the pool's events say why: the failure and its repair,
// the re-create after the delete behind kpool's back.
func TestDevOperable(t *testing.T) {
	clock := sim.NewManualClock(time.Now())
	polls := clockWaits(clock)
	logs := newLogLines()
	var az *aksim.Server
	printed := startDev(t, clock, func(f *serveFlags) {
		f.logFormat, f.logOut, f.driftInterval = "json", logs, time.Second
		f.emulated = func(r *cloudsim.Running) {
			for _, s := range r.Emulators {
				if e, ok := s.Emulator.(*aksim.Server); ok {
					az = e
				}
			}
		}
	})
	runClock(t, clock)
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	create := regexp.MustCompile(`go run ./cmd/kpool (nodepool create web --cluster ` + aksim.DemoCluster + ` .*)`).FindStringSubmatch(printed)
	if m == nil || create == nil || az == nil {
		t.Fatalf("kpool dev printed no server or no create on %s (emulator %v):\n%s", aksim.DemoCluster, az, printed)
	}
	cli := func(args ...string) string {
		t.Helper()
		if slices.Contains(args, "--wait") {
			args = append(args, "--timeout", "2m")
		}
		out, stderr, err := executeOn(polls, "", append(args, "--server", m[1], "--token", m[2], "-o", "json")...)
		if err != nil {
			t.Fatalf("kpool %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	var p kpool.NodePool
	if err := json.Unmarshal([]byte(cli(strings.Fields(create[1])...)), &p); err != nil {
		t.Fatal(err)
	}
	// line matches a log line on the pool: its message and operation
	// (one of ops, |-separated).
	line := func(msg, ops string) func(map[string]any) bool {
		return func(r map[string]any) bool {
			op, _ := r["operation"].(string)
			return r["msg"] == msg && r["pool_id"] == p.ID && slices.Contains(strings.Split(ops, "|"), op)
		}
	}
	logs.waitFor(t, "of the create finished", 1, line("operation finished", "create"))
	cli("nodepool", "scale", p.ID, "--count", "5", "--wait")
	logs.waitFor(t, "of the scale finished", 1, line("operation finished", "update"))

	// The emulator fails the next operation: the scale's. The controller
	// sees the pool Failed and repairs it.
	az.FailNextOperations(1)
	cli("nodepool", "scale", p.ID, "--count", "4")
	logs.waitFor(t, "of the failure", 1, line("operation failed at the provider", "update"))
	// The repair ends as "repair", or as "update" once a pass has seen
	// its operation run.
	logs.waitFor(t, "of the repair finished", 2, line("operation finished", "update|repair"))

	// Deleted at the emulator behind kpool's back: re-created.
	if err := az.DeletePool(aksim.DemoSubscription, aksim.DemoResourceGroup, aksim.DemoCluster, p.ProviderName); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, "of the re-create finished", 2, line("operation finished", "create"))
	cli("nodepool", "delete", p.ID, "--wait")
	logs.waitFor(t, "of the delete finished", 1, line("operation finished: nothing of the pool is left at the provider", "delete"))

	// One line per action, at INFO (WARN for the failure), each naming
	// the cluster and the pool.
	for _, want := range []struct {
		msg, op, level string
		n              int
	}{
		{"create sent", "create", "INFO", 1},
		{"operation finished", "create", "INFO", 2},
		{"update sent", "update", "INFO", 3}, // the scales, the repair
		{"operation failed at the provider", "update", "WARN", 1},
		{"operation finished", "update|repair", "INFO", 2},
		{"re-create sent", "re-create", "INFO", 1},
		{"delete sent", "delete", "INFO", 1},
		{"operation finished: nothing of the pool is left at the provider", "delete", "INFO", 1},
	} {
		got, _ := logs.matching(line(want.msg, want.op))
		if len(got) != want.n {
			t.Errorf("%d lines %q (operation %s), want %d; the log:\n%s", len(got), want.msg, want.op, want.n, logs)
		}
		for _, r := range got {
			if r["level"] != want.level || r["cluster"] != aksim.DemoCluster || r["cluster_id"] != p.ClusterID || r["pool"] != "web" || r["provider"] != "azure" {
				t.Errorf("line %v: want level %s, cluster %s (%s), pool web, provider azure", r, want.level, aksim.DemoCluster, p.ClusterID)
			}
		}
	}
	// The repair and the re-create say why, in the pool's events.
	var evs api.EventList
	if err := json.Unmarshal([]byte(cli("events", "--pool", p.ID, "--all")), &evs); err != nil {
		t.Fatal(err)
	}
	var trail strings.Builder
	for _, e := range evs.Events {
		trail.WriteString(e.Type + " " + e.Detail + "\n")
	}
	for _, why := range []string{
		"Ready=False (RepairingFailed)", "the provider's last operation on the pool failed",
		"Ready=False (Recreating)", "Drifted=True (DeletedAtProvider)", "behind kpool's back; re-creating it",
	} {
		if !strings.Contains(trail.String(), why) {
			t.Errorf("no event says %q:\n%s", why, trail.String())
		}
	}
}
