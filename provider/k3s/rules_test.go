package k3s_test

import (
	"testing"

	"github.com/kpool/kpool/provider/providertest"
)

// rules are a valid k3s cluster and pool, which the cases below patch.
var rules = providertest.Rules{
	Cluster: `{"platform":{"type":"k3s"}}`,
	Pool:    `{}`,
}

// TestClusterRules: k3s's own rules of a cluster spec, as the API
// applies them: the field at fault, or none.
func TestClusterRules(t *testing.T) {
	rules.RunClusters(t, []providertest.Case{
		{Name: "k3s ok", Patch: `{}`, Want: ""},
		{Name: "k3s empty block", Patch: `{"platform":{"k3s":{}}}`, Want: ""},
	})
}
