package eks

import (
	"encoding/xml"
	"maps"
	"slices"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// instanceXML is an Instance as DescribeInstances answers it: what kpool
// cloudsim emulates of it (the EC2 model's Instance: instanceId,
// instanceType, placement, instanceState, privateDnsName,
// privateIpAddress, tagSet).
type instanceXML struct {
	InstanceID   string `xml:"instanceId"`
	InstanceType string `xml:"instanceType"`
	Zone         string `xml:"placement>availabilityZone"`
	StateCode    int    `xml:"instanceState>code"`
	StateName    string `xml:"instanceState>name"`
	PrivateDNS   string `xml:"privateDnsName"`
	PrivateIP    string `xml:"privateIpAddress"`
	Tags         []struct {
		Key   string `xml:"key"`
		Value string `xml:"value"`
	} `xml:"tagSet>item"`
}

// reservationXML is a Reservation: one a launch (the emulator puts each
// instance in its own).
type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

// instanceTags are the tags EKS's Auto Scaling group gives the instances
// it launches for a managed node group: eks:cluster-name and
// eks:nodegroup-name (the tags EKS puts on a node group's Auto Scaling
// group, propagated at launch: the AWSServiceRoleForAmazonEKSNodegroup
// policy's conditions on them), aws:autoscaling:groupName (EC2 Auto
// Scaling's own), and kubernetes.io/cluster/<name> owned.
func (g *nodegroup) instanceTags() map[string]string {
	return map[string]string{"eks:cluster-name": g.cluster.name, "eks:nodegroup-name": g.name,
		"aws:autoscaling:groupName": g.asgName(), "kubernetes.io/cluster/" + g.cluster.name: "owned"}
}

// describeInstances lists the region's node group instances (running:
// state 16), through the filters instance-id, instance-type,
// availability-zone, instance-state-name and the tags above
// (tag:eks:nodegroup-name…); MaxResults 5-1000, one reservation each.
func (c *ec2Call) describeInstances() *sim.Reply {
	allowed := []string{"instance-id", "instance-type", "availability-zone", "instance-state-name",
		"tag:eks:cluster-name", "tag:eks:nodegroup-name", "tag:aws:autoscaling:groupName"}
	fs, rep := c.ec2Filters(allowed...)
	if rep != nil {
		return rep
	}
	ids := c.f.list("InstanceId")
	var out []reservationXML
	for _, cl := range c.s.clusters {
		if cl.region != c.region {
			continue
		}
		for _, g := range cl.sortedNodegroups() {
			tags := g.instanceTags()
			for _, in := range g.instances {
				x := instanceXML{InstanceID: in.id, InstanceType: in.instanceType, Zone: in.zone, StateCode: 16, StateName: "running",
					PrivateDNS: in.name, PrivateIP: in.ip}
				for _, k := range slices.Sorted(maps.Keys(tags)) {
					x.Tags = append(x.Tags, struct {
						Key   string `xml:"key"`
						Value string `xml:"value"`
					}{k, tags[k]})
				}
				if (len(ids) > 0 && !slices.Contains(ids, in.id)) || !match(fs, func(n string) string {
					if k, ok := strings.CutPrefix(n, "tag:"); ok {
						return tags[k]
					}
					return map[string]string{"instance-id": in.id, "instance-type": in.instanceType, "availability-zone": in.zone, "instance-state-name": "running"}[n]
				}) {
					continue
				}
				out = append(out, reservationXML{ReservationID: "r-" + in.id[2:], OwnerID: cl.account, Instances: []instanceXML{x}})
			}
		}
	}
	slices.SortFunc(out, func(a, b reservationXML) int { return strings.Compare(a.ReservationID, b.ReservationID) })
	p, next, rep := page(c, out, func(r reservationXML) string { return r.ReservationID }, 5, 1000)
	if rep != nil {
		return rep
	}
	return ec2Reply(struct {
		XMLName      xml.Name         `xml:"DescribeInstancesResponse"`
		NS           string           `xml:"xmlns,attr"`
		RequestID    string           `xml:"requestId"`
		Reservations []reservationXML `xml:"reservationSet>item"`
		NextToken    string           `xml:"nextToken,omitempty"`
	}{NS: ec2NS, RequestID: c.s.NewID(), Reservations: p, NextToken: next})
}
