package eks_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool/cloudsim/eks"
)

// TestUpdateConfigRules: a node group's updateConfig is exactly one of
// maxUnavailable (1-100 nodes) and maxUnavailablePercentage (1-100),
// taken on CreateNodegroup and UpdateNodegroupConfig, stored and
// returned; anything else is 400 InvalidParameterException and changes
// nothing. A node group given none has EKS's default of one node.
func TestUpdateConfigRules(t *testing.T) {
	e := newEnv(t)
	if _, err := e.client.CreateNodegroup(ctx, create("plain", nil)); err != nil {
		t.Fatal(err)
	}
	in := create("web", func(in *awseks.CreateNodegroupInput) {
		in.UpdateConfig = &types.NodegroupUpdateConfig{MaxUnavailablePercentage: aws.Int32(25)}
	})
	if _, err := e.client.CreateNodegroup(ctx, in); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if uc := e.updateConfig(t, "plain"); aws.ToInt32(uc.MaxUnavailable) != 1 || uc.MaxUnavailablePercentage != nil {
		t.Fatalf("default updateConfig %+v, want maxUnavailable 1", uc)
	}
	if uc := e.updateConfig(t, "web"); aws.ToInt32(uc.MaxUnavailablePercentage) != 25 || uc.MaxUnavailable != nil {
		t.Fatalf("created with %+v, want maxUnavailablePercentage 25", uc)
	}
	bad := []types.NodegroupUpdateConfig{
		{},
		{MaxUnavailable: aws.Int32(1), MaxUnavailablePercentage: aws.Int32(10)},
		{MaxUnavailable: aws.Int32(0)},
		{MaxUnavailable: aws.Int32(101)},
		{MaxUnavailablePercentage: aws.Int32(0)},
		{MaxUnavailablePercentage: aws.Int32(101)},
	}
	for i, uc := range bad {
		_, err := e.client.CreateNodegroup(ctx, create("bad", func(in *awseks.CreateNodegroupInput) { in.UpdateConfig = &uc }))
		if code(err) != "InvalidParameterException" {
			t.Errorf("create with bad updateConfig %d: %v, want InvalidParameterException", i, err)
		}
		_, err = e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster),
			NodegroupName: aws.String("web"), UpdateConfig: &uc})
		if code(err) != "InvalidParameterException" {
			t.Errorf("update to bad updateConfig %d: %v, want InvalidParameterException", i, err)
		}
	}
	if uc := e.updateConfig(t, "web"); aws.ToInt32(uc.MaxUnavailablePercentage) != 25 {
		t.Fatalf("refused updates changed the updateConfig: %+v", uc)
	}
	if _, err := e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster),
		NodegroupName: aws.String("web"), UpdateConfig: &types.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(100)}}); err != nil {
		t.Fatalf("update to maxUnavailable 100: %v", err)
	}
	e.clock.Advance(time.Hour)
	if uc := e.updateConfig(t, "web"); aws.ToInt32(uc.MaxUnavailable) != 100 || uc.MaxUnavailablePercentage != nil {
		t.Fatalf("updated to %+v, want maxUnavailable 100 alone", uc)
	}
}

// TestForcedVersionUpdate: a version update whose pods cannot be drained
// fails (PodEvictionFailure, the node group keeping its release) unless
// it is forced, and then succeeds.
func TestForcedVersionUpdate(t *testing.T) {
	e := newEnv(t)
	if _, err := e.client.CreateNodegroup(ctx, create("web", nil)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	for _, force := range []bool{false, true} {
		e.emu.FailNextOperations(1)
		up, err := e.client.UpdateNodegroupVersion(ctx, &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(eks.DemoCluster),
			NodegroupName: aws.String("web"), ReleaseVersion: aws.String("1.31.5-20260301"), Force: force})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		du, err := e.client.DescribeUpdate(ctx, &awseks.DescribeUpdateInput{Name: aws.String(eks.DemoCluster), UpdateId: up.Update.Id, NodegroupName: aws.String("web")})
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]types.UpdateStatus{false: types.UpdateStatusFailed, true: types.UpdateStatusSuccessful}[force]
		if du.Update.Status != want {
			t.Fatalf("force %v: update %s (%+v), want %s", force, du.Update.Status, du.Update.Errors, want)
		}
		if !force && (len(du.Update.Errors) != 1 || du.Update.Errors[0].ErrorCode != "PodEvictionFailure") {
			t.Fatalf("unforced: errors %+v, want PodEvictionFailure", du.Update.Errors)
		}
		ng, err := e.client.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(ng.Nodegroup.ReleaseVersion) == "1.31.5-20260301"; got != force {
			t.Fatalf("force %v: release %s after the update", force, aws.ToString(ng.Nodegroup.ReleaseVersion))
		}
	}
}

// updateConfig is a node group's updateConfig as DescribeNodegroup gives it.
func (e *env) updateConfig(t *testing.T, name string) *types.NodegroupUpdateConfig {
	t.Helper()
	out, err := e.client.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Nodegroup.UpdateConfig == nil {
		t.Fatalf("node group %s has no updateConfig", name)
	}
	return out.Nodegroup.UpdateConfig
}
