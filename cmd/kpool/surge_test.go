package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
)

// otherMachine is a second machine type, well-formed for every platform:
// the profiles check a machine type's syntax, the fake driver no more.
const otherMachine = "large-2"

// replacing is the first platform of the catalog that changes a pool's
// machine type only with a new pool, on a server whose kpool drives it
// with the fake driver (so that its pools wait for this kpool's controller).
func replacing(t *testing.T) (string, provider.Profile) {
	t.Helper()
	for _, p := range catalog.Profiles() {
		if p.Capabilities().Updates[provider.FieldMachineType].Class == kpool.UpdateReplace {
			reg := catalog.Registry()
			reg.Add(fake.New(fake.Options{Platform: p.Type()}))
			return newServerOn(t, reg), p
		}
	}
	t.Fatal("no platform needs a new pool for a new machine type")
	return "", nil
}

// examplePool creates a pool of the profile's example machine type in
// cluster, with flags.
func examplePool(t *testing.T, srv string, p provider.Profile, name, cluster string, flags ...string) *kpool.NodePool {
	t.Helper()
	cli := p.CLI()
	flags = append(append([]string{"--machine-type", cli.MachineExample}, strings.Fields(cli.ExampleFlags)...), flags...)
	return createPool(t, srv, name, cluster, flags...)
}

// TestSurgeStrategyFlags: --replacement and the other strategy flags set
// spec.updateStrategy on create and update (keeping what they do not
// name), get shows it, and a value that is none is refused naming its flag.
func TestSurgeStrategyFlags(t *testing.T) {
	t.Parallel()
	srv, profile := replacing(t)
	prod := createCluster(t, srv, "prod", profile.Type())
	p := examplePool(t, srv, profile, "web", prod, "--count", "2",
		"--replacement", "surge", "--max-surge", "50%", "--drain-timeout", "20m", "--soak", "2m", "--on-stuck", "Wait")
	want := kpool.UpdateStrategy{Replacement: "Surge", MaxSurge: "50%", DrainTimeout: "20m", Soak: "2m", OnStuck: "Wait"}
	if u := p.Spec.UpdateStrategy; u == nil || *u != want {
		t.Fatalf("create: updateStrategy %+v", u)
	}
	up := decode[kpool.NodePool](t, srv, "nodepool", "update", p.ID, "--max-unavailable", "1", "--on-stuck", "force")
	want.MaxUnavailable, want.OnStuck = "1", "Force"
	if u := up.Spec.UpdateStrategy; u == nil || *u != want || up.Generation != 2 {
		t.Fatalf("update: updateStrategy %+v (generation %d)", u, up.Generation)
	}
	// The strategy alone has no row at the provider, and is a change.
	if out := mustRun(t, srv, "nodepool", "update", p.ID, "--replacement", "Refuse", "--dry-run"); out != "No changes at the provider: only the update strategy changes (generation 2 -> 3).\n" {
		t.Errorf("dry run of the strategy alone: %q", out)
	}
	if vs, _, _ := complete("nodepool", "update", "web", "--replacement", ""); strings.Join(vs, ",") != "Refuse,Surge" {
		t.Errorf("completion of --replacement: %v", vs)
	}
	if vs, _, _ := complete("nodepool", "create", "web", "--on-stuck", ""); strings.Join(vs, ",") != "Stop,Wait,Force" {
		t.Errorf("completion of --on-stuck: %v", vs)
	}
	out := mustRun(t, srv, "nodepool", "get", p.ID)
	if !regexpMatch(out, `(?m)^Update strategy:\s+Surge \(surge 50%, drain 20m0s, unavailable 1, soak 2m0s\), on stuck Force$`) {
		t.Errorf("get:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--replacement", "recreate"}, `--replacement "recreate": use Refuse or Surge`},
		{[]string{"--on-stuck", "retry"}, `--on-stuck "retry": use Stop or Wait or Force`},
		{[]string{"--drain-timeout", "30"}, `--drain-timeout "30": give a duration`},
		{[]string{"--drain-timeout", "48h"}, "spec.updateStrategy.drainTimeout"},
		{[]string{"--max-surge", "0"}, "spec.updateStrategy.maxSurge"},
	} {
		if _, err := run(srv, "", append([]string{"nodepool", "update", p.ID}, c.args...)...); !strings.Contains(errText(err), c.want) {
			t.Errorf("%v: %v, want %q", c.args, errText(err), c.want)
		}
	}
}

