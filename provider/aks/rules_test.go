package aks_test

import (
	"testing"

	"github.com/kpool/kpool/provider/providertest"
)

// rules are a valid AKS cluster and pool, which the cases below patch.
var rules = providertest.Rules{
	Cluster: `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg-prod","clusterName":"aks-prod","location":"westeurope"}}}`,
	Pool:    `{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":3}`,
}

// TestPoolRules: AKS's own rules of a pool spec, as the API applies
// them: the field at fault, or none.
func TestPoolRules(t *testing.T) {
	rules.RunPools(t, []providertest.Case{
		{Name: "vmSize required", Patch: `{"platform":{"azure":{"vmSize":null}}}`, Want: "spec.platform.azure.vmSize"},
		{Name: "scale to zero azure user", Patch: `{"nodeCount":0,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":5}}`, Want: ""},
		{Name: "scale to zero azure system", Patch: `{"mode":"system","nodeCount":1,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":5}}`, Want: "spec.autoscaling.minNodes"},
		{Name: "a GKE build on AKS", Patch: `{"kubernetesVersion":"1.30.5-gke.1014001"}`, Want: "spec.kubernetesVersion"},
		{Name: "label azure", Patch: `{"labels":{"kubernetes.azure.com/mode":"x"}}`, Want: "spec.labels.kubernetes.azure.com/mode"},
		{Name: "aks zones 1-3", Patch: `{"zones":["1","2","3"]}`, Want: ""},
		{Name: "aks zone 4", Patch: `{"zones":["4"]}`, Want: "spec.zones[0]"},
		{Name: "aks zone location-4", Patch: `{"zones":["1","westeurope-4"]}`, Want: "spec.zones[1]"},
		{Name: "aks block zone 4", Patch: `{"platform":{"azure":{"availabilityZones":["4"]}}}`, Want: "spec.platform.azure.availabilityZones[0]"},
		{Name: "aks block zones ok", Patch: `{"platform":{"azure":{"availabilityZones":["1","3"]}}}`, Want: ""},
		{Name: "aks spot user", Patch: `{"platform":{"azure":{"spotInstances":true}}}`, Want: ""},
		{Name: "aks spot system", Patch: `{"mode":"system","platform":{"azure":{"spotInstances":true}}}`, Want: "spec.platform.azure.spotInstances"},
		{Name: "aks os disk floppy", Patch: `{"platform":{"azure":{"osDiskType":"Floppy"}}}`, Want: "spec.platform.azure.osDiskType"},
		{Name: "aks os disk ephemeral", Patch: `{"platform":{"azure":{"osDiskType":"Ephemeral"}}}`, Want: ""},
		{Name: "azure disk ok", Patch: `{"platform":{"azure":{"osDiskSizeGB":100,"osDiskType":"Premium_LRS"}}}`, Want: ""},
		{Name: "azure disk small", Patch: `{"platform":{"azure":{"osDiskSizeGB":10}}}`, Want: "spec.platform.azure.osDiskSizeGB"},
		// upgradeSettings: AKS counts drainTimeoutInMinutes and
		// nodeSoakDurationInMinutes in whole minutes.
		{Name: "aks strategy ok", Patch: `{"updateStrategy":{"maxSurge":"33%","drainTimeout":"45m","soak":"5m","maxUnavailable":"1","onStuck":"Force"}}`, Want: ""},
		{Name: "aks strategy hours", Patch: `{"updateStrategy":{"drainTimeout":"24h","soak":"0s"}}`, Want: ""},
		{Name: "aks drain seconds", Patch: `{"updateStrategy":{"drainTimeout":"90s"}}`, Want: "spec.updateStrategy.drainTimeout"},
		{Name: "aks soak seconds", Patch: `{"updateStrategy":{"soak":"30s"}}`, Want: "spec.updateStrategy.soak"},
		{Name: "aks surge 100%", Patch: `{"updateStrategy":{"maxSurge":"100%"}}`, Want: ""},
		{Name: "aks surge 0", Patch: `{"updateStrategy":{"maxSurge":"0"}}`, Want: "spec.updateStrategy.maxSurge"},
	})
}

// TestClusterRules: AKS's own rules of a cluster spec, as the API
// applies them: the field at fault, or none.
func TestClusterRules(t *testing.T) {
	rules.RunClusters(t, []providertest.Case{
		{Name: "azure ok", Patch: `{}`, Want: ""},
		{Name: "azure subscription", Patch: `{"platform":{"azure":{"subscriptionId":"sub-1"}}}`, Want: "spec.platform.azure.subscriptionId"},
		{Name: "azure subscription required", Patch: `{"platform":{"azure":{"subscriptionId":null}}}`, Want: "spec.platform.azure.subscriptionId"},
		{Name: "azure resource group", Patch: `{"platform":{"azure":{"resourceGroup":"rg prod"}}}`, Want: "spec.platform.azure.resourceGroup"},
		{Name: "azure resource group dot", Patch: `{"platform":{"azure":{"resourceGroup":"rg."}}}`, Want: "spec.platform.azure.resourceGroup"},
		{Name: "azure cluster name", Patch: `{"platform":{"azure":{"clusterName":"-aks"}}}`, Want: "spec.platform.azure.clusterName"},
		{Name: "azure location", Patch: `{"platform":{"azure":{"location":"West Europe"}}}`, Want: "spec.platform.azure.location"},
	})
}
