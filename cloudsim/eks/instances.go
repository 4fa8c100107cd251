package eks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// launch is what an instance of a node group is launched with: the
// Kubernetes and AMI release versions and the launch template version
// (the Auto Scaling group's launch template version, which an update's
// setup phase moves to the target: EKS user guide,
// managed-node-update-behavior.html).
type launch struct{ version, release, template string }

// instance is one EC2 instance of a node group's Auto Scaling group, as
// its node registers with the cluster.
type instance struct {
	id, name, zone, ip string
	instanceType       string
	launch             launch
}

// launchOf is what a node group launches its instances with now.
func launchOf(ng *Nodegroup) launch {
	l := launch{version: ng.Version, release: ng.ReleaseVersion}
	if ng.LaunchTemplate != nil {
		l.template = ptr.Deref(ng.LaunchTemplate.Version, "")
	}
	return l
}

// rolling is the version update (UpdateNodegroupVersion) running on g, if
// any, and what it launches with: its params' Version, ReleaseVersion and
// LaunchTemplateVersion over the node group's own.
func (g *nodegroup) rolling() (*update, launch, bool) {
	u := g.running()
	if u == nil || u.typ != typeVersion {
		return nil, launch{}, false
	}
	to := launchOf(&g.ng)
	for _, p := range u.params {
		switch p.Type {
		case "Version":
			to.version = p.Value
		case "ReleaseVersion":
			to.release = p.Value
		case "LaunchTemplateVersion":
			to.template = p.Value
		}
	}
	return u, to, true
}

// running is the update whose operation runs on g now (nil: none, or a
// create or delete).
func (g *nodegroup) running() *update {
	if g.op == nil || len(g.updates) == 0 {
		return nil
	}
	if u := g.cluster.updates[g.updates[len(g.updates)-1]]; u != nil && u.op == g.op {
		return u
	}
	return nil
}

// batch is how many nodes a version update replaces at once: the node
// group's maxUnavailable, or maxUnavailablePercentage of n (at least one);
// EKS's default is one node (managed-node-update-behavior.html, setup
// phase).
func (g *nodegroup) batch(n int) int {
	uc := g.ng.UpdateConfig
	b := int(ptr.Deref(uc.MaxUnavailable, 1))
	if p := uc.MaxUnavailablePercentage; p != nil {
		b = n * int(*p) / 100
	}
	return max(b, 1)
}

// replaced is how many of n nodes a version update has replaced at t: the
// operation's time split evenly among its batches, a batch done at the end
// of its share ("it randomly selects a node … up to the maximum
// unavailable", drains, and terminates it: the upgrade phase). A failed
// update leaves at least one node on the old version.
func replaced(o *sim.Operation, n, batch int, t time.Time) int {
	if n == 0 {
		return 0
	}
	batches := (n + batch - 1) / batch
	done := batches
	if span := o.End.Sub(o.Start); t.Before(o.End) && span > 0 {
		done = int(int64(batches) * int64(max(t.Sub(o.Start), 0)) / int64(span))
	}
	r := min(n, done*batch)
	if o.Fails && !o.Running() {
		r = min(r, n-1)
	}
	return r
}

// zones are the zones of g's subnets, in the node group's subnet order.
func (g *nodegroup) zones() []string {
	var out []string
	for _, id := range g.ng.Subnets {
		if z := g.cluster.subnets[id]; z != "" && !slices.Contains(out, z) {
			out = append(out, z)
		}
	}
	return out
}

// victim is the instance a scale-in terminates: from the zone with the
// most instances, one not on the current launch if there is one (the
// default termination policy: the zone first, then "the oldest launch
// template"), the newest of those (the policy's last, random, step made
// deterministic).
func (g *nodegroup) victim(target launch) int {
	per := map[string]int{}
	most := 0
	for _, in := range g.instances {
		per[in.zone]++
		most = max(most, per[in.zone])
	}
	pick := -1
	for i, in := range g.instances {
		if per[in.zone] == most && (pick < 0 || in.launch != target || g.instances[pick].launch == target) {
			pick = i
		}
	}
	return pick
}

