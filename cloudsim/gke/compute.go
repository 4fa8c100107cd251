package gke

import (
	"slices"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// instanceGroupManager is the part of Compute Engine's
// InstanceGroupManager the emulator serves.
type instanceGroupManager struct {
	Kind             string         `json:"kind"`
	Name             string         `json:"name"`
	Zone             string         `json:"zone"`
	SelfLink         string         `json:"selfLink"`
	BaseInstanceName string         `json:"baseInstanceName"`
	TargetSize       int            `json:"targetSize"`
	CurrentActions   map[string]int `json:"currentActions"`
	Status           map[string]any `json:"status"`
}

// groupOf finds the node pool whose instance group in zone is named name,
// or answers Compute Engine's 404.
func (s *Server) groupOf(project, zone, name string) (*pool, *sim.Reply) {
	for _, c := range s.clusters {
		if c.project != project {
			continue
		}
		for _, p := range c.pools {
			if slices.Contains(p.np.Locations, zone) && p.group(zone) == name {
				return p, nil
			}
		}
	}
	return nil, detailed(codeNotFound, nil, "The resource 'projects/%s/zones/%s/instanceGroupManagers/%s' was not found", project, zone, name)
}

// getGroup answers Compute Engine's instanceGroupManagers.get for the
// instance group of a node pool in a zone (groupView).
func (s *Server) getGroup(req *sim.Request) *sim.Reply {
	project, zone, name := req.HTTP.PathValue("project"), req.HTTP.PathValue("zone"), req.HTTP.PathValue("group")
	p, rep := s.groupOf(project, zone, name)
	if rep != nil {
		return rep
	}
	return jsonReply(200, groupView(req, p, project, zone))
}

// groupView is the instance group of a node pool in a zone: its target
// size, and its nodes by the action under way on them (the instances the
// group holds now, which the protocol's Tick brought up to the clock).
func groupView(req *sim.Request, p *pool, project, zone string) instanceGroupManager {
	name := p.group(zone)
	here, target := len(p.insts[zone]), p.target(zone)
	return instanceGroupManager{Kind: "compute#instanceGroupManager", Name: name, Zone: zoneURL(req, project, zone),
		SelfLink:         zoneURL(req, project, zone) + "/instanceGroupManagers/" + name,
		BaseInstanceName: strings.TrimSuffix(name, "-grp"), TargetSize: target,
		CurrentActions: map[string]int{"none": min(here, target), "creating": max(target-here, 0), "deleting": max(here-target, 0)},
		Status:         map[string]any{"isStable": p.op == nil && here == target}}
}

// zoneURL is the URL of a zone, as Compute Engine's resources name it.
func zoneURL(req *sim.Request, project, zone string) string {
	return req.BaseURL() + "/compute/v1/projects/" + project + "/zones/" + zone
}