// TestSurgePlan: a change that needs a new pool is planned "replace (surge
// 1, drain 30m0s)" on a pool whose strategy is Surge, and carried out; on
// one whose strategy is Refuse it still needs a new pool, and the refusal
// names --replacement Surge.
func TestSurgePlan(t *testing.T) {
	t.Parallel()
	srv, profile := replacing(t)
	prod := createCluster(t, srv, "prod", profile.Type())
	surge := examplePool(t, srv, profile, "surging", prod, "--count", "2", "--replacement", "Surge")
	refuse := examplePool(t, srv, profile, "refusing", prod, "--count", "2")
	reportAs(t, srv, surge.ID, 1, `{"exists": true}`)
	reportAs(t, srv, refuse.ID, 1, `{"exists": true}`)
	cluster := decode[kpool.Cluster](t, srv, "cluster", "get", prod)
	field := profile.Block(&cluster, &surge.Spec).Path(provider.FieldMachineType)
	summary := func(pool, effect string) string {
		return fmt.Sprintf("provider %s (%s %s): 1 change, %s", profile.Type(), profile.CLI().PoolNoun, pool, effect)
	}

	out := mustRun(t, srv, "nodepool", "update", surge.ID, "--machine-type", otherMachine, "--dry-run")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	row := fmt.Sprintf("%s replace (surge 1, drain 30m0s) %q %q", field, profile.CLI().MachineExample, otherMachine)
	if field == "" || len(lines) != 3 || !strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), row) ||
		lines[2] != summary("surging", "replaces the pool (surge 1, drain 30m0s)") {
		t.Errorf("Surge plan, want %s:\n%s", row, out)
	}
	d := decode[api.DryRun](t, srv, "nodepool", "update", surge.ID, "--machine-type", otherMachine, "--dry-run")
	if d.Refused != nil || d.Plan == nil || d.Plan.Replacement != "surge 1, drain 30m0s" {
		b, _ := json.Marshal(d)
		t.Errorf("Surge plan -o json: %s", b)
	}
	// Surge given with the change itself: the plan is the new strategy's.
	out = mustRun(t, srv, "nodepool", "update", refuse.ID, "--machine-type", otherMachine, "--replacement", "Surge", "--max-surge", "2", "--dry-run")
	if !strings.Contains(out, "replace (surge 2, drain 30m0s)") || strings.Contains(out, "Without --dry-run") {
		t.Errorf("Surge given with the change:\n%s", out)
	}

	out = mustRun(t, srv, "nodepool", "update", refuse.ID, "--machine-type", otherMachine, "--dry-run")
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || table(out)[1][1] != "replace" || lines[2] != summary("refusing", "needs a new pool") ||
		!strings.Contains(lines[3], "give --replacement Surge to have kpool replace it") {
		t.Errorf("Refuse plan:\n%s", out)
	}
	_, err := run(srv, "", "nodepool", "update", refuse.ID, "--machine-type", otherMachine)
	if !strings.Contains(errText(err), "--replacement Surge") {
		t.Errorf("refused update: %v", errText(err))
	}

	up := decode[kpool.NodePool](t, srv, "nodepool", "update", surge.ID, "--machine-type", otherMachine)
	if up.Generation != 2 || profile.Block(&cluster, &up.Spec).MachineType != otherMachine {
		t.Errorf("the Surge update was not made: %+v", up)
	}
}

// replacementMeta is a report's metadata with a replacement at step.
func replacementMeta(gen int64, step kpool.ReplacementStep, oldNodes, newNodes int, extra string) string {
	r := map[string]any{"generation": gen, "step": step, "from": "web", "to": "web-r2", "startedAt": "2026-01-02T03:04:05Z",
		"oldNodes": oldNodes, "newNodes": newNodes}
	if extra != "" {
		if err := json.Unmarshal([]byte(extra), &r); err != nil {
			panic(err)
		}
	}
	b, _ := json.Marshal(map[string]any{"exists": true, "replacement": r})
	return string(b)
}

