package eks

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// EC2's catalogue actions, as the EC2 model (aws-sdk-go-v2/service/ec2
// serializers.go and deserializers.go) and the EC2 API Reference give
// them: DescribeSubnets, DescribeInstanceTypeOfferings and
// DescribeInstanceTypes, each paged by MaxResults and NextToken.

// ec2Filter is one Filter.N: a name and its values, which may hold EC2's
// wildcards * and ?.
type ec2Filter struct {
	name   string
	values []*regexp.Regexp
}

// ec2Filters reads Filter.N.Name and Filter.N.Value.M, refusing a name
// the action does not take.
func (c *ec2Call) ec2Filters(allowed ...string) ([]ec2Filter, *sim.Reply) {
	var out []ec2Filter
	for _, i := range c.f.indexes("Filter") {
		p := "Filter." + strconv.Itoa(i) + "."
		f := ec2Filter{name: c.f.Get(p + "Name")}
		if !slices.Contains(allowed, f.name) {
			return nil, ec2Bad("InvalidParameterValue", "The filter '%s' is invalid (kpool cloudsim emulates %s).", f.name, strings.Join(allowed, ", "))
		}
		for _, v := range c.f.list(p + "Value") {
			re := regexp.QuoteMeta(v)
			re = strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(re)
			f.values = append(f.values, regexp.MustCompile("^"+re+"$"))
		}
		out = append(out, f)
	}
	return out, nil
}

// match reports whether, for every filter, one of its values matches
// what of(name) gives.
func match(fs []ec2Filter, of func(name string) string) bool {
	for _, f := range fs {
		have, ok := of(f.name), false
		for _, re := range f.values {
			ok = ok || re.MatchString(have)
		}
		if !ok {
			return false
		}
	}
	return true
}

// page reads MaxResults (lo to hi; none: the emulator's page size) and
// NextToken, and returns the page of items, sorted by key, and the next
// token.
func page[T any](c *ec2Call, items []T, key func(T) string, lo, hi int) ([]T, string, *sim.Reply) {
	size := c.s.pageSize
	if v := c.f.Get("MaxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return nil, "", ec2Bad("InvalidParameterValue", "Value ( %s ) for parameter maxResults is invalid. Parameter must be between %d and %d.", v, lo, hi)
		}
		size = n
	}
	p, next, err := sim.Page(items, key, c.f.Get("NextToken"), size)
	if err != nil {
		return nil, "", ec2Bad("InvalidParameterValue", "The token '%s' is invalid.", c.f.Get("NextToken"))
	}
	return p, next, nil
}

// subnetXML is a Subnet as DescribeSubnets answers it.
type subnetXML struct {
	SubnetID         string `xml:"subnetId"`
	SubnetArn        string `xml:"subnetArn"`
	State            string `xml:"state"`
	VpcID            string `xml:"vpcId"`
	OwnerID          string `xml:"ownerId"`
	CidrBlock        string `xml:"cidrBlock"`
	AvailableIPs     int    `xml:"availableIpAddressCount"`
	AvailabilityZone string `xml:"availabilityZone"`
	ZoneID           string `xml:"availabilityZoneId"`
	DefaultForAz     bool   `xml:"defaultForAz"`
	MapPublicIP      bool   `xml:"mapPublicIpOnLaunch"`
}

// subnets returns the region's subnets (its clusters'), by id.
func (s *Server) subnets(region string) []subnetXML {
	var out []subnetXML
	for _, c := range s.clusters {
		if c.region != region {
			continue
		}
		for id, z := range c.subnets {
			out = append(out, subnetXML{SubnetID: id, SubnetArn: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", region, c.account, id),
				State: "available", VpcID: "vpc-0123456789abcdef0", OwnerID: c.account, AvailableIPs: 4091,
				CidrBlock: fmt.Sprintf("10.0.%d.0/20", 16*(int(z[len(z)-1]-'a')%16)), AvailabilityZone: z, ZoneID: zoneIDOf(region, z)})
		}
	}
	slices.SortFunc(out, func(a, b subnetXML) int { return strings.Compare(a.SubnetID, b.SubnetID) })
	return slices.CompactFunc(out, func(a, b subnetXML) bool { return a.SubnetID == b.SubnetID })
}

