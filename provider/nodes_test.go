package provider_test

import (
	"slices"
	"testing"

	"github.com/kpool/kpool"
	. "github.com/kpool/kpool/provider"
)

func TestNodeTaints(t *testing.T) {
	own := kpool.Taint{Key: "dedicated", Value: "ml", Effect: kpool.EffectNoSchedule}
	spot := kpool.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: kpool.EffectNoSchedule}
	gpu := kpool.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: kpool.EffectNoSchedule}
	for _, tc := range []struct {
		name     string
		platform kpool.PlatformType
		spec     PoolSpec
		want     []kpool.Taint
	}{
		{"aks spot", kpool.PlatformAzure, PoolSpec{Spot: true, Taints: []kpool.Taint{own}}, []kpool.Taint{own, spot}},
		{"aks spot taint given too", kpool.PlatformAzure, PoolSpec{Spot: true, Taints: []kpool.Taint{spot}}, []kpool.Taint{spot}},
		{"aks regular", kpool.PlatformAzure, PoolSpec{Taints: []kpool.Taint{own}}, []kpool.Taint{own}},
		{"gke gpu", kpool.PlatformGCP, PoolSpec{Accelerators: []kpool.Accelerator{{Type: "nvidia-l4", Count: 1}}}, []kpool.Taint{gpu}},
		{"gke spot has no taint", kpool.PlatformGCP, PoolSpec{Spot: true}, nil},
		{"eks spot has no taint", kpool.PlatformAWS, PoolSpec{Spot: true}, nil},
	} {
		if got := reg.Profile(tc.platform).NodeTaints(tc.spec); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := reg.Profile(kpool.PlatformCivo).NodeZone(cluster(t, kpool.PlatformCivo), "1"); err == nil {
		t.Error("a civo zone on nodes")
	}
}