// TestRollbackCmd: get shows a replacement; rollback asks for it to be
// undone (a CONFLICT when none runs), by name with --cluster.
func TestRollbackCmd(t *testing.T) {
	t.Parallel()
	srv, profile := replacing(t)
	prod := createCluster(t, srv, "prod", profile.Type())
	p := examplePool(t, srv, profile, "web", prod, "--count", "3", "--replacement", "Surge")
	reportAs(t, srv, p.ID, 1, `{"exists": true}`, ready)
	if _, err := run(srv, "", "nodepool", "rollback", "web", "--cluster", "prod"); errCodeOf(err) != kpool.CodeConflict ||
		!strings.Contains(errText(err), "no replacement under way") {
		t.Errorf("rollback with nothing to roll back: %v", errText(err))
	}
	mustRun(t, srv, "nodepool", "update", p.ID, "--machine-type", otherMachine)
	reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepDraining, 3, 3,
		`{"blocking": ["PodDisruptionBudget shop/web allows no disruption"], "message": "draining web-1"}`), notReady)
	out := mustRun(t, srv, "nodepool", "get", "web", "--cluster", "prod")
	for _, re := range []string{`(?m)^Replacement:\s+Draining, generation 2, started 2026-01-02T03:04:05Z`, `(?m)^  From -> to:\s+web -> web-r2$`,
		`(?m)^  Ready nodes:\s+old 3, new 3$`, `(?m)^  Blocking:\s+PodDisruptionBudget shop/web allows no disruption$`,
		`(?m)^  Message:\s+draining web-1$`, `(?m)^  Undo:\s+kpool nodepool rollback web$`} {
		if !regexpMatch(out, re) {
			t.Errorf("get: no %s in\n%s", re, out)
		}
	}
	if out := mustRun(t, srv, "nodepool", "status", "web", "--cluster", "prod"); !regexpMatch(out, `(?m)^  Ready nodes:\s+old 3, new 3$`) {
		t.Errorf("status:\n%s", out)
	}
	out = mustRun(t, srv, "nodepool", "rollback", "web", "--cluster", "prod")
	if out != "nodepool web: rollback of web -> web-r2 requested (step Draining)\n" {
		t.Errorf("rollback: %q", out)
	}
	back := decode[kpool.NodePool](t, srv, "nodepool", "rollback", p.ID)
	if rp := back.Status.Replacement; rp == nil || rp.RollbackRequestedAt == nil {
		t.Errorf("rollback -o json: %+v", rp)
	}
	if out := mustRun(t, srv, "nodepool", "get", p.ID); !strings.Contains(out, "Draining (rollback requested") || strings.Contains(out, "Undo:") {
		t.Errorf("get after the rollback:\n%s", out)
	}
}

// TestUpdateWaitReplacement: update --wait follows a replacement step by
// step (within 80 columns) until it is Done.
func TestUpdateWaitReplacement(t *testing.T) {
	t.Parallel()
	srv, profile := replacing(t)
	prod := createCluster(t, srv, "prod", profile.Type())
	p := examplePool(t, srv, profile, "web", prod, "--count", "3", "--replacement", "Surge")
	reportAs(t, srv, p.ID, 1, `{"exists": true, "active_nodes": 3, "desired_nodes": 3}`, ready)
	s := stepWaits()
	done := s.background(srv, "nodepool", "update", p.ID, "--machine-type", otherMachine, "--wait", "-o", "json")
	s.step(func() {
		reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepSurging, 3, 1, `{"message": "1 of 3 new nodes Ready"}`), notReady)
	})
	s.step(func() {
		reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepDraining, 3, 3,
			`{"blocking": ["PodDisruptionBudget shop/a-very-long-budget-name-that-goes-on allows no disruption for now"]}`), notReady)
	})
	s.step(func() { reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepSoaking, 0, 3, ""), notReady) })
	s.step(func() {
		reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepDone, 0, 3, `{"finishedAt": "2026-01-02T04:00:00Z"}`), ready)
	})
	r := <-done
	if r.err != nil {
		t.Fatalf("update --wait: %v\n%s", r.err, r.stderr)
	}
	var got kpool.NodePool
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Status.Replacement == nil || got.Status.Replacement.Step != kpool.StepDone ||
		got.ProviderName != "web-r2" {
		t.Errorf("the pool printed: %v %+v (provider name %s)", err, got.Status.Replacement, got.ProviderName)
	}
	lines := withoutWarnings(r.stderr)
	want := []string{
		"nodepool web: Updating",
		"nodepool web: Surging  old 3, new 1 ready  (1 of 3 new nodes Ready)",
		"nodepool web: Draining  old 3, new 3 ready  (PodDisruptionBudget shop…  ",
		"nodepool web: Soaking  old 0, new 3 ready",
		"nodepool web: Done  old 0, new 3 ready",
	}
	if len(lines) != len(want) {
		t.Fatalf("progress:\n%s", r.stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || (i > 0 && len([]rune(lines[i])) > 80) {
			t.Errorf("progress line %d: %q, want %q… within 80 columns", i, lines[i], w)
		}
	}
}

