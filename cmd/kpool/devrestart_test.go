package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
)

// devShell is what kpool dev's banner gives a shell: the server, the
// token, and the id its revoke command names.
type devShell struct {
	banner, server, token, tokenID string
}

func parseBanner(t *testing.T, printed string) devShell {
	t.Helper()
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	r := regexp.MustCompile(`go run ./cmd/kpool token revoke (\S+) --database `).FindStringSubmatch(printed)
	if m == nil || r == nil {
		t.Fatalf("kpool dev printed no server, token or revoke command:\n%s", printed)
	}
	return devShell{banner: printed, server: m[1], token: m[2], tokenID: r[1]}
}

// statusWith is the HTTP status of a cluster list sent with token alone.
func statusWith(t *testing.T, server, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, server+"/api/v1/clusters", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDevRestart is issue 36's "done when" on kpool dev: restarted on the
// same data folder, it keeps the token of the last run (which still
// authenticates), moves every cluster on the last run's emulators (a
// user's too) to the new ones, where pools work, and suggests a scale of
// the pool that exists rather than its create; once the token is revoked,
// the next run makes a new one and says why.
func TestDevRestart(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "dev.db")
	clock := sim.NewManualClock(time.Now())
	polls := clockWaits(clock)
	var runs []*cloudsim.Running
	onDB := func(f *serveFlags) {
		f.database = db
		f.emulated = func(r *cloudsim.Running) { runs = append(runs, r) }
	}
	printed, stop := runDev(t, clock, onDB)
	one := parseBanner(t, printed)
	if !strings.Contains(printed, "a new token for "+devUser+", kept for the next runs") {
		t.Errorf("the first run's banner does not say its token is new and kept:\n%s", printed)
	}
	checkTokenFile(t, devTokenFile(db), one.token)
	platform := restartFixtures(t, polls, one)
	stop()

	printed, stop = runDev(t, clock, onDB)
	two := parseBanner(t, printed)
	if two.token != one.token || !strings.Contains(printed, "the token is "+devUser+"'s, the same as the last run's") {
		t.Errorf("the second run's token is not the first's (or its banner does not say so):\n%s", printed)
	}
	if code := statusWith(t, two.server, one.token); code != http.StatusOK {
		t.Errorf("the first run's token on the second run: HTTP %d", code)
	}
	checkRestartBanner(t, printed)
	checkMoved(t, polls, two, emulatorOrigins(runs[1])[platform])
	stop()

	if _, stderr, err := execute("", "token", "revoke", two.tokenID, "--database", db); err != nil {
		t.Fatalf("kpool token revoke: %v\n%s", err, stderr)
	}
	printed, _ = runDev(t, clock, onDB)
	three := parseBanner(t, printed)
	if three.token == one.token || !strings.Contains(printed, "a new dev token for "+devUser+": the old one was revoked") {
		t.Errorf("after a revoke, the third run's banner:\n%s", printed)
	}
	if old, now := statusWith(t, three.server, one.token), statusWith(t, three.server, three.token); old != http.StatusUnauthorized || now != http.StatusOK {
		t.Errorf("after a revoke: the old token HTTP %d (want 401), the new one %d (want 200)", old, now)
	}
	checkTokenFile(t, devTokenFile(db), three.token)
}

// checkTokenFile checks that file holds token, readable by its owner only.
func checkTokenFile(t *testing.T, file, token string) {
	t.Helper()
	b, err := os.ReadFile(file)
	info, serr := os.Stat(file)
	if err != nil || serr != nil || strings.TrimSpace(string(b)) != token || info.Mode().Perm() != 0o600 {
		t.Errorf("the token file %s: %v %v, mode %v, holds the banner's token: %v", file, err, serr, info.Mode(), strings.TrimSpace(string(b)) == token)
	}
}