// launchInstance adds an instance in zone with l; its name is its private
// DNS name, ip-10-0-X-Y.<region>.compute.internal (ec2.internal in
// us-east-1: the EC2 user guide, ec2-instance-naming.html), from an address
// of the zone's own range (40 /24s a zone: 10,000 addresses, reused only
// after as many launches in the zone), its id i- and 17 hex digits.
func (g *nodegroup) launchInstance(zone, instanceType string, l launch) {
	c := g.cluster
	c.launched++
	if c.inZone == nil {
		c.inZone = map[string]int{}
	}
	k := c.inZone[zone]
	c.inZone[zone]++
	zi := max(slices.Index(c.sortedZones(), zone), 0) % 6
	x, y := zi*40+(k/250)%40, k%250+4
	domain := c.region + ".compute.internal"
	if c.region == "us-east-1" {
		domain = "ec2.internal"
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", c.region, c.name, c.launched))
	g.instances = append(g.instances, &instance{id: "i-" + hex.EncodeToString(sum[:])[:17], zone: zone, ip: fmt.Sprintf("10.0.%d.%d", x, y),
		name: fmt.Sprintf("ip-10-0-%d-%d.%s", x, y, domain), instanceType: instanceType, launch: l})
}

// sortedZones are the zones of the cluster's subnets, by name.
func (c *cluster) sortedZones() []string {
	var out []string
	for _, z := range c.subnets {
		if !slices.Contains(out, z) {
			out = append(out, z)
		}
	}
	slices.Sort(out)
	return out
}

// advance brings g's instances to what EKS has at now: as many as the
// node group has nodes, new ones on its launch, and, while a version
// update runs (and when it ends), the old ones replaced in their own
// zones ("the upgraded nodes are launched in the same Availability Zone as
// those that are being upgraded": the scale-up phase).
func (g *nodegroup) advance(now time.Time) {
	target := launchOf(&g.ng)
	if u, to, ok := g.rolling(); ok && (g.roll == nil || g.roll.u != u) {
		// The nodes the update found are on the node group's launch,
		// however long ago they were last brought up to the clock.
		for len(g.instances) < u.op.From && g.launch(target) {
		}
		g.roll = &roll{u: u, n: len(g.instances), to: to}
	}
	if r := g.roll; r != nil {
		g.replace(r, now)
		if r.u.op.Running() {
			target = r.to
		} else {
			g.roll = nil
		}
	}
	want := g.readyAt(now)
	// Each launch takes EC2 capacity (launch); a shortfall leaves the
	// node group short until capacity comes back. Each termination gives
	// its capacity back.
	for len(g.instances) < want && g.launch(target) {
	}
	for len(g.instances) > want {
		i := g.victim(target)
		g.release(g.instances[i])
		g.instances = slices.Delete(g.instances, i, i+1)
	}
}

// roll is a version update being applied to g's instances: how many there
// were when it started and the launch it moves them to.
type roll struct {
	u  *update
	n  int
	to launch
}

// replace replaces old instances (oldest first, each by a new one in its
// zone) until as many as the update has reached at now are on its launch.
func (g *nodegroup) replace(r *roll, now time.Time) {
	want := replaced(r.u.op, r.n, g.batch(r.n), now)
	done := 0
	for _, in := range g.instances {
		if in.launch == r.to {
			done++
		}
	}
	for i := 0; i < len(g.instances) && done < want; {
		in := g.instances[i]
		if in.launch == r.to {
			i++
			continue
		}
		// The new instance is of the old one's offering (zone, type,
		// capacity type): its capacity passes from one to the other.
		g.instances = slices.Delete(g.instances, i, i+1)
		g.launchInstance(in.zone, in.instanceType, r.to)
		done++
	}
}
