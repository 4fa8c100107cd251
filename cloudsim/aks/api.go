package aks

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// lookup finds a cluster, answering ARM's 404s when it is missing.
// parent is true on the agent-pool paths.
func (s *Server) lookup(sub, rg, name string, parent bool) (*cluster, *sim.Reply) {
	if c, ok := s.clusters[clusterKey(sub, rg, name)]; ok {
		return c, nil
	}
	subFound, rgFound := false, false
	for _, c := range s.clusters {
		if strings.EqualFold(c.subscription, sub) {
			subFound = true
			rgFound = rgFound || strings.EqualFold(c.resourceGroup, rg)
		}
	}
	switch {
	case !subFound:
		return nil, errorReply(http.StatusNotFound, "SubscriptionNotFound", "The subscription '%s' could not be found.", sub)
	case !rgFound:
		return nil, errorReply(http.StatusNotFound, "ResourceGroupNotFound", "Resource group '%s' could not be found.", rg)
	case parent:
		return nil, errorReply(http.StatusNotFound, "ParentResourceNotFound",
			"Can not perform requested operation on nested resource. Parent resource '%s' not found.", name)
	}
	return nil, errorReply(http.StatusNotFound, "ResourceNotFound",
		"The Resource 'Microsoft.ContainerService/managedClusters/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", name, rg)
}

func poolNotFound(c *cluster, name string) *sim.Reply {
	return errorReply(http.StatusNotFound, "ResourceNotFound",
		"The Resource 'Microsoft.ContainerService/managedClusters/%s/agentPools/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix",
		c.name, name, c.resourceGroup)
}

func (s *Server) getCluster(req *request) *sim.Reply {
	c, rep := s.cluster(req, false)
	if rep != nil {
		return rep
	}
	mc := armcontainerservice.ManagedCluster{
		ID: ptr.To(c.id()), Name: ptr.To(c.name), Type: ptr.To(clusterType), Location: ptr.To(c.location),
		Properties: &armcontainerservice.ManagedClusterProperties{
			ProvisioningState:        ptr.To(stateSucceeded),
			KubernetesVersion:        ptr.To(c.version),
			CurrentKubernetesVersion: ptr.To(c.version),
			DNSPrefix:                ptr.To(c.name + "-dns"),
			Fqdn:                     ptr.To(c.name + "-dns.hcp." + c.location + ".azmk8s.io"),
			NodeResourceGroup:        ptr.To("MC_" + c.resourceGroup + "_" + c.name + "_" + c.location),
			PowerState:               &armcontainerservice.PowerState{Code: ptr.To(armcontainerservice.CodeRunning)},
		},
	}
	for _, p := range c.sortedPools() {
		var prof armcontainerservice.ManagedClusterAgentPoolProfile
		v := p.view()
		if b, err := json.Marshal(v.Properties); err == nil && json.Unmarshal(b, &prof) == nil {
			prof.Name = ptr.To(p.name)
			mc.Properties.AgentPoolProfiles = append(mc.Properties.AgentPoolProfiles, &prof)
		}
	}
	return jsonReply(http.StatusOK, mc)
}

func (s *Server) listPools(req *request) *sim.Reply {
	c, rep := s.cluster(req, true)
	if rep != nil {
		return rep
	}
	page, next, err := sim.Page(c.sortedPools(), (*pool).key, req.HTTP.URL.Query().Get("$skipToken"), s.pageSize)
	if err != nil {
		return errorReply(http.StatusBadRequest, "InvalidSkipToken", "The $skipToken '%s' is invalid.", req.HTTP.URL.Query().Get("$skipToken"))
	}
	// AgentPoolListResult, with pools that may carry properties.status.
	out := struct {
		Value    []any   `json:"value"`
		NextLink *string `json:"nextLink,omitempty"`
	}{Value: []any{}}
	for _, p := range page {
		out.Value = append(out.Value, p.wire(req.version))
	}
	if next != "" {
		q := url.Values{}
		q.Set("api-version", req.version)
		q.Set("$skipToken", next)
		out.NextLink = ptr.To(req.base + req.HTTP.URL.Path + "?" + q.Encode())
	}
	return jsonReply(http.StatusOK, out)
}

