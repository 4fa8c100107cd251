package eks_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool/cloudsim/eks"
)

// TestCatalogue: the official EC2 SDK reads the demo region's catalogue,
// page by page: the cluster's subnets and their zones, the instance
// types each zone offers (p4d.24xlarge in us-west-2b and d alone), and
// each type's figures (GPUs, no spot for u-6tb1.112xlarge).
func TestCatalogue(t *testing.T) {
	e := newEnv(t)
	cl := ec2sdk(e, eks.DemoAccessKey, eks.DemoSecretKey)
	var ids []string
	for _, id := range eks.DemoSubnets {
		ids = append(ids, id)
	}
	sn, err := cl.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: ids})
	if err != nil || len(sn.Subnets) != 3 {
		t.Fatalf("subnets: %v %+v", err, sn)
	}
	for _, s := range sn.Subnets {
		if eks.DemoSubnets[aws.ToString(s.AvailabilityZone)] != aws.ToString(s.SubnetId) || !strings.HasPrefix(aws.ToString(s.AvailabilityZoneId), "usw2-az") {
			t.Errorf("subnet %s in %s (%s)", aws.ToString(s.SubnetId), aws.ToString(s.AvailabilityZone), aws.ToString(s.AvailabilityZoneId))
		}
	}
	// Paged by 5: every offering once, in the zones asked for.
	offered := map[string][]string{}
	pager := ec2.NewDescribeInstanceTypeOfferingsPaginator(cl, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone, MaxResults: aws.Int32(5),
		Filters: []ec2types.Filter{{Name: aws.String("location"), Values: []string{"us-west-2a", "us-west-2b", "us-west-2c"}}}})
	pages := 0
	for pager.HasMorePages() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, o := range p.InstanceTypeOfferings {
			if o.LocationType != ec2types.LocationTypeAvailabilityZone {
				t.Fatalf("offering: %+v", o)
			}
			offered[string(o.InstanceType)] = append(offered[string(o.InstanceType)], aws.ToString(o.Location))
		}
	}
	if pages < 2 || len(offered["m5.large"]) != 3 || !slices.Equal(offered["p4d.24xlarge"], []string{"us-west-2b"}) || offered["p3.2xlarge"] != nil {
		t.Fatalf("offerings in %d pages: %v", pages, offered)
	}
	types, err := cl.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"g5.xlarge", "u-6tb1.112xlarge"}})
	if err != nil || len(types.InstanceTypes) != 2 {
		t.Fatalf("types: %v %+v", err, types)
	}
	g5, u := types.InstanceTypes[0], types.InstanceTypes[1]
	if aws.ToInt32(g5.VCpuInfo.DefaultVCpus) != 4 || aws.ToInt64(g5.MemoryInfo.SizeInMiB) != 16384 || len(g5.GpuInfo.Gpus) != 1 ||
		aws.ToInt32(g5.GpuInfo.Gpus[0].Count) != 1 || !slices.Contains(g5.SupportedUsageClasses, ec2types.UsageClassTypeSpot) {
		t.Errorf("g5.xlarge: %+v", g5)
	}
	if aws.ToInt32(u.VCpuInfo.DefaultVCpus) != 448 || u.GpuInfo != nil || slices.Contains(u.SupportedUsageClasses, ec2types.UsageClassTypeSpot) {
		t.Errorf("u-6tb1.112xlarge: %+v", u)
	}
	all := 0
	tp := ec2.NewDescribeInstanceTypesPaginator(cl, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(5)})
	for tp.HasMorePages() {
		p, err := tp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all += len(p.InstanceTypes)
	}
	if all != 14 { // all the demo region offers: not p3.2xlarge
		t.Errorf("DescribeInstanceTypes paged: %d types", all)
	}
}

// TestCatalogueErrors: EC2's answers to what its catalogue refuses, as the
// SDK reads them.
func TestCatalogueErrors(t *testing.T) {
	e := newEnv(t)
	cl := ec2sdk(e, eks.DemoAccessKey, eks.DemoSecretKey)
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"unknown subnet", func() error {
			_, err := cl.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0000000000000dead"}})
			return err
		}, "InvalidSubnetID.NotFound"},
		{"unknown type", func() error {
			_, err := cl.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m5.banana"}})
			return err
		}, "InvalidInstanceType"},
		{"page too large", func() error {
			_, err := cl.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(101)})
			return err
		}, "InvalidParameterValue"},
		{"page too small", func() error {
			_, err := cl.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{MaxResults: aws.Int32(4)})
			return err
		}, "InvalidParameterValue"},
		{"unknown filter", func() error {
			_, err := cl.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{Filters: []ec2types.Filter{{Name: aws.String("banana"), Values: []string{"x"}}}})
			return err
		}, "InvalidParameterValue"},
	} {
		if err := tc.call(); code(err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
	e.emu.Deny("DescribeInstanceTypes", true)
	_, err := cl.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{})
	var re *awshttp.ResponseError
	if code(err) != "UnauthorizedOperation" || !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusForbidden {
		t.Fatalf("denied: %v", err)
	}
}

// TestUnofferedInstanceType: EKS refuses a node group whose instance type
// the region does not offer (InvalidParameterException), or does not
// offer in one of its subnets' zones (InvalidRequestException, naming the
// zones that do), and takes it where it is offered.
func TestUnofferedInstanceType(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, instanceType, zone string
		want, words              string
	}{
		{"unknown", "m5.banana", "us-west-2a", "InvalidParameterException", "The following supplied instance types do not exist: [m5.banana]"},
		{"not in the region", "p3.2xlarge", "us-west-2a", "InvalidParameterException", "do not exist: [p3.2xlarge]"},
		{"not in the zone", "p4d.24xlarge", "us-west-2a", "InvalidRequestException",
			"Your requested instance type (p4d.24xlarge) is not supported in your requested Availability Zone (us-west-2a). Please retry your request by not specifying an Availability Zone or choosing us-west-2b, us-west-2d."},
		{"in the zone", "p4d.24xlarge", "us-west-2b", "", ""},
	} {
		_, err := e.client.CreateNodegroup(ctx, create(strings.ReplaceAll(tc.name, " ", "-"), func(in *awseks.CreateNodegroupInput) {
			in.InstanceTypes, in.Subnets = []string{tc.instanceType}, []string{eks.DemoSubnets[tc.zone]}
		}))
		if code(err) != tc.want || (err != nil && !strings.Contains(err.Error(), tc.words)) {
			t.Errorf("%s: %v, want %s %q", tc.name, err, tc.want, tc.words)
		}
	}
	var bad *types.InvalidRequestException
	_, err := e.client.CreateNodegroup(ctx, create("two-zones", func(in *awseks.CreateNodegroupInput) {
		in.InstanceTypes, in.Subnets = []string{"p4d.24xlarge"}, []string{eks.DemoSubnets["us-west-2b"], eks.DemoSubnets["us-west-2c"]}
	}))
	if !errors.As(err, &bad) || aws.ToString(bad.NodegroupName) != "two-zones" {
		t.Fatalf("a subnet in a zone without the type: %v", err)
	}
}
