package gke_test

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/gke"
	"github.com/kpool/kpool/provider/providertest"
)

// TestUpdateStrategyRules: spec.updateStrategy as GKE's upgradeSettings
// take it, through the API's validation: node counts only, never a
// percentage; the settings kpool carries out itself (soak, drain timeout,
// onStuck) pass.
func TestUpdateStrategyRules(t *testing.T) {
	rules.RunPools(t, []providertest.Case{
		{Name: "surge counts", Patch: `{"updateStrategy":{"maxSurge":"3","maxUnavailable":"1"}}`, Want: ""},
		{Name: "unavailable only", Patch: `{"updateStrategy":{"maxUnavailable":"2"}}`, Want: ""},
		{Name: "surge percentage", Patch: `{"updateStrategy":{"maxSurge":"33%"}}`, Want: "spec.updateStrategy.maxSurge"},
		{Name: "unavailable percentage", Patch: `{"updateStrategy":{"maxUnavailable":"25%"}}`, Want: "spec.updateStrategy.maxUnavailable"},
		{Name: "soak and drain kpool's", Patch: `{"updateStrategy":{"replacement":"Surge","soak":"10m","drainTimeout":"1h","onStuck":"Force"}}`, Want: ""},
		{Name: "surge above parallelism cap", Patch: `{"updateStrategy":{"maxSurge":"25"}}`, Want: ""},
	})
}

// TestUpgradeBothZero: maxSurge and maxUnavailable of 0 together are
// refused by the profile itself (kpool's own rules refuse maxSurge 0 first
// through the API; the profile holds GKE's rule on its own).
func TestUpgradeBothZero(t *testing.T) {
	tests := []struct {
		name string
		u    *kpool.UpdateStrategy
		want string // the field at fault, "" none
	}{
		{"both 0", &kpool.UpdateStrategy{MaxSurge: "0", MaxUnavailable: "0"}, "spec.updateStrategy.maxSurge"},
		{"surge 0 unavailable unset", &kpool.UpdateStrategy{MaxSurge: "0"}, "spec.updateStrategy.maxSurge"},
		{"surge 0 unavailable 1", &kpool.UpdateStrategy{MaxSurge: "0", MaxUnavailable: "1"}, ""},
		{"unavailable 0 surge unset", &kpool.UpdateStrategy{MaxUnavailable: "0"}, ""},
		{"none", nil, ""},
		{"not a number left to kpool's rules", &kpool.UpdateStrategy{MaxSurge: "x", MaxUnavailable: "0"}, ""},
	}
	for _, tc := range tests {
		s := &kpool.NodePoolSpec{UpdateStrategy: tc.u,
			Platform: kpool.NodePoolPlatform{GCP: &kpool.GCPNodePool{MachineType: "n1-standard-4"}}}
		var fe kpool.FieldErrors
		gke.Profile{}.ValidateBlock(&fe, s, nil)
		got := ""
		for _, e := range fe {
			if strings.HasPrefix(e.Field, "spec.updateStrategy") {
				got = e.Field
			}
		}
		if got != tc.want {
			t.Errorf("%s: error on %q, want %q (%v)", tc.name, got, tc.want, fe)
		}
	}
}
