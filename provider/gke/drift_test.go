package gke_test

import (
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
)

// TestGPUTaintIsNotDrift: GKE puts its own nvidia.com/gpu taint on the
// nodes of a pool with accelerators. The guide's GPU pool must show no
// drift whether GKE reports that taint or not, or the controllers would
// send an update on every pass (121 in 3 minutes before this): drift never
// fights what the provider adds. A taint the user asked for still counts.
func TestGPUTaintIsNotDrift(t *testing.T) {
	user := kpool.Taint{Key: "workload-type", Value: "gpu", Effect: kpool.EffectNoSchedule}
	want := provider.PoolSpec{ProviderName: "gpu", Count: 2, MachineType: "n1-standard-4", Taints: []kpool.Taint{user},
		Accelerators: []kpool.Accelerator{{Type: "nvidia-tesla-v100", Count: 1}}}
	tests := []struct {
		name  string
		taint []kpool.Taint // what GKE reports
		drift bool
	}{
		{"GKE reports its GPU taint", []kpool.Taint{user, gke.GPUTaint}, false},
		{"GKE does not report it", []kpool.Taint{user}, false},
		{"the user's taint is gone", []kpool.Taint{gke.GPUTaint}, true},
		{"another taint appeared", []kpool.Taint{user, gke.GPUTaint, {Key: "x", Value: "y", Effect: kpool.EffectNoExecute}}, true},
	}
	for _, tc := range tests {
		got := &provider.Pool{PoolSpec: want}
		got.Taints = tc.taint
		diffs := provider.Compare(gke.Profile{}, want, got)
		if (len(diffs) > 0) != tc.drift {
			t.Errorf("%s: differences %v, want drift %v", tc.name, diffs, tc.drift)
		}
	}
}
