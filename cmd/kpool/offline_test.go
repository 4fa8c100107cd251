package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
	"github.com/kpool/kpool/service"
)

// TestDevRealCloudOffline: kpool dev never reaches a real cloud unasked. A
// cluster registered on one (no emulator endpoint, no credential named),
// of each platform with pools, is not reached at all: its Reachable
// condition and its pool say why ("no credential: kpool dev does not use
// cloud credentials unless --credentials names them"), the log names the
// cluster, and the pool's create --wait stops and says so instead of
// waiting out its timeout. No SDK's default chain is ever built, so no
// metadata probe or DNS lookup leaves the machine (the suite runs in a
// loopback-only network namespace, where one would fail with another
// message than this one).
func TestDevRealCloudOffline(t *testing.T) {
	ctx := context.Background()
	clock := sim.NewManualClock(time.Now())
	polls := clockWaits(clock)
	var log lockedBuffer
	printed := startDev(t, clock, func(f *serveFlags) { f.logOut = &log })
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("kpool dev printed no server and token:\n%s", printed)
	}
	c := api.NewClient(m[1], "")
	c.Token = m[2]
	demos, err := c.Clusters(ctx, service.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	platformOf := map[string]kpool.PlatformType{}
	for _, d := range demos.Clusters {
		platformOf[d.Name] = d.Spec.Platform.Type
	}
	creates := regexp.MustCompile(`go run ./cmd/kpool nodepool create web --cluster (\S+) (.*)`).FindAllStringSubmatch(printed, -1)
	if len(creates) != len(clouds.Emulators()) {
		t.Fatalf("kpool dev suggested %d creates for %d emulators:\n%s", len(creates), len(clouds.Emulators()), printed)
	}
	for _, cr := range creates {
		pt := platformOf[cr[1]]
		real := "real-" + string(pt)
		if _, stderr, err := execute("", append(append([]string{"cluster", "create", real}, clusterFlags[pt]...), "--server", m[1], "--token", m[2])...); err != nil {
			t.Fatalf("registering %s: %v\n%s", real, err, stderr)
		}
		args := append([]string{"nodepool", "create", "web", "--cluster", real}, strings.Fields(cr[2])...)
		_, stderr, err := executeOn(polls, "", append(args, "--server", m[1], "--token", m[2], "--timeout", "1m")...)
		if err == nil || !strings.Contains(err.Error(), "waits for its cluster") || !strings.Contains(err.Error(), devNoCredential) {
			t.Errorf("%s: create --wait ended with %v, want it to say the pool waits for its cluster: %s\n%s", real, err, devNoCredential, stderr)
		}
		cl, err := c.Clusters(ctx, service.ListOptions{Name: real})
		if err != nil || len(cl.Clusters) != 1 {
			t.Fatalf("%s: %+v, %v", real, cl, err)
		}
		cond := cl.Clusters[0].Status.Condition(kpool.ConditionReachable)
		if cond == nil || cond.Status != kpool.ConditionFalse || cond.Reason != kpool.ReasonNoCredential || cond.Message != devNoCredential {
			t.Errorf("%s: Reachable %+v, want False %s %q", real, cond, kpool.ReasonNoCredential, devNoCredential)
		}
		pools, err := c.NodePools(ctx, service.ListOptions{ClusterID: cl.Clusters[0].ID})
		if err != nil || len(pools.NodePools) != 1 || pools.NodePools[0].Status.Phase != kpool.PhasePending ||
			!strings.Contains(pools.NodePools[0].Status.Message, devNoCredential) {
			t.Errorf("%s: pools %+v, %v", real, pools, err)
		}
		if !regexp.MustCompile(`msg="cluster unreachable" .*cluster=` + real + ` .*reason=NoCredential`).MatchString(log.String()) {
			t.Errorf("%s: the log has no line naming it:\n%s", real, log.String())
		}
	}
	// The table says it too.
	table, _, err := execute("", "cluster", "list", "--server", m[1], "--token", m[2])
	if err != nil || !regexp.MustCompile(`real-azure\s+azure\s+-\s+Active\s+no \(NoCredential\)`).MatchString(table) {
		t.Errorf("cluster list:\n%s%v", table, err)
	}
}
