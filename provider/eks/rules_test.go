package eks_test

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
	"github.com/kpool/kpool/provider/providertest"
)

// rules are a valid EKS cluster and pool, which the cases below patch.
var rules = providertest.Rules{
	Cluster: `{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"eks-prod","nodeRoleArn":"arn:aws:iam::123456789012:role/eks-nodes","subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`,
	Pool:    `{"platform":{"aws":{"instanceType":"m5.xlarge"}},"nodeCount":3}`,
}

// TestPoolRules: EKS's own rules of a pool spec, as the API applies
// them: the field at fault, or none.
func TestPoolRules(t *testing.T) {
	rules.RunPools(t, []providertest.Case{
		{Name: "instanceType required", Patch: `{"platform":{"aws":{"instanceType":null}}}`, Want: "spec.platform.aws.instanceType"},
		{Name: "scale to zero aws", Patch: `{"nodeCount":0,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":5}}`, Want: ""},
		{Name: "EKS AMI release version", Patch: `{"kubernetesVersion":"1.31.2-20250101"}`, Want: ""},
		{Name: "eks empty label value", Patch: `{"labels":{"team":""}}`, Want: "spec.labels.team"},
		{Name: "eks label value", Patch: `{"labels":{"team":"web"}}`, Want: ""},
		{Name: "label eks", Patch: `{"labels":{"eks.amazonaws.com/nodegroup":"x"}}`, Want: "spec.labels.eks.amazonaws.com/nodegroup"},
		{Name: "eks volume gp3", Patch: `{"platform":{"aws":{"volumeType":"gp3"}}}`, Want: ""},
		{Name: "eks volume io2", Patch: `{"platform":{"aws":{"volumeType":"io2"}}}`, Want: ""},
		{Name: "eks volume banana", Patch: `{"platform":{"aws":{"volumeType":"banana"}}}`, Want: "spec.platform.aws.volumeType"},
		{Name: "eks volume upper case", Patch: `{"platform":{"aws":{"volumeType":"GP3"}}}`, Want: "spec.platform.aws.volumeType"},
		{Name: "eks volume st1 cannot boot", Patch: `{"platform":{"aws":{"volumeType":"st1"}}}`, Want: "spec.platform.aws.volumeType"},
		{Name: "eks volume sc1 cannot boot", Patch: `{"platform":{"aws":{"volumeType":"sc1"}}}`, Want: "spec.platform.aws.volumeType"},
		{Name: "aws volume ok", Patch: `{"platform":{"aws":{"volumeSize":100,"volumeType":"gp3"}}}`, Want: ""},
		{Name: "aws volume big", Patch: `{"platform":{"aws":{"volumeSize":20000}}}`, Want: "spec.platform.aws.volumeSize"},
		{Name: "aws spot", Patch: `{"platform":{"aws":{"spotInstances":true,"userData":"#!/bin/bash\necho hi"}}}`, Want: ""},
		{Name: "eks strategy ok", Patch: `{"updateStrategy":{"maxSurge":"2","maxUnavailable":"100","drainTimeout":"90s","soak":"30s","onStuck":"Force"}}`, Want: ""},
		{Name: "eks unavailable 0 is kpool's", Patch: `{"updateStrategy":{"maxUnavailable":"0"}}`, Want: ""},
		{Name: "eks unavailable 100%", Patch: `{"updateStrategy":{"maxUnavailable":"100%"}}`, Want: ""},
		{Name: "eks unavailable 101 nodes", Patch: `{"updateStrategy":{"maxUnavailable":"101"}}`, Want: "spec.updateStrategy.maxUnavailable"},
		{Name: "aws user data big", Patch: `{"platform":{"aws":{"userData":"` + strings.Repeat("x", kpool.MaxUserData+1) + `"}}}`, Want: "spec.platform.aws.userData"},
	})
}

// TestClusterRules: EKS's own rules of a cluster spec, as the API
// applies them: the field at fault, or none.
func TestClusterRules(t *testing.T) {
	rules.RunClusters(t, []providertest.Case{
		{Name: "aws ok", Patch: `{}`, Want: ""},
		{Name: "aws region", Patch: `{"platform":{"aws":{"region":"uswest2"}}}`, Want: "spec.platform.aws.region"},
		{Name: "aws role", Patch: `{"platform":{"aws":{"nodeRoleArn":"eks-nodes"}}}`, Want: "spec.platform.aws.nodeRoleArn"},
		{Name: "aws subnets required", Patch: `{"platform":{"aws":{"subnets":null}}}`, Want: "spec.platform.aws.subnets"},
		{Name: "aws subnet zone", Patch: `{"platform":{"aws":{"subnets":{"eu-west-1a":"subnet-0123456789abcdef2"}}}}`, Want: "spec.platform.aws.subnets.eu-west-1a"},
		{Name: "aws subnet zone id", Patch: `{"platform":{"aws":{"subnets":{"usw2-az3":"subnet-0123456789abcdef2"}}}}`, Want: "spec.platform.aws.subnets.usw2-az3"},
		{Name: "aws subnet id", Patch: `{"platform":{"aws":{"subnets":{"us-west-2c":"sn-1"}}}}`, Want: "spec.platform.aws.subnets.us-west-2c"},
	})
}

// TestKubeHosts: a cluster on the public cloud (no spec.endpoint) may have
// its token sent to an EKS endpoint, in AWS's partition or China's, and
// nowhere else.
func TestKubeHosts(t *testing.T) {
	c := &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformAWS}}}
	for server, ok := range map[string]bool{
		"https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com":     true,
		"https://EXAMPLE108C897D9B2F1B21D5EXAMPLE.sk1.cn-north-1.eks.amazonaws.com.cn": true,
		"https://eks.amazonaws.com.evil.example":                                       false,
		"https://evil.example.com":                                                     false,
		"http://0123.gr7.us-west-2.eks.amazonaws.com":                                  false,
	} {
		if err := provider.CheckKubeServer(eks.Profile{}, nil, c, server); (err == nil) != ok {
			t.Errorf("%s: %v", server, err)
		}
	}
}
