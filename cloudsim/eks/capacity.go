package eks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// codeLaunchFailures is the health issue of a node group whose Auto
// Scaling group cannot launch its instances (NodegroupIssueCode
// AsgInstanceLaunchFailures: "Your Auto Scaling group is experiencing
// failures while attempting to launch instances", EKS API Reference,
// Issue).
const codeLaunchFailures = "AsgInstanceLaunchFailures"

// shortfall is the last launch an Auto Scaling group could not make for
// want of EC2 capacity: the zone it tried first and the instance type it
// asked for there.
type shortfall struct{ zone, instanceType string }

// spot reports whether g launches Spot Instances (capacityType SPOT).
func (g *nodegroup) spot() bool { return g.ng.CapacityType == "SPOT" }

// offering is where EC2 counts an instance of g's: its zone, its
// instance type, Spot or On-Demand.
func (g *nodegroup) offering(zone, instanceType string) sim.Offering {
	return sim.Offering{Zone: zone, MachineType: instanceType, Spot: g.spot()}
}

// placement is where an instance will launch: its zone and type, whose
// capacity is already taken.
type placement struct{ zone, instanceType string }

// reserve takes EC2's capacity for n more instances when an operation
// starts (the Auto Scaling group launches at once; the operation's time is
// the nodes joining), so that capacity changed later does not change what
// it got; the shortfall, if any, is recorded.
func (g *nodegroup) reserve(n int) {
	for range n {
		p, ok := g.place()
		if !ok {
			return
		}
		g.planned = append(g.planned, p)
	}
}

// place takes the capacity of one instance where EC2 has it: the zone
// with the fewest instances first, then the others ("if the launch fails
// in one Availability Zone, Amazon EC2 Auto Scaling tries another": the
// EC2 Auto Scaling user guide, auto-scaling-benefits.html), in each the
// node group's instance types in order (mng-types: On-Demand takes them
// in the order given). False, with the shortfall recorded, when no zone
// has any.
func (g *nodegroup) place() (placement, bool) {
	zs := g.byFewest()
	for _, z := range zs {
		for _, t := range g.ng.InstanceTypes {
			if g.cluster.capacity.Take(g.offering(z, t), 1) == 1 {
				return placement{zone: z, instanceType: t}, true
			}
		}
	}
	g.short = &shortfall{zone: zs[0], instanceType: first(g.ng.InstanceTypes)}
	return placement{}, false
}

// launch launches one instance on l: the next one its operation reserved,
// or, with no operation running (the Auto Scaling group retrying), one
// placed now. False when there is none to launch.
func (g *nodegroup) launch(l launch) bool {
	if len(g.planned) > 0 {
		p := g.planned[0]
		g.planned = g.planned[1:]
		g.launchInstance(p.zone, p.instanceType, l)
		return true
	}
	if g.op != nil {
		return false
	}
	p, ok := g.place()
	if ok {
		g.launchInstance(p.zone, p.instanceType, l)
	}
	return ok
}

// unplan gives back the capacity an operation reserved but did not
// launch (it failed half way).
func (g *nodegroup) unplan() {
	for _, p := range g.planned {
		g.cluster.capacity.Release(g.offering(p.zone, p.instanceType), 1)
	}
	g.planned = nil
}

// release gives an instance's capacity back to EC2 when it is terminated.
func (g *nodegroup) release(in *instance) {
	g.cluster.capacity.Release(g.offering(in.zone, in.instanceType), 1)
}

// byFewest are g's zones, the one with the fewest instances first (subnet
// order on a tie): the order the Auto Scaling group launches in, as it
// keeps its zones balanced.
func (g *nodegroup) byFewest() []string {
	zs := g.zones()
	if len(zs) == 0 {
		zs = []string{g.cluster.region + "a"}
	}
	count := map[string]int{}
	for _, in := range g.instances {
		count[in.zone]++
	}
	for _, p := range g.planned {
		count[p.zone]++
	}
	slices.SortStableFunc(zs, func(a, b string) int { return count[a] - count[b] })
	return zs
}