// key is what pools are sorted and paged by: the name, without case.
func (p *pool) key() string { return strings.ToLower(p.name) }

func (s *Server) getPool(req *request) *sim.Reply {
	name := req.vars["pool"]
	c, rep := s.cluster(req, true)
	if rep != nil {
		return rep
	}
	p, ok := c.pools[strings.ToLower(name)]
	if !ok {
		return poolNotFound(c, name)
	}
	return jsonReply(http.StatusOK, p.wire(req.version))
}

// etagMatches reports whether an If-Match or If-None-Match header value
// matches etag: "*" or one of a comma-separated list, quoted or not.
func etagMatches(header, etag string) bool {
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimSpace(v)
		v = strings.TrimPrefix(v, "W/")
		v = strings.Trim(v, `"`)
		if v == "*" || (v != "" && v == etag) {
			return true
		}
	}
	return false
}

// preconditions checks If-Match and If-None-Match against a pool (nil when
// it does not exist).
func preconditions(r *http.Request, p *pool, name string) *sim.Reply {
	if im := r.Header.Get("If-Match"); im != "" {
		if p == nil {
			return errorReply(http.StatusPreconditionFailed, "PreconditionFailed",
				"Operation failed because agent pool '%s' does not exist and the request has an If-Match header '%s'.", name, im)
		}
		if !etagMatches(im, p.etag) {
			return errorReply(http.StatusPreconditionFailed, "PreconditionFailed",
				"Operation failed because the agent pool's eTag '%s' does not match the If-Match header '%s'.", p.etag, im)
		}
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && p != nil && etagMatches(inm, p.etag) {
		return errorReply(http.StatusPreconditionFailed, "PreconditionFailed",
			"Operation failed because agent pool '%s' exists and the request has an If-None-Match header '%s'.", p.name, inm)
	}
	return nil
}

var verbs = map[string]string{stateCreating: "create", stateUpdating: "update", stateScaling: "scale", stateUpgrading: "upgrade", stateDeleting: "delete",
	stateStarting: "start", stateStopping: "stop", stateNodeImage: "node image upgrade"}

func inProgress(p *pool) *sim.Reply {
	return errorReply(http.StatusConflict, "OperationNotAllowed",
		"Operation is not allowed because there's an in progress %s operation (id '%s', started %s) on agent pool '%s'. Please wait for it to finish before starting a new operation.",
		verbs[p.op.Kind], p.op.ID, p.op.Start.UTC().Format(time.RFC3339), p.name)
}

// writing finds the cluster and the pool (nil when there is none) a PUT
// or DELETE writes, checking If-Match and If-None-Match and that no
// operation runs on the pool.
func (s *Server) writing(req *request) (*cluster, *pool, *sim.Reply) {
	name := req.vars["pool"]
	c, rep := s.cluster(req, true)
	if rep != nil {
		return nil, nil, rep
	}
	p := c.pools[strings.ToLower(name)]
	if rep := preconditions(req.HTTP, p, name); rep != nil {
		return nil, nil, rep
	}
	if p != nil && p.op != nil {
		return nil, nil, inProgress(p)
	}
	return c, p, nil
}

func (s *Server) putPool(req *request) *sim.Reply {
	c, existing, rep := s.writing(req)
	if rep != nil {
		return rep
	}
	name := req.vars["pool"]
	var ap armcontainerservice.AgentPool
	if len(strings.TrimSpace(string(req.Body))) == 0 {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: the body is empty.")
	}
	if err := json.Unmarshal(req.Body, &ap); err != nil {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: %v", err)
	}
	if existing != nil {
		name = existing.name
	}
	next, rep := s.desired(c, name, existing, ap.Properties)
	if rep != nil {
		return rep
	}
	if rep := systemPoolsLeft(c, existing, next); rep != nil {
		return rep
	}
	if rep := applyPower(existing, next, ap.Properties); rep != nil {
		return rep
	}
	kind, from, upgradeNodes, newVersion := change(existing, next)
	surge := 0
	if kind == stateUpgrading {
		surge = surgeNodes(next)
	}
	if rep := s.quota(c, existing, next, surge); rep != nil {
		return rep
	}
	o := req.Start(kind, from, nodesOf(next), upgradeNodes)
	created := existing == nil
	p := existing
	if created {
		p = &pool{cluster: c, name: name}
		c.pools[strings.ToLower(name)] = p
	}
	p.props = next
	p.etag = s.NewID()
	s.startOp(o, c, p)
	infoOf(o).newVersion = newVersion
	if existing != nil && kind == stateUpgrading && newVersion == "" {
		// An OS SKU migration: the nodes come back on the new SKU's image.
		infoOf(o).newImage = nodeImage(ptr.Deref(next.OSSKU, armcontainerservice.OSSKUUbuntu))
	}

	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	rep = jsonReply(status, p.wire(req.version))
	rep.Created = created
	rep.Header.Set("Azure-AsyncOperation", s.operationURL(req, o, "operations"))
	return rep
}

// change is the operation a PUT of next starts on existing (nil for a
// create): what it is called, the nodes it starts from, how many nodes an
// upgrade replaces, and the version it moves to. Until an upgrade is done
// the nodes run the old version, which next keeps until then.
func change(existing *pool, next *props) (kind string, from, upgradeNodes int, newVersion string) {
	if existing == nil {
		return stateCreating, 0, 0, ""
	}
	if was, now := powerOf(existing.props), powerOf(next); was != now {
		if now == armcontainerservice.CodeStopped {
			return stateStopping, existing.ready, 0, ""
		}
		return stateStarting, existing.ready, 0, ""
	}
	if v := ptr.Deref(next.CurrentOrchestratorVersion, ""); v != ptr.Deref(existing.props.CurrentOrchestratorVersion, "") {
		next.CurrentOrchestratorVersion = existing.props.CurrentOrchestratorVersion
		return stateUpgrading, existing.ready, int(ptr.Deref(next.Count, 0)), v
	}
	if !strings.EqualFold(string(ptr.Deref(next.OSSKU, "")), string(ptr.Deref(existing.props.OSSKU, ""))) {
		return stateUpgrading, existing.ready, int(ptr.Deref(next.Count, 0)), "" // every node reimaged
	}
	if onlyCountDiffers(existing.props, next) {
		return stateScaling, existing.ready, 0, ""
	}
	return stateUpdating, existing.ready, 0, ""
}

func (s *Server) deletePool(req *request) *sim.Reply {
	c, p, rep := s.writing(req)
	if rep != nil {
		return rep
	}
	if p == nil {
		return sim.NewReply(http.StatusNoContent) // ARM: deleting what is not there succeeds
	}
	if rep := systemPoolsLeft(c, p, nil); rep != nil {
		return rep
	}
	o := req.Start(stateDeleting, p.ready, 0, 0)
	s.startOp(o, c, p)
	rep = sim.NewReply(http.StatusAccepted)
	rep.Header.Set("Azure-AsyncOperation", s.operationURL(req, o, "operations"))
	rep.Header.Set("Location", s.operationURL(req, o, "operationresults"))
	return rep
}

// startOp makes o, just started, the operation in progress on pool p of
// cluster c, and takes the capacity it needs (capacity.go).
func (s *Server) startOp(o *sim.Operation, c *cluster, p *pool) {
	o.Data = &opInfo{subscription: c.subscription, location: c.location, pool: p}
	o.Done = s.ended
	p.op = o
	s.allocate(o, p)
}
