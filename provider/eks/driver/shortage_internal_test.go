package driver

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool"
)

// TestShortageOf: which health issues are a capacity shortage, with
// which code and logical zones.
func TestShortageOf(t *testing.T) {
	c := &kpool.Cluster{Name: "prod", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: kpool.PlatformAWS, AWS: &kpool.AWSCluster{
		Region: "us-west-2", ClusterName: "prod", Subnets: map[string]string{"us-west-2a": "subnet-a", "us-west-2b": "subnet-b"}}}}}
	for _, tc := range []struct {
		name  string
		issue types.Issue
		code  string // "": no shortage
		zones []string
	}{
		{"on-demand, a zone named", types.Issue{Code: types.NodegroupIssueCodeAsgInstanceLaunchFailures, Message: aws.String(
			"Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have sufficient m5.large capacity in the Availability Zone you requested (us-west-2b). Our system will be working on provisioning additional capacity. Launching EC2 instance failed.")},
			"InsufficientInstanceCapacity", []string{"2"}},
		{"spot, no zone named", types.Issue{Code: types.NodegroupIssueCodeAsgInstanceLaunchFailures, Message: aws.String(
			"Could not launch Spot Instances. InsufficientInstanceCapacity - There is no Spot capacity available that matches your request. Launching EC2 instance failed.")},
			"InsufficientInstanceCapacity", nil},
		{"spot, unfulfillable", types.Issue{Code: types.NodegroupIssueCodeAsgInstanceLaunchFailures, Message: aws.String(
			"Could not launch Spot Instances. UnfulfillableCapacity - Unable to fulfill capacity due to your request configuration. Please adjust your request and try again. Launching EC2 instance failed.")},
			"UnfulfillableCapacity", nil},
		{"subnets out of addresses", types.Issue{Code: types.NodegroupIssueCodeInsufficientFreeAddresses, Message: aws.String("One or more of the subnets associated with your managed node group does not have enough available IP addresses for new nodes."),
			ResourceIds: []string{"subnet-a"}}, "InsufficientFreeAddresses", []string{"1"}},
		{"a fleet request quota is no shortage", types.Issue{Code: types.NodegroupIssueCodeAsgInstanceLaunchFailures, Message: aws.String(
			"You've reached your quota for maximum Fleet Requests for this account. Launching EC2 instance failed.")}, "", nil},
		{"an instance limit is the account's quota", types.Issue{Code: types.NodegroupIssueCodeInstanceLimitExceeded, Message: aws.String("You've reached your instance limit.")}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := shortageOf(c, &types.Nodegroup{Health: &types.NodegroupHealth{Issues: []types.Issue{tc.issue}}})
			switch {
			case tc.code == "" && s != nil:
				t.Fatalf("shortage %+v, want none", s)
			case tc.code != "" && (s == nil || s.Code != tc.code || !slices.Equal(s.Zones, tc.zones) || s.Message == ""):
				t.Fatalf("shortage %+v, want code %s zones %v", s, tc.code, tc.zones)
			}
		})
	}
}
