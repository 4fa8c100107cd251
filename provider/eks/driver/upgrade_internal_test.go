package driver

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool/provider"
)

// TestUpdateConfigMapping: the strategy's maxUnavailable as the
// updateConfig a create sends and an update wants, and read back.
func TestUpdateConfigMapping(t *testing.T) {
	nodes := func(n int32) *types.NodegroupUpdateConfig {
		return &types.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(n)}
	}
	pct := func(n int32) *types.NodegroupUpdateConfig {
		return &types.NodegroupUpdateConfig{MaxUnavailablePercentage: aws.Int32(n)}
	}
	for _, tc := range []struct {
		unavailable    string
		create, update *types.NodegroupUpdateConfig
	}{
		{"", nil, nil},
		{"0", nil, nodes(1)},
		{"0%", nil, nodes(1)},
		{"1", nodes(1), nodes(1)},
		{"3", nodes(3), nodes(3)},
		{"25%", pct(25), pct(25)},
	} {
		u := &provider.Upgrade{MaxUnavailable: tc.unavailable}
		create, update := updateConfigOf(u), wantedUpdateConfig(u)
		if !sameConfig(create, tc.create) || !sameConfig(update, tc.update) {
			t.Errorf("%q: create %+v, update %+v; want %+v, %+v", tc.unavailable, create, update, tc.create, tc.update)
		}
	}
	if updateConfigOf(nil) != nil || wantedUpdateConfig(nil) != nil {
		t.Error("no strategy asks for an updateConfig")
	}
	for uc, want := range map[*types.NodegroupUpdateConfig]string{nil: "", nodes(1): "", nodes(4): "4", pct(10): "10%"} {
		got := ""
		if u := observedUpgrade(uc); u != nil {
			got = u.MaxUnavailable
		}
		if got != want {
			t.Errorf("observed %+v as %q, want %q", uc, got, want)
		}
	}
}

func sameConfig(a, b *types.NodegroupUpdateConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameUpdateConfig(a, b)
}
