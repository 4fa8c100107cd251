package eks_test

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool/cloudsim/eks"
)

func ec2sdk(e *env, key, secret string) *ec2.Client {
	return ec2.New(ec2.Options{Region: eks.DemoRegion, BaseEndpoint: aws.String(e.url), HTTPClient: e.http,
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), RetryMaxAttempts: 1})
}

const mimeData = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"==B==\"\n\n--==B==\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho hi\n\n--==B==--\n"

func b64(s string) *string { return aws.String(base64.StdEncoding.EncodeToString([]byte(s))) }

func template(name, userData string) *ec2.CreateLaunchTemplateInput {
	return &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
		UserData: b64(userData),
		BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"),
			Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeType: ec2types.VolumeTypeGp3, VolumeSize: aws.Int32(100)}}},
	}}
}

// TestLaunchTemplates: the official EC2 SDK creates, versions, describes
// and deletes launch templates on EC2's Query API, and the emulator
// answers EC2's errors as the SDK reads them.
func TestLaunchTemplates(t *testing.T) {
	e := newEnv(t)
	cl := ec2sdk(e, eks.DemoAccessKey, eks.DemoSecretKey)
	out, err := cl.CreateLaunchTemplate(ctx, template("lt-web", mimeData))
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.LaunchTemplate.LaunchTemplateId)
	if aws.ToInt64(out.LaunchTemplate.LatestVersionNumber) != 1 || aws.ToString(out.LaunchTemplate.LaunchTemplateName) != "lt-web" {
		t.Fatalf("created: %+v", out.LaunchTemplate)
	}
	v2, err := cl.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: aws.String(id),
		SourceVersion: aws.String("1"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: b64(mimeData + "\n")}})
	if err != nil || aws.ToInt64(v2.LaunchTemplateVersion.VersionNumber) != 2 {
		t.Fatalf("version 2: %v %+v", err, v2)
	}
	vs, err := cl.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("lt-web"), Versions: []string{"$Latest"}})
	if err != nil || len(vs.LaunchTemplateVersions) != 1 {
		t.Fatalf("describe versions: %v %+v", err, vs)
	}
	d := vs.LaunchTemplateVersions[0].LaunchTemplateData
	if aws.ToInt64(vs.LaunchTemplateVersions[0].VersionNumber) != 2 || d.BlockDeviceMappings[0].Ebs.VolumeType != ec2types.VolumeTypeGp3 ||
		aws.ToInt32(d.BlockDeviceMappings[0].Ebs.VolumeSize) != 100 {
		t.Fatalf("version 2 did not keep version 1's volume: %+v", d)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"name in use", func() error { _, err := cl.CreateLaunchTemplate(ctx, template("lt-web", mimeData)); return err }, "InvalidLaunchTemplateName.AlreadyExistsException"},
		{"name too short", func() error { _, err := cl.CreateLaunchTemplate(ctx, template("lt", mimeData)); return err }, "InvalidLaunchTemplateName.MalformedException"},
		{"name missing", func() error {
			_, err := cl.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"nope"}})
			return err
		}, "InvalidLaunchTemplateName.NotFoundException"},
		{"id missing", func() error {
			_, err := cl.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String("lt-0000000000000dead")})
			return err
		}, "InvalidLaunchTemplateId.NotFound"},
		{"volume too small", func() error {
			in := template("lt-small", mimeData)
			in.LaunchTemplateData.BlockDeviceMappings[0].Ebs.VolumeType = ec2types.VolumeTypeIo2
			in.LaunchTemplateData.BlockDeviceMappings[0].Ebs.VolumeSize = aws.Int32(2)
			_, err := cl.CreateLaunchTemplate(ctx, in)
			return err
		}, "InvalidParameterValue"},
		{"version missing", func() error {
			_, err := cl.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String(id), Versions: []string{"9"}})
			return err
		}, "InvalidLaunchTemplateId.VersionNotFound"},
		{"wrong key", func() error {
			_, err := ec2sdk(e, "AKIAUNKNOWNUNKNOWN01", "x").DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
			return err
		}, "AuthFailure"},
	} {
		if got := code(tc.call()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := cl.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.emu.LaunchTemplateOf(eks.DemoRegion, "lt-web"); ok {
		t.Fatal("deleted, still there")
	}
}

// TestNodegroupLaunchTemplate: EKS's rules on a node group's launch
// template: no diskSize with one, user data in MIME multi-part, the same
// template (only its version) in UpdateNodegroupVersion, none added to a
// node group made without one; the version rolls out.
func TestNodegroupLaunchTemplate(t *testing.T) {
	e := newEnv(t)
	cl := ec2sdk(e, eks.DemoAccessKey, eks.DemoSecretKey)
	lt, err := cl.CreateLaunchTemplate(ctx, template("lt-ng", mimeData))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := cl.CreateLaunchTemplate(ctx, template("lt-plain", "#!/bin/bash\necho not mime\n"))
	if err != nil {
		t.Fatal(err)
	}
	id := lt.LaunchTemplate.LaunchTemplateId
	with := func(spec *types.LaunchTemplateSpecification) func(*awseks.CreateNodegroupInput) {
		return func(in *awseks.CreateNodegroupInput) { in.LaunchTemplate = spec }
	}
	for _, tc := range []struct {
		name string
		in   *awseks.CreateNodegroupInput
	}{
		{"diskSize too", create("a", func(in *awseks.CreateNodegroupInput) {
			with(&types.LaunchTemplateSpecification{Id: id})(in)
			in.DiskSize = aws.Int32(50)
		})},
		{"id and name", create("b", with(&types.LaunchTemplateSpecification{Id: id, Name: aws.String("lt-ng")}))},
		{"no such template", create("c", with(&types.LaunchTemplateSpecification{Name: aws.String("lt-none")}))},
		{"no such version", create("d", with(&types.LaunchTemplateSpecification{Id: id, Version: aws.String("7")}))},
		{"user data not MIME", create("e", with(&types.LaunchTemplateSpecification{Id: plain.LaunchTemplate.LaunchTemplateId}))},
	} {
		if _, err := e.client.CreateNodegroup(ctx, tc.in); code(err) != "InvalidParameterException" {
			t.Errorf("%s: %v, want InvalidParameterException", tc.name, err)
		}
	}
	out, err := e.client.CreateNodegroup(ctx, create("ng", with(&types.LaunchTemplateSpecification{Name: aws.String("lt-ng")})))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Nodegroup.LaunchTemplate; got == nil || aws.ToString(got.Id) != aws.ToString(id) || aws.ToString(got.Version) != "1" || out.Nodegroup.DiskSize != nil {
		t.Fatalf("created: %+v", out.Nodegroup)
	}
	if _, err := e.client.CreateNodegroup(ctx, create("bare", nil)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if _, err := cl.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: id, SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: b64(mimeData + "\n")}}); err != nil {
		t.Fatal(err)
	}
	version := func(ng string, spec *types.LaunchTemplateSpecification) error {
		_, err := e.client.UpdateNodegroupVersion(ctx, &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(eks.DemoCluster),
			NodegroupName: aws.String(ng), LaunchTemplate: spec})
		return err
	}
	if err := version("bare", &types.LaunchTemplateSpecification{Id: id, Version: aws.String("2")}); code(err) != "InvalidParameterException" {
		t.Errorf("a template for a node group made without one: %v", err)
	}
	if err := version("ng", &types.LaunchTemplateSpecification{Id: plain.LaunchTemplate.LaunchTemplateId}); code(err) != "InvalidParameterException" {
		t.Errorf("another template: %v", err)
	}
	if err := version("ng", &types.LaunchTemplateSpecification{Id: id, Version: aws.String("2")}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	st, _ := e.emu.NodegroupOf(eks.DemoRegion, eks.DemoCluster, "ng")
	if aws.ToString(st.LaunchTemplate.Version) != "2" || st.Status != "ACTIVE" || st.Version != eks.DemoVersion {
		t.Fatalf("after the rollout: %+v", st.Nodegroup)
	}
}

