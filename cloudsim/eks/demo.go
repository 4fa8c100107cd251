package eks

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/internal/demo"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The demo cluster Demo holds, and the role its nodes take.
const (
	DemoCluster  = "demo-eks"
	DemoRegion   = "us-west-2"
	DemoAccount  = "111122223333"
	DemoVersion  = "1.31"
	DemoNodeRole = "arn:aws:iam::" + DemoAccount + ":role/kpool-demo-nodes"
)

// The access key Demo's emulator accepts. DemoSecretKey is no secret: it
// signs requests to the emulator only.
const (
	DemoAccessKey = "AKIAKPOOLCLOUDSIM001"
	DemoSecretKey = "kpool-cloudsim-demo-secret-access-key"
)

// DemoSubnets are the demo cluster's subnets by zone name.
var DemoSubnets = map[string]string{
	"us-west-2a": "subnet-0a0000000000000a1",
	"us-west-2b": "subnet-0b0000000000000b2",
	"us-west-2c": "subnet-0c0000000000000c3",
}

// Demo returns an emulator on an engine with options o that holds the
// demo cluster, accepting requests signed with the demo access key.
func Demo(o sim.Options) (*Server, error) {
	s := New(Options{Engine: o, Keys: map[string]string{DemoAccessKey: DemoSecretKey}})
	s.AddCluster(Cluster{Name: DemoCluster, Region: DemoRegion, Account: DemoAccount, Version: DemoVersion, Subnets: DemoSubnets})
	return s, nil
}

// clusterView is what Clusters and Describe need of a cluster.
type clusterView struct {
	name, region, account, version string
	subnets                        map[string]string // zone to subnet
	nodegroups                     []string
}

func (s *Server) views() []clusterView {
	var out []clusterView
	s.Do(func(time.Time) {
		for _, c := range s.clusters {
			v := clusterView{name: c.name, region: c.region, account: c.account, version: c.version, subnets: map[string]string{}}
			for id, z := range c.subnets {
				v.subnets[z] = id
			}
			for _, g := range c.sortedNodegroups() {
				v.nodegroups = append(v.nodegroups, g.name)
			}
			out = append(out, v)
		}
	})
	slices.SortFunc(out, func(a, b clusterView) int { return strings.Compare(a.region+"/"+a.name, b.region+"/"+b.name) })
	return out
}

// Clusters returns the emulator's clusters as kpool registers them when the
// emulator is served at endpoint (only Name and Spec set). The node role
// is the demo's, in the cluster's account.
func (s *Server) Clusters(endpoint string) []kpool.Cluster {
	var out []kpool.Cluster
	for _, c := range s.views() {
		aws := &kpool.AWSCluster{Region: c.region, ClusterName: c.name, Subnets: c.subnets,
			NodeRoleARN: "arn:aws:iam::" + c.account + ":role/kpool-demo-nodes"}
		out = append(out, demo.Cluster(c.name, endpoint, kpool.ClusterPlatform{Type: kpool.PlatformAWS, AWS: aws}))
	}
	return out
}

// Describe writes, for people, how to reach the emulator's clusters when
// it is served at endpoint.
func (s *Server) Describe(w io.Writer, endpoint string) {
	auth := "any well-formed AWS SigV4 signature (service eks)"
	if len(s.keys) > 0 {
		auth = "AWS SigV4 (services eks, ec2) with access key " + DemoAccessKey + " / secret " + DemoSecretKey
		if _, ok := s.keys[DemoAccessKey]; !ok {
			auth = fmt.Sprintf("AWS SigV4 (service eks) with one of its %d access keys", len(s.keys))
		}
	}
	fmt.Fprintf(w, "  auth:      %s\n  api:       EKS REST-JSON (aws-sdk-go-v2/service/eks, BaseEndpoint %s)\n", auth, endpoint)
	fmt.Fprintf(w, "  ec2:       EC2 Query API, launch templates and the catalogue (subnets, instance types) (service/ec2, BaseEndpoint %s; SigV4 service ec2)\n", endpoint)
	for _, c := range s.views() {
		fmt.Fprintf(w, "  EKS cluster %s (%s, account %s, Kubernetes %s, node groups: %s):\n", c.name, c.region, c.account, c.version, demo.List(c.nodegroups))
		for _, z := range kpool.SortedKeys(c.subnets) {
			fmt.Fprintf(w, "    subnet %s: %s\n", z, c.subnets[z])
		}
		fmt.Fprintf(w, "    node groups:    %s/clusters/%s/node-groups\n", endpoint, c.name)
		fmt.Fprintf(w, "    kubernetes:     %s (DescribeCluster's endpoint; nodes of the node groups, labelled %s=<node group>; pods, PDBs, eviction; EKS tokens, STS GetCallerIdentity presigned at %s with x-k8s-aws-id: %s as aws eks get-token makes them, or the static token of the kubeconfig kpool cloudsim writes)\n",
			s.kube.ServerURL(endpoint, KubeID(c.region, c.name)), LabelNodegroup, endpoint, c.name)
	}
}

// Identity returns EKS and the demo access key (Credential).
func (s *Server) Identity() (kpool.PlatformType, any) { return kpool.PlatformAWS, Credential() }

// Credential is the demo access key as an AWS credentials provider, for a
// driver that talks to the demo emulator. It signs requests to the
// emulator only and grants nothing elsewhere.
func Credential() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(DemoAccessKey, DemoSecretKey, "")
}
