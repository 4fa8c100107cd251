package gke_test

import (
	"testing"

	"github.com/kpool/kpool/provider/providertest"
)

// rules are a valid GKE cluster and pool, which the cases below patch.
var rules = providertest.Rules{
	Cluster: `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"gke-prod"}}}`,
	Pool:    `{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":3}`,
}

// TestPoolRules: GKE's own rules of a pool spec, as the API applies
// them: the field at fault, or none.
func TestPoolRules(t *testing.T) {
	rules.RunPools(t, []providertest.Case{
		{Name: "machineType required", Patch: `{"platform":{"gcp":{"machineType":null}}}`, Want: "spec.platform.gcp.machineType"},
		{Name: "machineType blank", Patch: `{"platform":{"gcp":{"machineType":"n1 standard"}}}`, Want: "spec.platform.gcp.machineType"},
		{Name: "scale to zero gcp", Patch: `{"nodeCount":0,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":5}}`, Want: ""},
		{Name: "GKE build version", Patch: `{"kubernetesVersion":"1.30.5-gke.1014001"}`, Want: ""},
		{Name: "label gke", Patch: `{"labels":{"cloud.google.com/gke-nodepool":"x"}}`, Want: "spec.labels.cloud.google.com/gke-nodepool"},
		{Name: "zones ok", Patch: `{"platform":{"gcp":{"zones":["us-central1-a","us-central1-b"]}},"nodeCount":4}`, Want: ""},
		{Name: "gke count uneven over zones", Patch: `{"platform":{"gcp":{"zones":["us-central1-a","us-central1-b"]}},"nodeCount":3}`, Want: "spec.nodeCount"},
		{Name: "gke zone the region lacks", Patch: `{"platform":{"gcp":{"zones":["us-central1-d"]}}}`, Want: "spec.platform.gcp.zones[0]"},
		{Name: "gke logical zone beyond the region", Patch: `{"zones":["5"]}`, Want: "spec.zones[0]"},
		{Name: "gke fourth zone", Patch: `{"zones":["4"]}`, Want: ""},
		{Name: "gke seventh zone", Patch: `{"zones":["7"]}`, Want: "spec.zones[0]"},
		{Name: "gke zone z", Patch: `{"platform":{"gcp":{"zones":["us-central1-z"]}}}`, Want: "spec.platform.gcp.zones[0]"},
		{Name: "gke zone of another region", Patch: `{"platform":{"gcp":{"zones":["europe-west1-b"]}}}`, Want: "spec.platform.gcp.zones[0]"},
		{Name: "gke disk floppy", Patch: `{"platform":{"gcp":{"diskType":"floppy"}}}`, Want: "spec.platform.gcp.diskType"},
		{Name: "gke disk types", Patch: `{"platform":{"gcp":{"diskType":"pd-balanced"}}}`, Want: ""},
		{Name: "gke accelerator banana", Patch: `{"platform":{"gcp":{"accelerators":[{"type":"banana","count":1}]}}}`, Want: "spec.platform.gcp.accelerators[0].type"},
		{Name: "gke accelerator l4", Patch: `{"platform":{"gcp":{"accelerators":[{"type":"nvidia-l4","count":1}]}}}`, Want: ""},
		{Name: "gke disk type", Patch: `{"platform":{"gcp":{"diskType":"pd-fast"}}}`, Want: "spec.platform.gcp.diskType"},
		{Name: "gke hyperdisk", Patch: `{"platform":{"gcp":{"diskType":"hyperdisk-balanced"}}}`, Want: ""},
		{Name: "gke accelerator name", Patch: `{"platform":{"gcp":{"accelerators":[{"type":"nvidia-tesla-z9","count":1}]}}}`, Want: "spec.platform.gcp.accelerators[0].type"},
		{Name: "gke version format", Patch: `{"kubernetesVersion":"1.30.5-gke"}`, Want: "spec.kubernetesVersion"},
		{Name: "accelerator ok", Patch: `{"platform":{"gcp":{"accelerators":[{"type":"nvidia-tesla-v100","count":1}]}}}`, Want: ""},
		{Name: "accelerator 16", Patch: `{"platform":{"gcp":{"accelerators":[{"type":"nvidia-tesla-v100","count":16}]}}}`, Want: ""},
		{Name: "accelerator 0", Patch: `{"platform":{"gcp":{"accelerators":[{"type":"nvidia-tesla-v100","count":0}]}}}`, Want: "spec.platform.gcp.accelerators[0].count"},
		{Name: "accelerator 17", Patch: `{"platform":{"gcp":{"accelerators":[{"type":"nvidia-tesla-v100","count":17}]}}}`, Want: "spec.platform.gcp.accelerators[0].count"},
		{Name: "accelerator type", Patch: `{"platform":{"gcp":{"accelerators":[{"count":1}]}}}`, Want: "spec.platform.gcp.accelerators[0].type"},
		{Name: "gcp disk ok", Patch: `{"platform":{"gcp":{"diskSize":100,"diskType":"pd-ssd"}}}`, Want: ""},
		{Name: "gcp disk small", Patch: `{"platform":{"gcp":{"diskSize":5}}}`, Want: "spec.platform.gcp.diskSize"},
		{Name: "gcp disk type", Patch: `{"platform":{"gcp":{"diskType":"pd ssd"}}}`, Want: "spec.platform.gcp.diskType"},
	})
}

// TestClusterRules: GKE's own rules of a cluster spec, as the API
// applies them: the field at fault, or none.
func TestClusterRules(t *testing.T) {
	rules.RunClusters(t, []providertest.Case{
		{Name: "gcp ok", Patch: `{}`, Want: ""},
		{Name: "gcp zonal location", Patch: `{"platform":{"gcp":{"location":"us-central1-a"}}}`, Want: ""},
		{Name: "gcp project", Patch: `{"platform":{"gcp":{"projectId":"Acme"}}}`, Want: "spec.platform.gcp.projectId"},
		{Name: "gcp location", Patch: `{"platform":{"gcp":{"location":"central"}}}`, Want: "spec.platform.gcp.location"},
		{Name: "gcp cluster name", Patch: `{"platform":{"gcp":{"clusterName":"GKE"}}}`, Want: "spec.platform.gcp.clusterName"},
	})
}