// shortIssue is the health issue of a node group short of capacity, in
// the words of the Auto Scaling group's failed launch, which EKS repeats:
// "Could not launch On-Demand Instances. InsufficientInstanceCapacity - We
// currently do not have sufficient p2.xlarge capacity in the Availability
// Zone you requested (us-west-2b). Our system will be working on
// provisioning additional capacity. You can currently get p2.xlarge
// capacity by not specifying an Availability Zone in your request or
// choosing us-west-2a, us-west-2c. Launching EC2 instance failed."
// (eksctl-io/eksctl#4732, kubernetes/autoscaler#4811), for Spot "Could
// not launch Spot Instances. InsufficientInstanceCapacity - There is no
// Spot capacity available that matches your request. Launching EC2
// instance failed." (cortexlabs/cortex#1258); its resource the Auto
// Scaling group.
func (g *nodegroup) shortIssue() issue {
	s := g.short
	msg := "Could not launch Spot Instances. InsufficientInstanceCapacity - There is no Spot capacity available that matches your request. Launching EC2 instance failed."
	if !g.spot() {
		msg = fmt.Sprintf("Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity.",
			s.instanceType, s.zone)
		if others := g.cluster.zonesWith(g.offering(s.zone, s.instanceType)); len(others) > 0 {
			msg += fmt.Sprintf(" You can currently get %s capacity by not specifying an Availability Zone in your request or choosing %s.", s.instanceType, strings.Join(others, ", "))
		}
		msg += " Launching EC2 instance failed."
	}
	return issue{Code: codeLaunchFailures, Message: msg, ResourceIDs: []string{g.asgName()}}
}

// zonesWith are the zones of c's region, other than o's, that offer o's
// instance type and have capacity for one more.
func (c *cluster) zonesWith(o sim.Offering) []string {
	zones, _ := zonesOf(c.region, o.MachineType)
	var out []string
	for _, z := range zones {
		other := o
		other.Zone = z
		if n, limited := c.capacity.Available(other); z != o.Zone && (!limited || n > 0) {
			out = append(out, z)
		}
	}
	return out
}

// asgName is the node group's Auto Scaling group, as EKS names it
// (eks-<node group>-<id>: eksctl-io/eksctl#4732).
func (g *nodegroup) asgName() string {
	return "eks-" + g.name + "-" + g.ng.NodegroupArn[len(g.ng.NodegroupArn)-8:]
}

// shortOf ends an operation that could not launch all its instances (the
// node group has fewer than the operation's To, and a launch failed for
// capacity): a create is CREATE_FAILED with what it got (EKS fails a
// create whose instances it cannot all launch, even where other zones gave
// some: aws/containers-roadmap#2204), an update DEGRADED with its error,
// its Auto Scaling group still asking for the desired size (Tick keeps
// launching). False when nothing was short.
func shortOf(o *sim.Operation, g *nodegroup, u *update) bool {
	if g.short == nil || len(g.instances) >= o.To || o.Kind == statusDeleting {
		return false
	}
	is := g.shortIssue()
	g.ng.Health.Issues = []issue{is}
	g.healAt = time.Time{}
	if o.Kind == statusCreating {
		g.ng.Status, g.ready = statusCreateFailed, len(g.instances)
		return true
	}
	g.ng.Status = statusDegraded
	if u != nil {
		// The update's error repeats the node group's issue; the model's
		// ErrorCode enum lists no launch failure code of its own.
		u.short, u.errors = true, []errorDetail{{ErrorCode: is.Code, ErrorMessage: is.Message, ResourceIDs: is.ResourceIDs}}
	}
	return true
}

// retryLaunches is a DEGRADED node group's Auto Scaling group trying
// again to reach its desired size (after a capacity shortfall, or once an
// injected failure's heal time has come): it launches what capacity
// allows, and the node group is ACTIVE once it has them all; while still
// short, its issue says why.
func (g *nodegroup) retryLaunches(now time.Time) {
	g.advance(now)
	if len(g.instances) >= g.ready {
		g.ng.Status, g.ng.Health.Issues, g.short = statusActive, nil, nil
		return
	}
	if g.short != nil {
		g.ng.Health.Issues = []issue{g.shortIssue()}
	}
}
