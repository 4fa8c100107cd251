package gke_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
)

// TestPreflight: a pool checked against what a regional GKE cluster
// offers, field by field; on an update only what changes; facts missing
// or stale refuse nothing and say so.
func TestPreflight(t *testing.T) {
	now := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	c := &kpool.Cluster{Name: "prod"}
	if err := json.Unmarshal([]byte(rules.Cluster), &c.Spec); err != nil {
		t.Fatal(err)
	}
	facts := &kpool.ClusterFacts{LearnedAt: now.Add(-5 * time.Minute), Version: "1.31.2-gke.100",
		PoolVersions: []string{"1.30.9-gke.200", "1.31.2-gke.100"}, Zones: []string{"1", "2", "3"}, DefaultZones: []string{"1", "2", "3"},
		MachineTypes: []kpool.MachineType{
			{Name: "n1-standard-4", CPUs: 4, MemoryMiB: 15360},
			{Name: "n2-standard-4", CPUs: 4, MemoryMiB: 16384},
			{Name: "a2-highgpu-1g", CPUs: 12, MemoryMiB: 87040, GPUs: 1, Zones: []string{"1", "3"}},
			{Name: "e2-micro", CPUs: 2, MemoryMiB: 1024, NoSpot: true},
		}}
	spec := func(s string) *kpool.NodePoolSpec {
		var out kpool.NodePoolSpec
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			t.Fatal(err)
		}
		return &out
	}
	for _, tc := range []struct {
		name, spec, prev string
		facts            *kpool.ClusterFacts
		field, says      string // the refusal, or none
		warns            string // a warning, or none
		unreachable      bool   // the cluster's Reachable is False
	}{
		{name: "offered", spec: `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3}`},
		{name: "unknown machine type, the nearest named", spec: `{"platform":{"gcp":{"machineType":"n1-standrd-4"}},"nodeCount":3}`,
			field: "spec.platform.gcp.machineType", says: "not offered in us-central1 (as GKE told kpool 5 minutes ago); the nearest offered: n1-standard-4"},
		{name: "not offered in a chosen zone", spec: `{"platform":{"gcp":{"machineType":"a2-highgpu-1g"}},"zones":["1","2"],"nodeCount":2}`,
			field: "spec.platform.gcp.machineType", says: "a2-highgpu-1g is not offered in us-central1 zone 2 (it is in zones 1, 3"},
		{name: "not offered in a default zone", spec: `{"platform":{"gcp":{"machineType":"a2-highgpu-1g"}},"nodeCount":3}`,
			field: "spec.platform.gcp.machineType", says: "zone 2"},
		{name: "count over the default zones", spec: `{"platform":{"gcp":{"machineType":"n2-standard-4"}},"nodeCount":1}`,
			field: "spec.nodeCount", says: "1 nodes do not divide evenly over the cluster's default zones 1, 2, 3"},
		{name: "autoscaled: no count rule", spec: `{"platform":{"gcp":{"machineType":"n2-standard-4"}},"nodeCount":1,"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":4}}`},
		{name: "no spot", spec: `{"platform":{"gcp":{"machineType":"e2-micro","preemptible":true}},"nodeCount":3}`,
			field: "spec.platform.gcp.preemptible", says: "e2-micro is not offered as spot capacity"},
		{name: "a zone the cluster lacks", spec: `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"zones":["4"],"nodeCount":1}`,
			field: "spec.zones[0]", says: "cluster prod has no zone 4 (its zones are 1, 2, 3"},
		{name: "a version pools may not run", spec: `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3,"kubernetesVersion":"1.29"}`,
			field: "spec.kubernetesVersion", says: "may run 1.30.9-gke.200, 1.31.2-gke.100, not 1.29"},
		{name: "a version pools may run", spec: `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3,"kubernetesVersion":"1.30"}`},
		{name: "update: a machine type since withdrawn is not checked again", spec: `{"platform":{"gcp":{"machineType":"n9-gone"}},"nodeCount":3,"labels":{"a":"b"}}`,
			prev: `{"platform":{"gcp":{"machineType":"n9-gone"}},"nodeCount":3}`},
		{name: "update: a new machine type is", spec: `{"platform":{"gcp":{"machineType":"n9-new"}},"nodeCount":3}`,
			prev: `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3}`, field: "spec.platform.gcp.machineType", says: "n9-new is not offered"},
		{name: "no facts", spec: `{"platform":{"gcp":{"machineType":"banana"}},"nodeCount":1}`, facts: &kpool.ClusterFacts{},
			warns: "preflight skipped: kpool has not learnt yet what cluster prod offers"},
		{name: "stale facts", spec: `{"platform":{"gcp":{"machineType":"banana"}},"nodeCount":1}`,
			facts: &kpool.ClusterFacts{LearnedAt: now.Add(-42 * time.Minute), MachineTypes: facts.MachineTypes},
			warns: "preflight skipped: the facts of cluster prod are 42 minutes old"},
		{name: "unreachable cluster", spec: `{"platform":{"gcp":{"machineType":"banana"}},"nodeCount":1}`, unreachable: true,
			warns: "preflight skipped: cluster prod is not reachable (the endpoint does not answer); its facts are 5 minutes old"},
		{name: "partial facts", spec: `{"platform":{"gcp":{"machineType":"banana"}},"nodeCount":3}`,
			facts: &kpool.ClusterFacts{LearnedAt: now, Partial: []string{"the machine types could not be read: 403"}},
			warns: "preflight partial: the machine types could not be read: 403"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := facts
			if tc.facts != nil {
				f = tc.facts
				if f.LearnedAt.IsZero() {
					f = nil
				}
			}
			var prev *kpool.NodePoolSpec
			if tc.prev != "" {
				prev = spec(tc.prev)
			}
			cl := *c
			if tc.unreachable {
				cl.Status.Conditions = []kpool.Condition{{Type: kpool.ConditionReachable, Status: kpool.ConditionFalse, Reason: kpool.ReasonEndpointNotAllowed, Message: "the endpoint does not answer"}}
			}
			warns, err := provider.Preflight(gke.Profile{}, &cl, spec(tc.spec), prev, f, now)
			if tc.warns != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.warns)) {
				t.Errorf("warnings %q, want %q", warns, tc.warns)
			}
			var e *kpool.Error
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field == "":
			case !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != tc.field || !strings.Contains(e.Fields[0].Reason, tc.says):
				t.Fatalf("got %v, want %s: …%s…", err, tc.field, tc.says)
			}
		})
	}
}
