package driver

import (
	"strings"
	"testing"

	"github.com/kpool/kpool/provider"
)

// TestPerZone: kpool's pool-wide count becomes GKE's per-zone count, and
// a count that does not divide evenly is a validation error on
// spec.nodeCount.
func TestPerZone(t *testing.T) {
	for _, tc := range []struct {
		count int
		zones []string
		want  int64
		ok    bool
	}{
		{6, []string{"a", "b", "c"}, 2, true},
		{0, []string{"a", "b", "c"}, 0, true},
		{4, []string{"a", "b"}, 2, true},
		{3, []string{"a"}, 3, true},
		{5, nil, 5, true},
		{4, []string{"a", "b", "c"}, 0, false},
		{1, []string{"a", "b"}, 0, false},
	} {
		got, err := perZone(tc.count, tc.zones)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("perZone(%d, %v) = %d, %v; want %d", tc.count, tc.zones, got, err, tc.want)
		}
		if !tc.ok {
			e, isErr := err.(*provider.Error)
			if !isErr || e.Kind != provider.KindValidation || e.Field != "spec.nodeCount" {
				t.Errorf("perZone(%d, %v): %v, want a validation error on spec.nodeCount", tc.count, tc.zones, err)
			}
		}
	}
}

// TestState maps every NodePool.status of container-api.json.
func TestState(t *testing.T) {
	for s, want := range map[string]provider.State{
		"PROVISIONING": provider.StateCreating, "RUNNING": provider.StateReady, "RECONCILING": provider.StateUpdating,
		"STOPPING": provider.StateDeleting, "ERROR": provider.StateFailed, "RUNNING_WITH_ERROR": provider.StateFailed,
		"STATUS_UNSPECIFIED": provider.StateUnknown, "": provider.StateUnknown,
	} {
		if got := state(s); got != want {
			t.Errorf("state(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestSpecField maps the fields GKE's BadRequest details name.
func TestSpecField(t *testing.T) {
	for f, want := range map[string]string{
		"nodePool.config.diskType": "spec.platform.gcp.diskType", "nodePool.locations": "spec.zones",
		"nodePool.config.accelerators[0].acceleratorType": "spec.platform.gcp.accelerators", "nodeVersion": "spec.kubernetesVersion",
		"nodePool.autoscaling.maxNodeCount": "spec.autoscaling", "nodeCount": "spec.nodeCount", "nodePool.config.resourceLabels": "spec.tags",
		"somethingElse": "",
	} {
		if got := specField(f); got != want {
			t.Errorf("specField(%q) = %q, want %q", f, got, want)
		}
	}
}

// TestPoolVersions: the node versions a pool may run are the location's
// not newer than the control plane and at most three minors older, as
// kpool specs name them.
func TestPoolVersions(t *testing.T) {
	for _, tc := range []struct {
		master string
		valid  []string
		want   string
	}{
		{"1.30.5-gke.1014001", []string{"1.31.2-gke.1", "1.30.6-gke.2", "1.30.5-gke.1014001", "1.30.5-gke.9", "1.29.9-gke.1", "1.26.1-gke.1"}, "1.30.5,1.29.9"},
		{"1.31.2-gke.1", []string{"1.28.14-gke.1", "1.27.16-gke.1", "bogus"}, "1.28.14"},
		{"", []string{"1.30.5-gke.1"}, ""},
	} {
		if got := strings.Join(poolVersions(tc.master, tc.valid), ","); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.master, got, tc.want)
		}
	}
}