// restartFixtures makes, on the first run, what a restart must keep: the
// pool web on demo-aks (the create the banner suggests), and alice's
// my-civo, the emulator's Civo cluster registered at the emulator's
// endpoint in place of demo-civo. It returns my-civo's platform.
func restartFixtures(t *testing.T, polls clock, one devShell) kpool.PlatformType {
	t.Helper()
	ctx := context.Background()
	create := regexp.MustCompile(`go run ./cmd/kpool (nodepool create web --cluster demo-aks .*)`).FindStringSubmatch(one.banner)
	if create == nil {
		t.Fatalf("no create on demo-aks in:\n%s", one.banner)
	}
	args := append(strings.Fields(create[1]), "--server", one.server, "--token", one.token, "--timeout", "2m")
	if _, stderr, err := executeOn(polls, "", args...); err != nil {
		t.Fatalf("%s: %v\n%s", create[1], err, stderr)
	}
	dev := api.NewClient(one.server, "")
	dev.Token = one.token
	id, err := dev.ClusterID(ctx, "demo-civo")
	if err != nil {
		t.Fatal(err)
	}
	demo, err := dev.Cluster(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, gone, err := dev.DeleteCluster(ctx, id, false); err != nil || !gone {
		t.Fatalf("deleting demo-civo: gone %v, %v", gone, err)
	}
	spec, _ := json.Marshal(demo.Spec)
	name := "my-civo"
	if _, err := api.NewClient(one.server, "alice@example.com").CreateCluster(ctx, api.ClusterBody{Name: &name, Spec: spec}); err != nil {
		t.Fatalf("alice registering my-civo at %s: %v", demo.Spec.Endpoint, err)
	}
	return demo.Spec.Platform.Type
}

// checkRestartBanner checks what the second run suggests: a scale of the
// pool web on demo-aks, not its create; creates on the demo clusters
// without pools; demo-civo left out (alice's my-civo is that cluster) and
// my-civo moved.
func checkRestartBanner(t *testing.T, printed string) {
	t.Helper()
	for _, tc := range []struct {
		says string
		want bool
	}{
		{"nodepool create web --cluster demo-aks", false},
		{"go run ./cmd/kpool nodepool scale web --cluster demo-aks --count 6 --wait", true},
		{"nodepool create web --cluster demo-eks", true},
		{"demo-civo  not registered: This cloud cluster is registered already", true},
		{"nodepool create web --cluster demo-civo", false},
		{"my-civo (alice@example.com): https://127.0.0.1:", true},
	} {
		if strings.Contains(printed, tc.says) != tc.want {
			t.Errorf("the second run's banner says %q: %v, want %v:\n%s", tc.says, !tc.want, tc.want, printed)
		}
	}
}

// checkMoved checks, on the second run, that the banner's scale works on
// demo-aks (moved with its pool), and that alice's my-civo is at this
// run's emulator, at, where her new pool goes Ready.
func checkMoved(t *testing.T, polls clock, two devShell, at string) {
	t.Helper()
	ctx := context.Background()
	scale := regexp.MustCompile(`go run ./cmd/kpool (nodepool scale web --cluster demo-aks .*)`).FindStringSubmatch(two.banner)
	var p kpool.NodePool
	out, stderr, err := executeOn(polls, "", append(strings.Fields(scale[1]), "--server", two.server, "--token", two.token, "--timeout", "2m", "-o", "json")...)
	if err != nil || json.Unmarshal([]byte(out), &p) != nil || p.Status.Phase != kpool.PhaseReady || p.Status.ObservedGeneration != 2 {
		t.Errorf("%s on the second run: %v, %+v\n%s", scale[1], err, p.Status, stderr)
	}
	alice := api.NewClient(two.server, "alice@example.com")
	id, err := alice.ClusterID(ctx, "my-civo")
	if err != nil {
		t.Fatal(err)
	}
	c, err := alice.Cluster(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := kpool.Origin(c.Spec.Endpoint); err != nil || o != at {
		t.Fatalf("my-civo's endpoint %s, want this run's emulator %s", c.Spec.Endpoint, at)
	}
	cli := profiles.Profile(c.Spec.Platform.Type).CLI()
	args := []string{"nodepool", "create", "web", "--cluster", "my-civo", "--machine-type", cli.MachineExample, "--count", "1", "--wait",
		"--server", two.server, "--user", "alice@example.com", "--timeout", "2m", "-o", "json"}
	out, stderr, err = executeOn(polls, "", append(args, strings.Fields(cli.ExampleFlags)...)...)
	if err != nil || json.Unmarshal([]byte(out), &p) != nil || p.Status.Phase != kpool.PhaseReady {
		t.Errorf("a pool on my-civo, moved: %v, %+v\n%s", err, p.Status, stderr)
	}
}