// TestLimits: EKS's quotas (service-quotas.html) as
// ResourceLimitExceededException; empty label values refused; a node
// group created at the cluster's version only; an AMI release never
// rolled back.
func TestLimits(t *testing.T) {
	e := newEnv(t)
	for i := range 30 {
		if _, err := e.client.CreateNodegroup(ctx, create(fmt.Sprintf("ng%02d", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.client.CreateNodegroup(ctx, create("ng30", nil)); code(err) != "ResourceLimitExceededException" {
		t.Errorf("the 31st node group: %v", err)
	}
	other := newEnv(t)
	for _, tc := range []struct {
		name string
		mod  func(*awseks.CreateNodegroupInput)
		want string
	}{
		{"451 nodes", func(in *awseks.CreateNodegroupInput) { in.ScalingConfig.MaxSize = aws.Int32(451) }, "ResourceLimitExceededException"},
		{"empty label value", func(in *awseks.CreateNodegroupInput) { in.Labels = map[string]string{"team": ""} }, "InvalidParameterException"},
		{"older version", func(in *awseks.CreateNodegroupInput) { in.Version = aws.String("1.30") }, "InvalidParameterException"},
	} {
		if _, err := other.client.CreateNodegroup(ctx, create("x", tc.mod)); code(err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
	if _, err := other.client.CreateNodegroup(ctx, create("rel", func(in *awseks.CreateNodegroupInput) { in.ReleaseVersion = aws.String("1.31.2-20260301") })); err != nil {
		t.Fatal(err)
	}
	other.clock.Advance(time.Hour)
	_, err := other.client.UpdateNodegroupVersion(ctx, &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(eks.DemoCluster),
		NodegroupName: aws.String("rel"), ReleaseVersion: aws.String("1.31.1-20260401")})
	if code(err) != "InvalidParameterException" {
		t.Errorf("an AMI release rolled back: %v", err)
	}
}
