package driver

import (
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"
)

// poolVersions keeps the listed versions a pool may run: none newer than
// the control plane's, each once; unreadable versions are AKS's to judge.
func TestPoolVersions(t *testing.T) {
	item := func(v string) *armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem {
		return &armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem{KubernetesVersion: ptr.To(v)}
	}
	for _, tc := range []struct {
		cp    string
		items []*armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem
		want  []string
	}{
		{"1.30.4", []*armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem{item("1.28.0"), item("1.29.0"), item("1.30.4")},
			[]string{"1.28.0", "1.29.0", "1.30.4"}},
		{"1.30.4", []*armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem{item("1.30.4"), item("1.30.9"), item("1.31.2"), nil, item(""), item("1.30.4")},
			[]string{"1.30.4"}},
		{"", []*armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem{item("1.31.2")}, []string{"1.31.2"}},
		{"1.30.4", []*armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem{item("latest")}, []string{"latest"}},
	} {
		if got := poolVersions(tc.cp, tc.items); !slices.Equal(got, tc.want) {
			t.Errorf("control plane %q: got %v, want %v", tc.cp, got, tc.want)
		}
	}
}
