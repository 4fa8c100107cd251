package driver_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/eks"
	"github.com/kpool/kpool/provider/providertest"
)

// guideSpec is the guide's AWS block (api/guide_test.go): two zones,
// user data, a gp3 volume and its size.
func guideSpec(e *emulated, name, userData string) provider.PoolSpec {
	a := kpool.AWSNodePool{InstanceType: "m5.xlarge", VolumeType: "gp3", VolumeSize: 100, UserData: userData,
		AvailabilityZones: []string{"us-west-2a", "us-west-2b"}}
	return providertest.Spec(e.Cluster, name, kpool.NodePoolSpec{NodeCount: ptr.To(2), Platform: kpool.NodePoolPlatform{AWS: &a}})
}

// TestLaunchTemplate: the guide's AWS block (userData, volumeType gp3,
// volumeSize) reaches Ready on a launch template of kpool's; a change of
// user data is a new template version rolled out by
// UpdateNodegroupVersion; the template goes once the node group has.
func TestLaunchTemplate(t *testing.T) {
	e := newEmulated(t)
	s := guideSpec(e, "web", "#!/bin/bash\necho 'Custom initialization'")
	ltName := "kpool-" + clusterName + "-" + s.ProviderName
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	lt, ok := e.Sim.LaunchTemplateOf(region, ltName)
	if !ok || lt.VolumeType != "gp3" || lt.VolumeSize != 100 || !strings.HasPrefix(lt.UserData, "MIME-Version: 1.0") ||
		!strings.Contains(lt.UserData, "text/x-shellscript") || !strings.Contains(lt.UserData, "echo 'Custom initialization'") || lt.Tags["kpool.io/eks-nodegroup"] != s.ProviderName {
		t.Fatalf("launch template: %+v %v", lt, ok)
	}
	st, _ := e.Sim.NodegroupOf(region, clusterName, s.ProviderName)
	if st.LaunchTemplate == nil || *st.LaunchTemplate.ID != lt.ID || *st.LaunchTemplate.Version != "1" || st.DiskSize != nil {
		t.Fatalf("node group: %+v", st.Nodegroup)
	}
	e.Clock.Advance(time.Hour)
	p := listed(t, e, s.ProviderName)
	if p.State != provider.StateReady || p.DiskType != "gp3" || p.DiskSizeGB != 100 || p.Settings["userData"] != "#!/bin/bash\necho 'Custom initialization'" || len(p.Zones) != 2 {
		t.Fatalf("observed: %+v", p)
	}
	if d := provider.Compare(eks.Profile{}, s, &p); len(d) > 0 {
		t.Fatalf("a Ready pool drifts: %+v", d)
	}

	// A change of user data: version 2, rolled out.
	s = guideSpec(e, "web", "#!/bin/bash\necho bye")
	got, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != provider.StateUpdating {
		t.Fatalf("update: %+v", got)
	}
	if lt, _ = e.Sim.LaunchTemplateOf(region, ltName); lt.Versions != 2 || !strings.Contains(lt.UserData, "echo bye") {
		t.Fatalf("after the update: %+v", lt)
	}
	e.Clock.Advance(time.Hour)
	if st, _ = e.Sim.NodegroupOf(region, clusterName, s.ProviderName); *st.LaunchTemplate.Version != "2" || st.Status != "ACTIVE" {
		t.Fatalf("node group after the update: %+v", st.Nodegroup)
	}
	p = listed(t, e, s.ProviderName)
	if d := provider.Compare(eks.Profile{}, s, &p); len(d) > 0 || p.State != provider.StateReady {
		t.Fatalf("after the rollout: %+v drifts %+v", p, d)
	}
	// A template version never changes: a list reads it no more (its
	// EC2 calls are the template clean-up's one search).
	ec2Calls := func() int {
		return countCalls(e, func(c sim.Call) bool { return c.Method == "POST" && c.Path == "/" })
	}
	before := ec2Calls()
	listed(t, e, s.ProviderName)
	if n := ec2Calls() - before; n != 1 {
		t.Fatalf("a list of a settled templated node group made %d EC2 calls, want 1 (the clean-up's search)", n)
	}
	// Settled: another pass changes nothing.
	if _, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	if lt, _ = e.Sim.LaunchTemplateOf(region, ltName); lt.Versions != 2 {
		t.Fatalf("a settled pool made template version %d", lt.Versions)
	}

	// Deleted: the template stays while the node group is deleting, and
	// goes with it.
	if err := e.Driver.NodePoolDelete(ctx, e.Cluster, s.ProviderName); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Sim.LaunchTemplateOf(region, ltName); !ok {
		t.Fatal("the template went before its node group")
	}
	e.Clock.Advance(time.Hour)
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	if lt, ok := e.Sim.LaunchTemplateOf(region, ltName); ok {
		t.Fatalf("the template outlived its node group: %+v", lt)
	}
}

