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

// getGroup answers Compute Engine's instanceGroupManagers.get for the
// instance group of a node pool in a zone: its target size, and its nodes
// by the action under way on them.
func (s *Server) getGroup(req *sim.Request) *sim.Reply {
	project, zone, name := req.HTTP.PathValue("project"), req.HTTP.PathValue("zone"), req.HTTP.PathValue("group")
	for _, c := range s.clusters {
		if c.project != project {
			continue
		}
		for _, p := range c.pools {
			i := slices.Index(p.np.Locations, zone)
			if i < 0 || p.group(zone) != name {
				continue
			}
			n := len(p.np.Locations)
			ready := p.readyAt(req.Now)
			here := ready / n
			if i < ready%n {
				here++
			}
			g := instanceGroupManager{Kind: "compute#instanceGroupManager", Name: name, Zone: req.BaseURL() + "/compute/v1/projects/" + project + "/zones/" + zone,
				SelfLink:         req.BaseURL() + req.HTTP.URL.Path,
				BaseInstanceName: strings.TrimSuffix(name, "-grp"), TargetSize: p.perZone,
				CurrentActions: map[string]int{"none": min(here, p.perZone), "creating": max(p.perZone-here, 0), "deleting": max(here-p.perZone, 0)},
				Status:         map[string]any{"isStable": p.op == nil}}
			return jsonReply(200, g)
		}
	}
	return detailed(codeNotFound, nil, "The resource 'projects/%s/zones/%s/instanceGroupManagers/%s' was not found", project, zone, name)
}
