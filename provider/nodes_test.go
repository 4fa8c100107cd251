package provider

import (
	"slices"
	"testing"

	"github.com/kpool/kpool"
)

func TestShortAD(t *testing.T) {
	for _, tc := range []struct{ ad, region, want string }{
		{"Uocm:PHX-AD-1", "us-phoenix-1", "PHX-AD-1"},
		{"AD-1", "us-phoenix-1", "PHX-AD-1"},
		{"AD-3", "us-ashburn-1", "US-ASHBURN-AD-3"},
		{"AD-1", "uk-london-1", "UK-LONDON-1-AD-1"},
		{"ad-2", "ap-melbourne-1", "AP-MELBOURNE-1-AD-2"},
		{"EU-FRANKFURT-1-AD-1", "eu-frankfurt-1", "EU-FRANKFURT-1-AD-1"},
	} {
		if got := shortAD(tc.ad, tc.region); got != tc.want {
			t.Errorf("shortAD(%q, %q) = %q, want %q", tc.ad, tc.region, got, tc.want)
		}
	}
	if _, err := NodeZone(cluster(t, kpool.PlatformCivo), "1"); err == nil {
		t.Error("a civo zone on nodes")
	}
}

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
		if got := NodeTaints(tc.platform, tc.spec); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