// TestLaunchTemplateAfterCrash: a template a create made before it
// crashed (the node group never asked for) is found by name and used, not
// made twice: same template, a version with the spec's data, and the list
// keeps it while its node group uses it.
func TestLaunchTemplateAfterCrash(t *testing.T) {
	e := newEmulated(t)
	s := guideSpec(e, "api", "#!/bin/bash\necho hi")
	ltName := "kpool-" + clusterName + "-" + s.ProviderName
	ec2cl := ec2.New(ec2.Options{Region: region, BaseEndpoint: aws.String(e.URL), HTTPClient: e.Client, Credentials: static, RetryMaxAttempts: 1})
	first, err := ec2cl.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(ltName),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: aws.String(base64.StdEncoding.EncodeToString([]byte("partial")))}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	lt, _ := e.Sim.LaunchTemplateOf(region, ltName)
	st, _ := e.Sim.NodegroupOf(region, clusterName, s.ProviderName)
	if lt.ID != aws.ToString(first.LaunchTemplate.LaunchTemplateId) || lt.Versions != 2 || lt.VolumeType != "gp3" ||
		*st.LaunchTemplate.ID != lt.ID || *st.LaunchTemplate.Version != "2" {
		t.Fatalf("template %+v, node group's %+v", lt, st.LaunchTemplate)
	}
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Sim.LaunchTemplateOf(region, ltName); !ok {
		t.Fatal("the list deleted the template of a node group that uses it")
	}
}

// TestRefusedCreateLeavesNoTemplate: a template whose node group EKS
// refused, and whose pool is then deleted (never created again), goes
// at the next list.
func TestRefusedCreateLeavesNoTemplate(t *testing.T) {
	e := newEmulated(t)
	bad := guideSpec(e, "api", "#!/bin/bash\necho hi")
	bad.MachineType = "not an instance type"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, bad); !provider.IsValidation(err) {
		t.Fatalf("bad instance type: %v", err)
	}
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil {
		t.Fatal(err)
	}
	if lt, ok := e.Sim.LaunchTemplateOf(region, "kpool-"+clusterName+"-"+bad.ProviderName); ok {
		t.Fatalf("orphaned: %+v", lt)
	}
}

func listed(t *testing.T, e *emulated, name string) provider.Pool {
	t.Helper()
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := provider.Find(pools, name)
	if !ok {
		t.Fatalf("%s is not listed", name)
	}
	return *p
}

// TestNoTemplateToAdd: a node group made without a launch template (by
// hand, then adopted) cannot take one: a change of its volume or user
// data is refused on the field, not sent to fail.
func TestNoTemplateToAdd(t *testing.T) {
	e := newEmulated(t)
	s := e.Harness(t).Spec("bare")
	cl := awseks.New(awseks.Options{Region: region, BaseEndpoint: aws.String(e.URL), HTTPClient: e.Client, Credentials: static, RetryMaxAttempts: 1})
	if _, err := cl.CreateNodegroup(ctx, &awseks.CreateNodegroupInput{ClusterName: aws.String(clusterName), NodegroupName: aws.String(s.ProviderName),
		NodeRole: aws.String("arn:aws:iam::" + account + ":role/nodes"), Subnets: []string{subnets["us-west-2a"]}, DiskSize: aws.Int32(50), InstanceTypes: []string{s.MachineType},
		Labels: s.Labels, Tags: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.DiskType = "gp3"
	_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.platform.aws.volumeType" {
		t.Fatalf("a volume type for a node group without a template: %v", err)
	}
}

// TestForeignTemplate: a template of kpool's name that another kpool
// marked is never used: the create is refused as foreign.
func TestForeignTemplate(t *testing.T) {
	e := newEmulated(t)
	s := guideSpec(e, "db", "#!/bin/bash\necho hi")
	other := s
	other.Owner = provider.Owner{Installation: "another-kpool", Pool: "x"}
	other.MachineType = "not an instance type" // the template is made, the node group refused
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, other); !provider.IsValidation(err) {
		t.Fatalf("bad instance type: %v", err)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); !errors.Is(err, provider.ErrForeign) {
		t.Fatalf("another kpool's template: %v, want foreign", err)
	}
}

// countCalls counts the emulator's calls that match.
func countCalls(e *emulated, match func(sim.Call) bool) int {
	n := 0
	for _, c := range e.Sim.Calls() {
		if match(c) {
			n++
		}
	}
	return n
}
