package aks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The agent-pool actions and read-only views the SDK's AgentPoolsClient
// has besides create, get, list and delete (armcontainerservice v6.6.0,
// agentpools_client.go; REST: learn.microsoft.com/rest/api/aks/agent-pools).

// accepted answers 202 for an operation started on a pool, with the
// headers ARM's long-running operations carry: Azure-AsyncOperation (the
// status) and Location (the result, which the SDK's poller reads at the
// end for these actions: FinalStateViaLocation). body is nil for none.
func (s *Server) accepted(req *request, o *sim.Operation, body any) *sim.Reply {
	rep := sim.NewReply(http.StatusAccepted)
	if body != nil {
		rep = jsonReply(http.StatusAccepted, body)
	}
	rep.Header.Set("Azure-AsyncOperation", s.operationURL(req, o, "operations"))
	rep.Header.Set("Location", s.operationURL(req, o, "operationresults"))
	return rep
}

// existingPool is writing's pool, answering 404 when there is none.
func (s *Server) existingPool(req *request) (*cluster, *pool, *sim.Reply) {
	c, p, rep := s.writing(req)
	if rep == nil && p == nil {
		rep = poolNotFound(c, req.vars["pool"])
	}
	return c, p, rep
}

// namedPool is the pool of the path (whatever its state), answering 404
// when the cluster or the pool is missing.
func (s *Server) namedPool(req *request) (*cluster, *pool, *sim.Reply) {
	c, rep := s.cluster(req, true)
	if rep != nil {
		return nil, nil, rep
	}
	p, ok := c.pools[strings.ToLower(req.vars["pool"])]
	if !ok {
		return nil, nil, poolNotFound(c, req.vars["pool"])
	}
	return c, p, nil
}

// abort (POST .../agentPools/{pool}/abort) ends the operation in progress
// on the pool: it stops where it is, its status and the pool's
// provisioningState become Canceled (learn.microsoft.com/azure/aks/manage-abort-operations).
// With nothing in progress there is nothing to abort: 204.
func (s *Server) abort(req *request) *sim.Reply {
	c, p, rep := s.namedPool(req)
	if rep != nil {
		return rep
	}
	if p.op == nil {
		return sim.NewReply(http.StatusNoContent)
	}
	infoOf(p.op).aborted = true
	n := p.op.Nodes(req.Now)
	p.op, p.state, p.etag = nil, stateCanceled, s.NewID()
	p.setReady(n)
	s.settle(p) // what the operation had not started yet is given back
	o := req.Start(kindAbort, p.ready, p.ready, 0)
	o.Data = &opInfo{subscription: c.subscription, location: c.location, pool: p}
	o.Done = s.ended
	return s.accepted(req, o, nil)
}

// upgradeNodeImage (POST .../agentPools/{pool}/upgradeNodeImageVersion)
// reimages every node with the latest node image of the pool's OS SKU;
// the pool is UpgradingNodeImageVersion until it is done.
func (s *Server) upgradeNodeImage(req *request) *sim.Reply {
	c, p, rep := s.existingPool(req)
	if rep != nil {
		return rep
	}
	if rep := s.quota(c, p, p.props, surgeNodes(p.props)); rep != nil {
		return rep
	}
	o := req.Start(stateNodeImage, p.ready, p.ready, p.ready)
	s.startOp(o, c, p)
	infoOf(o).newImage = nodeImage(ptr.Deref(p.props.OSSKU, armcontainerservice.OSSKUUbuntu))
	p.etag = s.NewID()
	return s.accepted(req, o, p.wire(req.version))
}

// upgradeProfile (GET .../agentPools/{pool}/upgradeProfiles/default) is
// the pool's version, the versions it can be upgraded to and its OS's
// latest node image (AgentPoolUpgradeProfile).
func (s *Server) upgradeProfile(req *request) *sim.Reply {
	c, p, rep := s.namedPool(req)
	if rep != nil {
		return rep
	}
	cur := ptr.Deref(p.props.CurrentOrchestratorVersion, c.version)
	out := armcontainerservice.AgentPoolUpgradeProfile{
		ID: ptr.To(p.id() + "/upgradeProfiles/default"), Name: ptr.To("default"),
		Type: ptr.To(poolType + "/upgradeProfiles"),
		Properties: &armcontainerservice.AgentPoolUpgradeProfileProperties{
			KubernetesVersion: ptr.To(cur), OSType: ptr.To(orDefault(p.props.OSType, armcontainerservice.OSTypeLinux)),
			LatestNodeImageVersion: ptr.To(nodeImage(ptr.Deref(p.props.OSSKU, armcontainerservice.OSSKUUbuntu))),
			Upgrades:               []*armcontainerservice.AgentPoolUpgradeProfilePropertiesUpgradesItem{},
		},
	}
	for _, v := range availableVersions(c) {
		if compareVersions(v, cur) > 0 {
			out.Properties.Upgrades = append(out.Properties.Upgrades,
				&armcontainerservice.AgentPoolUpgradeProfilePropertiesUpgradesItem{KubernetesVersion: ptr.To(v), IsPreview: ptr.To(false)})
		}
	}
	return jsonReply(http.StatusOK, out)
}

// availablePoolVersions (GET .../managedClusters/{cluster}/availableAgentPoolVersions)
// lists the versions an agent pool of the cluster may run, the cluster's
// marked default (AgentPoolAvailableVersions).
func (s *Server) availablePoolVersions(req *request) *sim.Reply {
	c, rep := s.cluster(req, false)
	if rep != nil {
		return rep
	}
	out := armcontainerservice.AgentPoolAvailableVersions{
		ID: ptr.To(c.id() + "/availableagentpoolversions"), Name: ptr.To("default"),
		Type:       ptr.To("Microsoft.ContainerService/managedClusters/availableAgentpoolVersions"),
		Properties: &armcontainerservice.AgentPoolAvailableVersionsProperties{},
	}
	for _, v := range availableVersions(c) {
		item := &armcontainerservice.AgentPoolAvailableVersionsPropertiesAgentPoolVersionsItem{KubernetesVersion: ptr.To(v), IsPreview: ptr.To(false)}
		if v == c.version {
			item.Default = ptr.To(true)
		}
		out.Properties.AgentPoolVersions = append(out.Properties.AgentPoolVersions, item)
	}
	return jsonReply(http.StatusOK, out)
}

// availableVersions are the versions an agent pool of c may run: the
// control plane's, and the first patch of each of the two minors before
// it (resolveVersion's rule), oldest first.
func availableVersions(c *cluster) []string {
	cv, ok := parseVersion(c.version)
	if !ok {
		return []string{c.version}
	}
	var out []string
	for m := int(cv.Minor()) - 2; m < int(cv.Minor()); m++ {
		if m >= 0 {
			out = append(out, fmt.Sprintf("%d.%d.0", cv.Major(), m))
		}
	}
	return append(out, c.version)
}
