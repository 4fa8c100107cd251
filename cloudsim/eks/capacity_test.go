package eks_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/sim"
)

// m5b is the on-demand m5.large offering of the demo's zone us-west-2b.
var m5b = sim.Offering{Zone: "us-west-2b", MachineType: "m5.large"}

func (e *kubeEnv) limit(o sim.Offering, n int) {
	e.emu.Do(func(time.Time) { e.emu.Capacity().Set(o, n) })
}

func (e *kubeEnv) available(t *testing.T, o sim.Offering) int {
	t.Helper()
	var n int
	e.emu.Do(func(time.Time) { n, _ = e.emu.Capacity().Available(o) })
	return n
}

// adminLimit limits an offering through the engine's admin route, as
// `kpool cloudsim capacity` does.
func (e *kubeEnv) adminLimit(t *testing.T, o sim.Offering, n int) {
	t.Helper()
	body := fmt.Sprintf(`{"zone":%q,"machineType":%q,"spot":%t,"available":%d}`, o.Zone, o.MachineType, o.Spot, n)
	resp, err := e.http.Post(e.url+sim.AdminPrefix+"capacity", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin route: %s", resp.Status)
	}
}

func (e *kubeEnv) describe(t *testing.T, name string) *types.Nodegroup {
	t.Helper()
	d, err := e.client.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return d.Nodegroup
}

// resize updates a node group's desired size and lets the update end; it
// returns the update as DescribeUpdate answers it then.
func (e *kubeEnv) resize(t *testing.T, name string, n int32) *types.Update {
	t.Helper()
	up, err := e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String(name),
		ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(n)}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	d, err := e.client.DescribeUpdate(ctx, &awseks.DescribeUpdateInput{Name: aws.String(eks.DemoCluster), NodegroupName: aws.String(name), UpdateId: up.Update.Id})
	if err != nil {
		t.Fatal(err)
	}
	return d.Update
}

// checkShort checks a node group's capacity issue: EKS's code, EC2's
// words naming the zone, the Auto Scaling group as its resource.
func checkShort(t *testing.T, ng *types.Nodegroup, status types.NodegroupStatus, zone string) {
	t.Helper()
	if ng.Status != status || ng.Health == nil || len(ng.Health.Issues) != 1 {
		t.Fatalf("status %s, health %+v; want %s with one issue", ng.Status, ng.Health, status)
	}
	is := ng.Health.Issues[0]
	want := "Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have sufficient m5.large capacity in the Availability Zone you requested (" + zone + ")."
	if is.Code != types.NodegroupIssueCodeAsgInstanceLaunchFailures || !strings.HasPrefix(aws.ToString(is.Message), want) ||
		len(is.ResourceIds) != 1 || !strings.HasPrefix(is.ResourceIds[0], "eks-"+aws.ToString(ng.NodegroupName)+"-") {
		t.Fatalf("issue %s %q %v", is.Code, aws.ToString(is.Message), is.ResourceIds)
	}
}

