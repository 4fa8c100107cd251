package civo_test

import (
	"testing"

	"github.com/kpool/kpool/provider/providertest"
)

// rules are a valid Civo cluster and pool, which the cases below patch.
var rules = providertest.Rules{
	Cluster: `{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`,
	Pool:    `{"platform":{"civo":{"size":"g4s.kube.medium"}},"nodeCount":3}`,
}

// TestPoolRules: Civo's own rules of a pool spec, as the API applies
// them: the field at fault, or none.
func TestPoolRules(t *testing.T) {
	rules.RunPools(t, []providertest.Case{
		{Name: "size required", Patch: `{"platform":{"civo":{"size":null}}}`, Want: "spec.platform.civo.size"},
		{Name: "scale to zero civo", Patch: `{"nodeCount":1,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":5}}`, Want: "spec.autoscaling.minNodes"},
		{Name: "label civo", Patch: `{"labels":{"kubernetes.civo.com/pool":"x"}}`, Want: "spec.labels.kubernetes.civo.com/pool"},
	})
}

// TestClusterRules: Civo's own rules of a cluster spec, as the API
// applies them: the field at fault, or none.
func TestClusterRules(t *testing.T) {
	rules.RunClusters(t, []providertest.Case{
		{Name: "civo ok", Patch: `{}`, Want: ""},
		{Name: "civo region", Patch: `{"platform":{"civo":{"region":"london"}}}`, Want: "spec.platform.civo.region"},
		{Name: "civo cluster", Patch: `{"platform":{"civo":{"clusterId":"abc"}}}`, Want: "spec.platform.civo.clusterId"},
	})
}
