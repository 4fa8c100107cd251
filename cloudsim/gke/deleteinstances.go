package gke

import (
	"fmt"
	"slices"
	"strings"
	"time"

	compute "google.golang.org/api/compute/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// maxDeleteInstances is the most instances one deleteInstances names
// (compute: "You can specify a maximum of 1000 instances with this method
// per request").
const maxDeleteInstances = 1000

// keptComputeOps is how many of Compute Engine's operations stay found by
// zoneOperations.get; older ones are forgotten.
const keptComputeOps = 10000

// deleteInstances answers Compute Engine's
// instanceGroupManagers.deleteInstances on a node pool's group in a zone
// (compute: POST …/zones/Z/instanceGroupManagers/G/deleteInstances): the
// named instances leave the group, and its targetSize drops by as many;
// the answer is a zonal Operation, DONE ("marked as DONE when the action
// is scheduled"). An instance that is not the group's (or named twice)
// fails the request unless skipInstancesOnValidationError, which skips
// it; a malformed URL or another zone's instance always does.
func (s *Server) deleteInstances(req *sim.Request) *sim.Reply {
	project, zone, name := req.HTTP.PathValue("project"), req.HTTP.PathValue("zone"), req.HTTP.PathValue("group")
	p, rep := s.groupOf(project, zone, name)
	if rep != nil {
		return rep
	}
	var body compute.InstanceGroupManagersDeleteInstancesRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	switch {
	case len(body.Instances) == 0:
		return invalid("instances", "Required field 'instances' not specified")
	case len(body.Instances) > maxDeleteInstances:
		return invalid("instances", "At most %d instances can be deleted in one request, got %d", maxDeleteInstances, len(body.Instances))
	case p.op != nil:
		// GKE's operation on the pool holds its groups.
		return errorReply(codeFailedPrecondition, "The resource 'projects/%s/zones/%s/instanceGroupManagers/%s' is not ready", project, zone, name)
	}
	var names []string
	for i, ref := range body.Instances {
		in, queued, rep := instanceOf(ref, project, zone, i)
		if rep != nil {
			return rep
		}
		if queued || !slices.ContainsFunc(p.insts[zone], func(x *instance) bool { return x.name == in }) || slices.Contains(names, in) {
			if body.SkipInstancesOnValidationError {
				continue
			}
			return invalid(fmt.Sprintf("instances[%d]", i), "The instance 'projects/%s/zones/%s/instances/%s' is not a member of the instance group manager '%s' or is already being deleted", project, zone, in, name)
		}
		names = append(names, in)
	}
	p.insts[zone] = slices.DeleteFunc(p.insts[zone], func(x *instance) bool { return slices.Contains(names, x.name) })
	if p.removed == nil {
		p.removed = map[string]int{}
	}
	p.removed[zone] += len(names)
	p.ready -= len(names)
	p.drop(zone, len(names))
	s.syncNodes(p.cluster, req.Now)
	op := s.computeOp(req, project, zone, "compute.instanceGroupManagers.deleteInstances", req.BaseURL()+strings.TrimSuffix(req.HTTP.URL.Path, "/deleteInstances"))
	return jsonReply(200, op)
}

// instanceOf is the name of the instance a deleteInstances entry names:
// a URL (https://…/compute/v1/projects/P/zones/Z/instances/N) or a
// partial one (projects/P/zones/Z/instances/N, zones/Z/instances/N), of
// the group's project and zone; a bare name names a queued instance,
// which the emulator's groups never have (compute: "Queued instances do
// not have URL and can be deleted only by name"), so none of the group's.
func instanceOf(ref, project, zone string, i int) (name string, queued bool, rep *sim.Reply) {
	field := fmt.Sprintf("instances[%d]", i)
	path := ref
	if j := strings.Index(path, "/compute/v1/"); j >= 0 && strings.Contains(path[:j], "://") {
		path = path[j+len("/compute/v1/"):]
	}
	seg := strings.Split(path, "/")
	if len(seg) == 1 && seg[0] != "" {
		return seg[0], true, nil
	}
	if len(seg) == 6 && seg[0] == "projects" {
		if seg[1] != project {
			return "", false, invalid(field, "The instance '%s' is not in the project of the instance group manager, '%s'", ref, project)
		}
		seg = seg[2:]
	}
	if len(seg) != 4 || seg[0] != "zones" || seg[2] != "instances" || seg[3] == "" {
		return "", false, invalid(field, "Invalid value for field '%s': '%s'. The URL is malformed.", field, ref)
	}
	if seg[1] != zone {
		return "", false, invalid(field, "The instance '%s' is not in the zone of the instance group manager, '%s'", ref, zone)
	}
	return seg[3], false, nil
}

// computeOp records and returns a zonal Compute Engine Operation that is
// DONE, on targetLink.
func (s *Server) computeOp(req *sim.Request, project, zone, opType, targetLink string) *compute.Operation {
	id := req.NewID()
	name := "operation-" + id
	now := req.Now.UTC().Format(time.RFC3339Nano)
	op := &compute.Operation{Kind: "compute#operation", Name: name, OperationType: opType, Status: "DONE", Progress: 100,
		Zone: zoneURL(req, project, zone), TargetLink: targetLink, InsertTime: now, StartTime: now, EndTime: now,
		SelfLink: zoneURL(req, project, zone) + "/operations/" + name}
	key := project + "/" + zone + "/" + name
	if s.computeOps == nil {
		s.computeOps = map[string]*compute.Operation{}
	}
	s.computeOps[key] = op
	s.opOrder = append(s.opOrder, key)
	if len(s.opOrder) > keptComputeOps {
		delete(s.computeOps, s.opOrder[0])
		s.opOrder = s.opOrder[1:]
	}
	return op
}

// getZoneOperation answers Compute Engine's zoneOperations.get.
func (s *Server) getZoneOperation(req *sim.Request) *sim.Reply {
	project, zone, name := req.HTTP.PathValue("project"), req.HTTP.PathValue("zone"), req.HTTP.PathValue("operation")
	op, ok := s.computeOps[project+"/"+zone+"/"+name]
	if !ok {
		return detailed(codeNotFound, nil, "The resource 'projects/%s/zones/%s/operations/%s' was not found", project, zone, name)
	}
	return jsonReply(200, op)
}