// TestWaitReplacementStops: update --wait ends with exit 1 and the reason
// when the replacement stops; rollback --wait follows the rollback until
// the replacement is RolledBack.
func TestWaitReplacementStops(t *testing.T) {
	t.Parallel()
	srv, profile := replacing(t)
	prod := createCluster(t, srv, "prod", profile.Type())
	p := examplePool(t, srv, profile, "web", prod, "--count", "3", "--replacement", "Surge")
	reportAs(t, srv, p.ID, 1, `{"exists": true}`, ready)
	s := stepWaits()
	done := s.background(srv, "nodepool", "update", p.ID, "--machine-type", otherMachine, "--wait")
	s.step(func() {
		reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepStopped, 3, 3,
			`{"blocking": ["node web-2 not drained in 30m0s"], "message": "drain timed out"}`), notReady)
	})
	r := <-done
	var x *exitError
	if !errors.As(r.err, &x) || x.code != exitFailed || !strings.Contains(r.err.Error(), "stopped: drain timed out; blocked by node web-2 not drained in 30m0s") ||
		!strings.Contains(r.err.Error(), "kpool nodepool rollback web") {
		t.Fatalf("update --wait of a replacement that stopped: %v", r.err)
	}

	s = stepWaits()
	done = s.background(srv, "nodepool", "rollback", p.ID, "--wait")
	s.step(func() { reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepRollingBack, 3, 1, ""), notReady) })
	s.step(func() { reportAs(t, srv, p.ID, 2, replacementMeta(2, kpool.StepRolledBack, 3, 0, ""), ready) })
	r = <-done
	if r.err != nil || r.stdout != "nodepool web rolled back: web serves, web-r2 is gone\n" {
		t.Fatalf("rollback --wait: %v %q\n%s", r.err, r.stdout, r.stderr)
	}
	if lines := withoutWarnings(r.stderr); len(lines) != 3 || !strings.HasPrefix(lines[2], "nodepool web: RolledBack  old 3, new 0 ready") {
		t.Errorf("rollback progress:\n%s", r.stderr)
	}
}

// TestSurgeApplyDiff: a file's replace change under replacement: Surge is a
// replacement: diff exits 1 (it differs), as it does under Refuse (with a
// note), and apply --dry-run plans it "replace (surge 1, drain 30m0s)".
func TestSurgeApplyDiff(t *testing.T) {
	t.Parallel()
	srv, profile := replacing(t)
	prod := createCluster(t, srv, "prod", profile.Type())
	p := examplePool(t, srv, profile, "web", prod, "--count", "2")
	reportAs(t, srv, p.ID, 1, `{"exists": true}`, ready)
	cluster := decode[kpool.Cluster](t, srv, "cluster", "get", prod)
	spec := p.Spec
	profile.SetBlock(&spec, provider.Block{MachineType: otherMachine})
	block, err := json.Marshal(spec.Platform)
	if err != nil {
		t.Fatal(err)
	}
	field := profile.Block(&cluster, &spec).Path(provider.FieldMachineType)
	file := writeFile(t, "pools.yaml", "name: web\ncluster: prod\nspec:\n  nodeCount: 2\n  platform: "+string(block)+"\n")
	if _, err := run(srv, "", "diff", "-f", file); code(err) != 1 {
		t.Errorf("diff of a replace change under Refuse: %v", err)
	}
	file = writeFile(t, "surge.yaml", "name: web\ncluster: prod\nspec:\n  nodeCount: 2\n  platform: "+string(block)+"\n  updateStrategy: {replacement: Surge}\n")
	out, err := run(srv, "", "diff", "-f", file)
	if code(err) != 1 || field == "" || !strings.Contains(out, fmt.Sprintf("+%s: %q", field, otherMachine)) ||
		!strings.Contains(out, `+spec.updateStrategy.replacement: "Surge"`) {
		t.Errorf("diff of a replace change under Surge: %v\n%s", err, out)
	}
	out = mustRun(t, srv, "apply", "-f", file, "--dry-run")
	if !strings.Contains(out, "-/+ nodepool web in cluster prod will be replaced") || !strings.Contains(out, "(replace (surge 1, drain 30m0s):") ||
		!strings.Contains(out, "Plan: 0 to create, 0 to update, 1 to replace, 0 to delete, 0 unchanged.") {
		t.Errorf("apply --dry-run:\n%s", out)
	}
}