// describeSubnets answers the subnets SubnetId.N names (each must
// exist) or all of the region's, through the filters subnet-id,
// availability-zone and vpc-id; MaxResults 5-1000.
func (c *ec2Call) describeSubnets() *sim.Reply {
	all := c.s.subnets(c.region)
	var out []subnetXML
	ids := c.f.list("SubnetId")
	for _, id := range ids {
		i := slices.IndexFunc(all, func(s subnetXML) bool { return s.SubnetID == id })
		if i < 0 {
			return ec2Bad("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
		}
		out = append(out, all[i])
	}
	if len(ids) == 0 {
		out = all
	}
	fs, rep := c.ec2Filters("subnet-id", "availability-zone", "vpc-id")
	if rep != nil {
		return rep
	}
	out = slices.DeleteFunc(out, func(s subnetXML) bool {
		return !match(fs, func(n string) string {
			return map[string]string{"subnet-id": s.SubnetID, "availability-zone": s.AvailabilityZone, "vpc-id": s.VpcID}[n]
		})
	})
	p, next, rep := page(c, out, func(s subnetXML) string { return s.SubnetID }, 5, 1000)
	if rep != nil {
		return rep
	}
	return ec2Reply(struct {
		XMLName   xml.Name    `xml:"DescribeSubnetsResponse"`
		NS        string      `xml:"xmlns,attr"`
		RequestID string      `xml:"requestId"`
		Subnets   []subnetXML `xml:"subnetSet>item"`
		NextToken string      `xml:"nextToken,omitempty"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Subnets: p, NextToken: next})
}

// offeringXML is an InstanceTypeOffering.
type offeringXML struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

// describeInstanceTypeOfferings answers the instance types offered in the
// region (LocationType region, the default), or in each zone
// (availability-zone, availability-zone-id), through the filters
// instance-type and location; MaxResults 5-1000.
func (c *ec2Call) describeInstanceTypeOfferings() *sim.Reply {
	lt := c.f.Get("LocationType")
	if lt == "" {
		lt = "region"
	}
	if !slices.Contains([]string{"region", "availability-zone", "availability-zone-id"}, lt) {
		return ec2Bad("InvalidParameterValue", "The location type '%s' is invalid (kpool cloudsim emulates region, availability-zone and availability-zone-id).", lt)
	}
	fs, rep := c.ec2Filters("instance-type", "location")
	if rep != nil {
		return rep
	}
	var out []offeringXML
	r := regions[c.region]
	seen := map[string]bool{}
	for _, o := range r.offerings(c.region) {
		x := offeringXML{InstanceType: o.instanceType, LocationType: lt, Location: map[string]string{"region": c.region, "availability-zone": o.zone, "availability-zone-id": o.zoneID}[lt]}
		if seen[x.Location+"/"+x.InstanceType] || !match(fs, func(n string) string {
			return map[string]string{"instance-type": x.InstanceType, "location": x.Location}[n]
		}) {
			continue
		}
		seen[x.Location+"/"+x.InstanceType] = true
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b offeringXML) int {
		return strings.Compare(a.Location+"/"+a.InstanceType, b.Location+"/"+b.InstanceType)
	})
	p, next, rep := page(c, out, func(o offeringXML) string { return o.Location + "/" + o.InstanceType }, 5, 1000)
	if rep != nil {
		return rep
	}
	return ec2Reply(struct {
		XMLName   xml.Name      `xml:"DescribeInstanceTypeOfferingsResponse"`
		NS        string        `xml:"xmlns,attr"`
		RequestID string        `xml:"requestId"`
		Offerings []offeringXML `xml:"instanceTypeOfferingSet>item"`
		NextToken string        `xml:"nextToken,omitempty"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Offerings: p, NextToken: next})
}

// instanceTypeXML is an InstanceTypeInfo: what kpool cloudsim emulates
// of it.
type instanceTypeXML struct {
	InstanceType      string `xml:"instanceType"`
	CurrentGeneration bool   `xml:"currentGeneration"`
	VCPU              struct {
		DefaultVCpus int `xml:"defaultVCpus"`
	} `xml:"vCpuInfo"`
	Memory struct {
		SizeInMiB int `xml:"sizeInMiB"`
	} `xml:"memoryInfo"`
	GPU           *gpuInfoXML `xml:"gpuInfo,omitempty"`
	Architectures []string    `xml:"processorInfo>supportedArchitectures>item"`
	UsageClasses  []string    `xml:"supportedUsageClasses>item"`
}

type gpuInfoXML struct {
	GPUs []struct {
		Name         string `xml:"name"`
		Manufacturer string `xml:"manufacturer"`
		Count        int    `xml:"count"`
		SizeInMiB    int    `xml:"memoryInfo>sizeInMiB"`
	} `xml:"gpus>item"`
	TotalMiB int `xml:"totalGpuMemoryInMiB"`
}

func (s instanceSpec) xml() instanceTypeXML {
	x := instanceTypeXML{InstanceType: s.name, CurrentGeneration: !strings.HasPrefix(s.name, "m4.") && !strings.HasPrefix(s.name, "p3."),
		Architectures: []string{s.arch}, UsageClasses: []string{"on-demand", "spot"}}
	x.VCPU.DefaultVCpus, x.Memory.SizeInMiB = s.vcpus, s.memoryMiB
	if s.noSpot {
		x.UsageClasses = []string{"on-demand"}
	}
	if s.gpus > 0 {
		x.GPU = &gpuInfoXML{TotalMiB: s.gpus * s.gpuMiB}
		x.GPU.GPUs = append(x.GPU.GPUs, struct {
			Name         string `xml:"name"`
			Manufacturer string `xml:"manufacturer"`
			Count        int    `xml:"count"`
			SizeInMiB    int    `xml:"memoryInfo>sizeInMiB"`
		}{Name: s.gpuName, Manufacturer: "NVIDIA", Count: s.gpus, SizeInMiB: s.gpuMiB})
	}
	return x
}

// describeInstanceTypes answers the instance types InstanceType.N names
// (each must be offered in the region) or all the region offers, through
// the filter instance-type; MaxResults 5-100.
func (c *ec2Call) describeInstanceTypes() *sim.Reply {
	r := regions[c.region]
	var out []instanceTypeXML
	names := c.f.list("InstanceType")
	var missing []string
	for _, n := range names {
		if _, ok := r.offers[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return ec2Bad("InvalidInstanceType", "The following supplied instance types do not exist: [%s]", strings.Join(missing, ", "))
	}
	fs, rep := c.ec2Filters("instance-type")
	if rep != nil {
		return rep
	}
	for _, s := range instanceSpecs {
		if _, ok := r.offers[s.name]; !ok || (len(names) > 0 && !slices.Contains(names, s.name)) ||
			!match(fs, func(string) string { return s.name }) {
			continue
		}
		out = append(out, s.xml())
	}
	slices.SortFunc(out, func(a, b instanceTypeXML) int { return strings.Compare(a.InstanceType, b.InstanceType) })
	p, next, rep := page(c, out, func(t instanceTypeXML) string { return t.InstanceType }, 5, 100)
	if rep != nil {
		return rep
	}
	return ec2Reply(struct {
		XMLName   xml.Name          `xml:"DescribeInstanceTypesResponse"`
		NS        string            `xml:"xmlns,attr"`
		RequestID string            `xml:"requestId"`
		Types     []instanceTypeXML `xml:"instanceTypeSet>item"`
		NextToken string            `xml:"nextToken,omitempty"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Types: p, NextToken: next})
}

// unauthorized is EC2's answer to an action the caller's policy does not
// allow (the EC2 API Reference, "Common client error codes":
// UnauthorizedOperation, 403).
func unauthorized(action string) *sim.Reply {
	return ec2Fail(http.StatusForbidden, "UnauthorizedOperation",
		"You are not authorized to perform this operation. User is not authorized to perform: ec2:%s because no identity-based policy allows the ec2:%s action", action, action)
}
