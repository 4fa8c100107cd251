package oke_test

import (
	"testing"

	"github.com/kpool/kpool/provider/providertest"
)

// rules are a valid OKE cluster and pool, which the cases below patch.
var rules = providertest.Rules{
	Cluster: `{"platform":{"type":"oci","oci":{"region":"us-ashburn-1","compartmentId":"ocid1.compartment.oc1..aaaa","clusterId":"ocid1.cluster.oc1.iad.aaaa","subnets":{"Uocm:US-ASHBURN-AD-1":"ocid1.subnet.oc1.iad.aaaa"}}}}`,
	Pool:    `{"platform":{"oci":{"shape":"VM.Standard.E4.Flex","ocpus":2,"imageId":"ocid1.image.oc1.iad.aaaa"}},"nodeCount":3}`,
}

// TestPoolRules: OKE's own rules of a pool spec, as the API applies
// them: the field at fault, or none.
func TestPoolRules(t *testing.T) {
	rules.RunPools(t, []providertest.Case{
		{Name: "shape required", Patch: `{"platform":{"oci":{"shape":null}}}`, Want: "spec.platform.oci.shape"},
		{Name: "ad ok", Patch: `{"platform":{"oci":{"availabilityDomains":["Uocm:US-ASHBURN-AD-1"]}}}`, Want: ""},
		{Name: "oci boot ok", Patch: `{"platform":{"oci":{"bootVolumeSizeInGBs":100,"ocpus":2,"memoryInGBs":16}}}`, Want: ""},
		{Name: "oci boot small", Patch: `{"platform":{"oci":{"bootVolumeSizeInGBs":10}}}`, Want: "spec.platform.oci.bootVolumeSizeInGBs"},
		{Name: "oci ocpus", Patch: `{"platform":{"oci":{"ocpus":1000}}}`, Want: "spec.platform.oci.ocpus"},
		{Name: "oci flex shape without ocpus", Patch: `{"platform":{"oci":{"ocpus":null}}}`, Want: "spec.platform.oci.ocpus"},
		{Name: "oci flex shape over 114 ocpus", Patch: `{"platform":{"oci":{"ocpus":120}}}`, Want: "spec.platform.oci.ocpus"},
		{Name: "oci flex shape under 1 ocpu", Patch: `{"platform":{"oci":{"ocpus":0.5}}}`, Want: "spec.platform.oci.ocpus"},
		{Name: "oci memory over 64 GB per ocpu", Patch: `{"platform":{"oci":{"ocpus":2,"memoryInGBs":200}}}`, Want: "spec.platform.oci.memoryInGBs"},
		{Name: "oci fixed shape with ocpus", Patch: `{"platform":{"oci":{"shape":"VM.Standard2.4"}}}`, Want: "spec.platform.oci.ocpus"},
		{Name: "oci fixed shape", Patch: `{"platform":{"oci":{"shape":"VM.Standard2.4","ocpus":null}}}`, Want: ""},
		{Name: "oci image required", Patch: `{"platform":{"oci":{"imageId":null}}}`, Want: "spec.platform.oci.imageId"},
		{Name: "oci image kind", Patch: `{"platform":{"oci":{"imageId":"ocid1.subnet.oc1..x"}}}`, Want: "spec.platform.oci.imageId"},
	})
}

// TestStrategyRules: what OKE's nodePoolCyclingDetails and
// nodeEvictionNodePoolSettings refuse is refused at submit (the pool has
// 3 nodes).
func TestStrategyRules(t *testing.T) {
	rules.RunPools(t, []providertest.Case{
		{Name: "strategy ok", Patch: `{"updateStrategy":{"replacement":"Surge","maxSurge":"2","maxUnavailable":"1","drainTimeout":"30m","onStuck":"Force"}}`, Want: ""},
		{Name: "grace at OKE's maximum", Patch: `{"updateStrategy":{"drainTimeout":"60m"}}`, Want: ""},
		{Name: "grace over OKE's maximum", Patch: `{"updateStrategy":{"drainTimeout":"61m"}}`, Want: "spec.updateStrategy.drainTimeout"},
		{Name: "grace hours", Patch: `{"updateStrategy":{"drainTimeout":"2h"}}`, Want: "spec.updateStrategy.drainTimeout"},
		{Name: "grace in seconds", Patch: `{"updateStrategy":{"drainTimeout":"90s"}}`, Want: ""},
		{Name: "grace under a second", Patch: `{"updateStrategy":{"drainTimeout":"90.5s"}}`, Want: "spec.updateStrategy.drainTimeout"},
		{Name: "surge the pool's size", Patch: `{"updateStrategy":{"maxSurge":"3"}}`, Want: ""},
		{Name: "surge over the pool's size", Patch: `{"updateStrategy":{"maxSurge":"4"}}`, Want: "spec.updateStrategy.maxSurge"},
		{Name: "surge percentage", Patch: `{"updateStrategy":{"maxSurge":"100%"}}`, Want: ""},
		{Name: "unavailable over the pool's size", Patch: `{"updateStrategy":{"maxUnavailable":"5"}}`, Want: "spec.updateStrategy.maxUnavailable"},
		{Name: "unavailable percentage", Patch: `{"updateStrategy":{"maxUnavailable":"50%"}}`, Want: ""},
		{Name: "surge over the autoscaling minimum", Patch: `{"nodeCount":null,"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":5},"updateStrategy":{"maxSurge":"2"}}`, Want: "spec.updateStrategy.maxSurge"},
		{Name: "surge within the autoscaling minimum", Patch: `{"nodeCount":null,"autoscaling":{"enabled":true,"minNodes":2,"maxNodes":5},"updateStrategy":{"maxSurge":"2"}}`, Want: ""},
		{Name: "surge on a pool that scales to 0", Patch: `{"nodeCount":null,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":5},"updateStrategy":{"maxSurge":"1"}}`, Want: "spec.updateStrategy.maxSurge"},
		{Name: "surge percentage on a pool that scales to 0", Patch: `{"nodeCount":null,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":5},"updateStrategy":{"maxSurge":"50%"}}`, Want: ""},
	})
}

// TestClusterRules: OKE's own rules of a cluster spec, as the API
// applies them: the field at fault, or none.
func TestClusterRules(t *testing.T) {
	rules.RunClusters(t, []providertest.Case{
		{Name: "oci ok", Patch: `{}`, Want: ""},
		{Name: "oci compartment", Patch: `{"platform":{"oci":{"compartmentId":"ocid1.cluster.oc1..x"}}}`, Want: "spec.platform.oci.compartmentId"},
		{Name: "oci tenancy as compartment", Patch: `{"platform":{"oci":{"compartmentId":"ocid1.tenancy.oc1..x"}}}`, Want: ""},
		{Name: "oci cluster", Patch: `{"platform":{"oci":{"clusterId":null}}}`, Want: "spec.platform.oci.clusterId"},
		{Name: "oci subnet", Patch: `{"platform":{"oci":{"subnets":{"AD-1":"subnet-1"}}}}`, Want: "spec.platform.oci.subnets.AD-1"},
		{Name: "oci region", Patch: `{"platform":{"oci":{"region":"ashburn"}}}`, Want: "spec.platform.oci.region"},
	})
}
