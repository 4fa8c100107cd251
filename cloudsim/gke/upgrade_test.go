package gke_test

import (
	"strings"
	"testing"
	"time"

	container "google.golang.org/api/container/v1"
)

// TestUpgradeSettingsRules: NodePool.upgradeSettings as GKE checks it, on
// a create and on an update (README.md, "Node pool rules"): refusals are
// 400 INVALID_ARGUMENT with a BadRequest naming the field.
func TestUpgradeSettingsRules(t *testing.T) {
	e := newEnv(t)
	create := func(us string) string {
		return `{"nodePool":{"name":"up","initialNodeCount":1,"locations":["us-central1-a"],"upgradeSettings":` + us + `}}`
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field                    string // in the BadRequest, "" for none
	}{
		{"both 0", "POST", base + "/nodePools", create(`{"maxSurge":0,"maxUnavailable":0}`), 400, "nodePool.upgradeSettings"},
		{"both 0, strategy named", "POST", base + "/nodePools", create(`{"strategy":"SURGE"}`), 400, "nodePool.upgradeSettings"},
		{"negative surge", "POST", base + "/nodePools", create(`{"maxSurge":-1,"maxUnavailable":1}`), 400, "nodePool.upgradeSettings.maxSurge"},
		{"negative unavailable", "POST", base + "/nodePools", create(`{"maxSurge":1,"maxUnavailable":-2}`), 400, "nodePool.upgradeSettings.maxUnavailable"},
		{"surge a percentage", "POST", base + "/nodePools", create(`{"maxSurge":"33%"}`), 400, ""},
		{"unknown strategy", "POST", base + "/nodePools", create(`{"strategy":"ROLLING","maxSurge":1}`), 400, ""},
		{"two rollout policies", "POST", base + "/nodePools", create(`{"strategy":"BLUE_GREEN","blueGreenSettings":{"standardRolloutPolicy":{},"autoscaledRolloutPolicy":{}}}`), 400, "nodePool.upgradeSettings.blueGreenSettings"},
		{"two batch sizes", "POST", base + "/nodePools", create(`{"strategy":"BLUE_GREEN","blueGreenSettings":{"standardRolloutPolicy":{"batchPercentage":0.5,"batchNodeCount":2}}}`), 400, "nodePool.upgradeSettings.blueGreenSettings.standardRolloutPolicy"},
		{"batch over 100%", "POST", base + "/nodePools", create(`{"strategy":"BLUE_GREEN","blueGreenSettings":{"standardRolloutPolicy":{"batchPercentage":1.5}}}`), 400, "nodePool.upgradeSettings.blueGreenSettings.standardRolloutPolicy.batchPercentage"},
		{"soak not a duration", "POST", base + "/nodePools", create(`{"strategy":"BLUE_GREEN","blueGreenSettings":{"nodePoolSoakDuration":"10m"}}`), 400, "nodePool.upgradeSettings.blueGreenSettings.nodePoolSoakDuration"},
		{"wait for drain over 7 days", "POST", base + "/nodePools", create(`{"strategy":"BLUE_GREEN","blueGreenSettings":{"autoscaledRolloutPolicy":{"waitForDrainDuration":"700000s"}}}`), 400, "nodePool.upgradeSettings.blueGreenSettings.autoscaledRolloutPolicy.waitForDrainDuration"},
		{"blue-green by number", "POST", base + "/nodePools", `{"nodePool":{"name":"bg","initialNodeCount":1,"upgradeSettings":{"strategy":2,"blueGreenSettings":{"standardRolloutPolicy":{"batchNodeCount":1,"batchSoakDuration":"60s"},"nodePoolSoakDuration":"3600s"}}}}`, 200, ""},
		{"unavailable only", "POST", base + "/nodePools", create(`{"maxUnavailable":2}`), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.raw(tc.method, tc.path, "t", tc.body)
			if status != tc.status {
				t.Fatalf("%d, want %d\n%s", status, tc.status, body)
			}
			if tc.field != "" && !strings.Contains(string(body), `"field":"`+tc.field+`"`) {
				t.Fatalf("no BadRequest on %s: %s", tc.field, body)
			}
			e.clock.Advance(time.Hour) // a create's operation ends
		})
	}
	// An update takes the settings whole, and refuses what a create does.
	status, _, body := e.raw("PUT", base+"/nodePools/up", "t", `{"upgradeSettings":{"maxSurge":0,"maxUnavailable":0}}`)
	if status != 400 || !strings.Contains(string(body), `"field":"upgradeSettings"`) {
		t.Fatalf("update with both 0: %d %s", status, body)
	}
}

// TestUpgradeSettingsStored: a pool created without upgrade settings gets
// GKE's (SURGE, maxSurge 1, maxUnavailable 0); the settings given are
// returned, and an update replaces them when its operation ends.
func TestUpgradeSettingsStored(t *testing.T) {
	e := newEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	parent := strings.TrimPrefix(base, "/v1/")
	for _, np := range []*container.NodePool{
		{Name: "plain", InitialNodeCount: 1},
		{Name: "wide", InitialNodeCount: 1, UpgradeSettings: &container.UpgradeSettings{MaxSurge: 3, MaxUnavailable: 1}},
	} {
		if _, err := pools.Create(parent, &container.CreateNodePoolRequest{NodePool: np}).Do(); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
	}
	check := func(pool string, surge, unavailable int64) {
		t.Helper()
		np, err := pools.Get(parent + "/nodePools/" + pool).Do()
		if err != nil {
			t.Fatal(err)
		}
		u := np.UpgradeSettings
		if u == nil || u.Strategy != "SURGE" || u.MaxSurge != surge || u.MaxUnavailable != unavailable {
			t.Fatalf("%s: upgradeSettings %+v, want SURGE %d/%d", pool, u, surge, unavailable)
		}
	}
	check("plain", 1, 0)
	check("wide", 3, 1)
	_, err := pools.Update(parent+"/nodePools/wide", &container.UpdateNodePoolRequest{
		UpgradeSettings: &container.UpgradeSettings{MaxUnavailable: 2, ForceSendFields: []string{"MaxSurge"}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	check("wide", 3, 1) // until the operation ends
	e.clock.Advance(time.Hour)
	check("wide", 0, 2)
}
