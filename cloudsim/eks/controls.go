package eks

import (
	"encoding/base64"
	"fmt"
	"maps"
	"time"

	"k8s.io/utils/ptr"
)

// NodegroupState is a node group as DescribeNodegroup returns it now, plus
// what only the emulator knows.
type NodegroupState struct {
	Nodegroup
	// ReadyNodes is the number of nodes (EC2 instances) that exist now: it
	// moves one node at a time towards desiredSize while an operation
	// runs, and stays below it while EC2 lacks the capacity.
	ReadyNodes int
	// Operation is the status of the operation in progress (CREATING,
	// UPDATING, DELETING); "" when idle.
	Operation string
}

// NodegroupOf returns a copy of a node group as EKS would describe it now;
// false if there is none.
func (s *Server) NodegroupOf(region, clusterName, name string) (st NodegroupState, found bool) {
	s.Do(func(now time.Time) {
		g, err := s.nodegroupOf(region, clusterName, name)
		if err != nil {
			return
		}
		g.heal(now)
		g.advance(now)
		st, found = NodegroupState{Nodegroup: g.view(), ReadyNodes: len(g.instances)}, true
		if g.op != nil {
			st.Operation = g.op.Kind
		}
	})
	return st, found
}

// Mutate changes a node group behind the client's back, as someone using
// the console would: fn may change anything of it, its status included.
func (s *Server) Mutate(region, clusterName, name string, fn func(*Nodegroup)) (err error) {
	s.Do(func(now time.Time) {
		var g *nodegroup
		if g, err = s.nodegroupOf(region, clusterName, name); err != nil {
			return
		}
		v := g.view()
		fn(&v)
		g.ng = v
		g.ng.ModifiedAt = epoch(now)
		if g.op == nil {
			g.ready = int(ptr.Deref(v.ScalingConfig.DesiredSize, 0))
		}
		s.syncKube(now)
	})
	return err
}

// nodegroupOf finds a node group for the emulator's own methods, under the
// engine's lock (Do).
func (s *Server) nodegroupOf(region, clusterName, name string) (*nodegroup, error) {
	c, ok := s.clusters[clusterKey(region, clusterName)]
	if !ok {
		return nil, fmt.Errorf("eks: no cluster %s in %s", clusterName, region)
	}
	if g, ok := c.nodegroups[name]; ok {
		return g, nil
	}
	return nil, fmt.Errorf("eks: no node group %s in cluster %s", name, clusterName)
}

// LaunchTemplateState is an EC2 launch template as the emulator holds it:
// its latest version's user data (decoded) and root volume.
type LaunchTemplateState struct {
	ID, Name                 string
	DefaultVersion, Versions int
	UserData                 string
	DeviceName, VolumeType   string
	VolumeSize               int
	Tags                     map[string]string
}

// LaunchTemplateOf returns a region's launch template by name; false if
// there is none.
func (s *Server) LaunchTemplateOf(region, name string) (st LaunchTemplateState, found bool) {
	s.Do(func(time.Time) {
		t, ok := s.templates[region+"/"+name]
		if !ok {
			return
		}
		v := t.versions[len(t.versions)-1]
		raw, _ := base64.StdEncoding.DecodeString(v.userData)
		st = LaunchTemplateState{ID: t.id, Name: t.name, DefaultVersion: t.defaultVersion, Versions: len(t.versions),
			UserData: string(raw), Tags: maps.Clone(t.tags)}
		if len(v.devices) > 0 {
			st.DeviceName = v.devices[0].DeviceName
			if e := v.devices[0].EBS; e != nil {
				st.VolumeType, st.VolumeSize = e.VolumeType, e.VolumeSize
			}
		}
		found = true
	})
	return st, found
}

// Deny makes EC2 answer an action (DescribeInstanceTypes, say) 403
// UnauthorizedOperation, as it does a caller whose IAM policy does not
// allow it; Deny(action, false) allows it again.
func (s *Server) Deny(action string, deny bool) {
	s.Do(func(time.Time) { s.denied[action] = deny })
}
