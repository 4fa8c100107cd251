package eks

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The credentials of EKS clusters: the regional public endpoints, the
// account they are scoped to, and the kind of credential EKS takes besides
// the default chain.

// CredentialStatic is an AWS access key: its id and secret access key,
// each read from a variable or a file (accessKeyIdEnv or accessKeyIdFile,
// secretAccessKeyEnv or secretAccessKeyFile) when the driver first needs
// them.
const CredentialStatic = "static"

// CredentialKinds: an access key.
func (Profile) CredentialKinds() []provider.CredentialKind {
	return []provider.CredentialKind{{Name: CredentialStatic, Noun: "access key", Secrets: []string{"accessKeyId", "secretAccessKey"}}}
}

// Regions are the AWS commercial regions whose public EKS endpoints
// (https://eks.REGION.amazonaws.com) a credential that names no endpoints
// may be sent to.
var Regions = []string{
	"us-east-1", "us-east-2", "us-west-1", "us-west-2", "af-south-1", "ap-east-1", "ap-east-2", "ap-south-1", "ap-south-2",
	"ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-7",
	"ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2",
	"eu-west-1", "eu-west-2", "eu-west-3", "eu-south-1", "eu-south-2", "eu-north-1", "il-central-1", "me-south-1",
	"me-central-1", "mx-central-1", "sa-east-1",
}

// PublicEndpoints are the regional EKS endpoints of Regions, and their
// EC2 endpoints (https://ec2.REGION.amazonaws.com, as the SDK resolves
// them), where the node groups' launch templates are.
func (Profile) PublicEndpoints() []string {
	out := make([]string, 0, 2*len(Regions))
	for _, r := range Regions {
		out = append(out, PublicEndpoint(r), "https://ec2."+r+".amazonaws.com")
	}
	return out
}

// PublicEndpoint is a region's EKS endpoint, as the SDK resolves it.
func PublicEndpoint(region string) string { return "https://eks." + region + ".amazonaws.com" }

// Scope is the cluster's AWS account, read from its node role's ARN (the
// one account id a kpool AWS cluster spec carries): what AWS credentials
// are scoped to.
func (Profile) Scope(s *kpool.ClusterSpec) (field, id, word string) {
	const f = "spec.platform.aws.nodeRoleArn"
	if a := s.Platform.AWS; a != nil {
		return f, Account(a.NodeRoleARN), "account"
	}
	return f, "", "account"
}