// TestCapacityUpdateShort: a scale-up EC2 cannot fill fails with the
// nodes it got running, the node group DEGRADED until an update asks for
// what it has (time alone does not heal it while capacity is short);
// capacity restored (by the admin route), the next scale-up gets its node;
// scale-down and delete give capacity back.
func TestCapacityUpdateShort(t *testing.T) {
	e := newKubeEnv(t)
	e.limit(m5b, 2)
	if _, err := e.client.CreateNodegroup(ctx, create("zb", func(in *awseks.CreateNodegroupInput) { in.Subnets = []string{eks.DemoSubnets["us-west-2b"]} })); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if ng := e.describe(t, "zb"); ng.Status != types.NodegroupStatusActive || len(e.nodes(t, "zb")) != 2 || e.available(t, m5b) != 0 {
		t.Fatalf("created: %s, %d nodes, %d left", ng.Status, len(e.nodes(t, "zb")), e.available(t, m5b))
	}
	u := e.resize(t, "zb", 3)
	if u.Status != types.UpdateStatusFailed || len(u.Errors) != 1 || !strings.Contains(aws.ToString(u.Errors[0].ErrorMessage), "InsufficientInstanceCapacity") {
		t.Fatalf("update: %s %+v", u.Status, u.Errors)
	}
	checkShort(t, e.describe(t, "zb"), types.NodegroupStatusDegraded, "us-west-2b")
	e.clock.Advance(24 * time.Hour)
	checkShort(t, e.describe(t, "zb"), types.NodegroupStatusDegraded, "us-west-2b")
	if st, _ := e.emu.NodegroupOf(eks.DemoRegion, eks.DemoCluster, "zb"); st.ReadyNodes != 2 || len(e.nodes(t, "zb")) != 2 {
		t.Fatalf("short: %d instances, %d nodes", st.ReadyNodes, len(e.nodes(t, "zb")))
	}
	if u := e.resize(t, "zb", 2); u.Status != types.UpdateStatusSuccessful {
		t.Fatalf("capped: %s %+v", u.Status, u.Errors)
	}
	if ng := e.describe(t, "zb"); ng.Status != types.NodegroupStatusActive || len(ng.Health.Issues) != 0 {
		t.Fatalf("capped: %s %+v", ng.Status, ng.Health.Issues)
	}
	e.adminLimit(t, m5b, 1)
	if u := e.resize(t, "zb", 3); u.Status != types.UpdateStatusSuccessful || len(e.nodes(t, "zb")) != 3 || e.available(t, m5b) != 0 {
		t.Fatalf("restored: %s, %d nodes, %d left", u.Status, len(e.nodes(t, "zb")), e.available(t, m5b))
	}
	if u := e.resize(t, "zb", 1); u.Status != types.UpdateStatusSuccessful || len(e.nodes(t, "zb")) != 1 || e.available(t, m5b) != 2 {
		t.Fatalf("scaled down: %s, %d nodes, %d left", u.Status, len(e.nodes(t, "zb")), e.available(t, m5b))
	}
	if _, err := e.client.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("zb")}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if n := e.available(t, m5b); n != 3 || len(e.nodes(t, "zb")) != 0 {
		t.Fatalf("deleted: %d left, %d nodes", n, len(e.nodes(t, "zb")))
	}
}

// TestCapacityRetry: a DEGRADED node group's Auto Scaling group keeps
// launching, and fills it once capacity is back: ACTIVE, no issue.
func TestCapacityRetry(t *testing.T) {
	e := newKubeEnv(t)
	e.limit(m5b, 1)
	if _, err := e.client.CreateNodegroup(ctx, create("zb", func(in *awseks.CreateNodegroupInput) {
		in.Subnets = []string{eks.DemoSubnets["us-west-2b"]}
		in.ScalingConfig.DesiredSize = aws.Int32(1)
	})); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if u := e.resize(t, "zb", 3); u.Status != types.UpdateStatusFailed {
		t.Fatalf("update: %s", u.Status)
	}
	e.limit(m5b, 1)
	checkShort(t, e.describe(t, "zb"), types.NodegroupStatusDegraded, "us-west-2b") // 2 of 3
	e.limit(m5b, -1)
	if ng := e.describe(t, "zb"); ng.Status != types.NodegroupStatusActive || len(ng.Health.Issues) != 0 || len(e.nodes(t, "zb")) != 3 {
		t.Fatalf("refilled: %s %+v, %d nodes", ng.Status, ng.Health.Issues, len(e.nodes(t, "zb")))
	}
}

// TestCapacityCreateShort: a create EC2 cannot fill is CREATE_FAILED with
// the instances it got running as nodes; it cannot be updated, and its
// delete gives the capacity back. Spot capacity is counted apart from
// On-Demand, and a Spot shortfall has EC2's Spot words.
func TestCapacityCreateShort(t *testing.T) {
	e := newKubeEnv(t)
	m5c := sim.Offering{Zone: "us-west-2c", MachineType: "m5.large"}
	e.adminLimit(t, m5c, 1)
	in := func(name string, spot bool) *awseks.CreateNodegroupInput {
		return create(name, func(in *awseks.CreateNodegroupInput) {
			in.Subnets = []string{eks.DemoSubnets["us-west-2c"]}
			if spot {
				in.CapacityType = types.CapacityTypesSpot
			}
		})
	}
	if _, err := e.client.CreateNodegroup(ctx, in("od", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CreateNodegroup(ctx, in("spot", true)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	ng := e.describe(t, "od")
	checkShort(t, ng, types.NodegroupStatusCreateFailed, "us-west-2c")
	if !strings.Contains(aws.ToString(ng.Health.Issues[0].Message), "choosing us-west-2a, us-west-2b, us-west-2d.") || len(e.nodes(t, "od")) != 1 {
		t.Fatalf("create: %q, %d nodes", aws.ToString(ng.Health.Issues[0].Message), len(e.nodes(t, "od")))
	}
	if ng := e.describe(t, "spot"); ng.Status != types.NodegroupStatusActive || len(e.nodes(t, "spot")) != 2 {
		t.Fatalf("spot beside an exhausted on-demand offering: %s, %d nodes", ng.Status, len(e.nodes(t, "spot")))
	}
	if _, err := e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("od"),
		ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(1)}}); err == nil {
		t.Fatal("a CREATE_FAILED node group was updated")
	}
	if _, err := e.client.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("od")}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if n := e.available(t, m5c); n != 1 {
		t.Fatalf("deleted: %d left, want 1", n)
	}
	e.limit(sim.Offering{Zone: "us-west-2c", MachineType: "m5.large", Spot: true}, 0)
	if _, err := e.client.CreateNodegroup(ctx, in("spot2", true)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	ng = e.describe(t, "spot2")
	if ng.Status != types.NodegroupStatusCreateFailed || !strings.HasPrefix(aws.ToString(ng.Health.Issues[0].Message), "Could not launch Spot Instances. InsufficientInstanceCapacity - There is no Spot capacity available") {
		t.Fatalf("spot short: %s %+v", ng.Status, ng.Health.Issues)
	}
}

// TestCapacityElsewhere: the Auto Scaling group of a node group in several
// zones launches where capacity is (another zone, then its next instance
// type), so the node group is whole and ACTIVE.
func TestCapacityElsewhere(t *testing.T) {
	e := newKubeEnv(t)
	e.limit(m5b, 0)
	e.limit(sim.Offering{Zone: "us-west-2a", MachineType: "m5.large"}, 0)
	if _, err := e.client.CreateNodegroup(ctx, create("all", func(in *awseks.CreateNodegroupInput) {
		in.Subnets = []string{eks.DemoSubnets["us-west-2a"], eks.DemoSubnets["us-west-2b"], eks.DemoSubnets["us-west-2c"]}
		in.InstanceTypes = []string{"m5.large", "m5.xlarge"}
		in.ScalingConfig.DesiredSize = aws.Int32(3)
	})); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if ng := e.describe(t, "all"); ng.Status != types.NodegroupStatusActive {
		t.Fatalf("status %s %+v", ng.Status, ng.Health.Issues)
	}
	got := map[string]int{}
	for _, n := range e.nodes(t, "all") {
		got[n.Labels["topology.kubernetes.io/zone"]+" "+n.Labels["node.kubernetes.io/instance-type"]]++
	}
	// a: m5.large none, m5.xlarge; b: none of m5.large, m5.xlarge; c: m5.large.
	if got["us-west-2a m5.xlarge"] != 1 || got["us-west-2b m5.xlarge"] != 1 || got["us-west-2c m5.large"] != 1 {
		t.Fatalf("placed: %v", got)
	}
}
