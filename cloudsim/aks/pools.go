package aks

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
)

type props = armcontainerservice.ManagedClusterAgentPoolProfileProperties

const (
	stateSucceeded = "Succeeded"
	stateFailed    = "Failed"
	stateCreating  = "Creating"
	stateUpdating  = "Updating"
	stateScaling   = "Scaling"
	stateUpgrading = "Upgrading"
	stateDeleting  = "Deleting"

	poolType    = "Microsoft.ContainerService/managedClusters/agentPools"
	clusterType = "Microsoft.ContainerService/ManagedClusters"
)

type cluster struct {
	subscription, resourceGroup, name string
	location                          string
	version                           string
	pools                             map[string]*pool // key: lower(name)
}

func (c *cluster) id() string {
	return fmt.Sprintf("/subscriptions/%s/resourcegroups/%s/providers/Microsoft.ContainerService/managedClusters/%s",
		c.subscription, c.resourceGroup, c.name)
}

type pool struct {
	cluster *cluster
	name    string
	// props are the pool's properties as ARM returns them, read-only ones
	// included, except provisioningState and eTag, which are computed.
	props *props
	state string // provisioningState when no operation runs
	etag  string
	ready int        // nodes at the start of op, or now when idle
	op    *operation // in progress, or nil
}

func (p *pool) id() string { return p.cluster.id() + "/agentPools/" + p.name }

type operation struct {
	id, kind     string
	subscription string
	location     string
	pool         *pool
	start, end   time.Time
	from, target int // the node ramp
	fail         bool
	status       string // InProgress, Succeeded, Failed
	errCode      string
	errMessage   string
	// newVersion is the orchestrator version an upgrade moves to.
	newVersion string
}

// readyAt is the number of nodes at t: during an operation they move one
// at a time, NodeTime apart, from the count at its start to its target.
func (p *pool) readyAt(t time.Time, nodeTime time.Duration) int {
	o := p.op
	if o == nil {
		return p.ready
	}
	n := o.target - o.from
	steps := abs(n)
	if nodeTime > 0 && t.Before(o.end) {
		steps = min(steps, int(max(t.Sub(o.start), 0)/nodeTime))
	}
	if n < 0 {
		return o.from - steps
	}
	return o.from + steps
}

// view returns the pool as ARM returns it.
func (p *pool) view() armcontainerservice.AgentPool {
	pr := cloneProps(p.props)
	st := p.state
	if p.op != nil {
		st = p.op.kind
	}
	pr.ProvisioningState = to(st)
	pr.ETag = to(p.etag)
	return armcontainerservice.AgentPool{ID: to(p.id()), Name: to(p.name), Type: to(poolType), Properties: pr}
}

// advance finishes the operations whose time has come.
func (s *Server) advance(now time.Time) {
	for o := range s.active {
		if now.Before(o.end) {
			continue
		}
		delete(s.active, o)
		s.finished = append(s.finished, o)
		p := o.pool
		p.ready = o.target
		p.op = nil
		if o.fail {
			o.status = stateFailed
			p.state = stateFailed
			continue
		}
		o.status = stateSucceeded
		p.state = stateSucceeded
		if o.kind == stateDeleting {
			delete(p.cluster.pools, strings.ToLower(p.name))
			continue
		}
		if o.newVersion != "" {
			p.props.CurrentOrchestratorVersion = to(o.newVersion)
		}
	}
	if n := len(s.finished) - keptOperations; n > 0 {
		for _, o := range s.finished[:n] {
			delete(s.ops, strings.ToLower(o.id))
		}
		s.finished = append([]*operation(nil), s.finished[n:]...)
	}
}

// lookup finds a cluster, answering ARM's 404s when it is missing.
// parent is true on the agent-pool paths.
func (s *Server) lookup(sub, rg, name string, parent bool) (*cluster, *reply) {
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

func poolNotFound(c *cluster, name string) *reply {
	return errorReply(http.StatusNotFound, "ResourceNotFound",
		"The Resource 'Microsoft.ContainerService/managedClusters/%s/agentPools/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix",
		c.name, name, c.resourceGroup)
}

func (s *Server) getCluster(req *request, sub, rg, name string) *reply {
	c, rep := s.lookup(sub, rg, name, false)
	if rep != nil {
		return rep
	}
	mc := armcontainerservice.ManagedCluster{
		ID: to(c.id()), Name: to(c.name), Type: to(clusterType), Location: to(c.location),
		Properties: &armcontainerservice.ManagedClusterProperties{
			ProvisioningState:        to(stateSucceeded),
			KubernetesVersion:        to(c.version),
			CurrentKubernetesVersion: to(c.version),
			DNSPrefix:                to(c.name + "-dns"),
			Fqdn:                     to(c.name + "-dns.hcp." + c.location + ".azmk8s.io"),
			NodeResourceGroup:        to("MC_" + c.resourceGroup + "_" + c.name + "_" + c.location),
			PowerState:               &armcontainerservice.PowerState{Code: to(armcontainerservice.CodeRunning)},
		},
	}
	for _, p := range c.sortedPools() {
		var prof armcontainerservice.ManagedClusterAgentPoolProfile
		v := p.view()
		if b, err := json.Marshal(v.Properties); err == nil && json.Unmarshal(b, &prof) == nil {
			prof.Name = to(p.name)
			mc.Properties.AgentPoolProfiles = append(mc.Properties.AgentPoolProfiles, &prof)
		}
	}
	return jsonReply(http.StatusOK, mc)
}

func (s *Server) listPools(req *request, sub, rg, name string) *reply {
	c, rep := s.lookup(sub, rg, name, true)
	if rep != nil {
		return rep
	}
	after := ""
	if tok := req.r.URL.Query().Get("$skipToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return errorReply(http.StatusBadRequest, "InvalidSkipToken", "The $skipToken '%s' is invalid.", tok)
		}
		after = string(b)
	}
	var page []*armcontainerservice.AgentPool
	var last string
	more := false
	for _, p := range c.sortedPools() {
		key := strings.ToLower(p.name)
		if after != "" && key <= after {
			continue
		}
		if len(page) == s.pageSize {
			more = true
			break
		}
		v := p.view()
		page = append(page, &v)
		last = key
	}
	out := armcontainerservice.AgentPoolListResult{Value: page}
	if out.Value == nil {
		out.Value = []*armcontainerservice.AgentPool{}
	}
	if more {
		q := url.Values{}
		q.Set("api-version", req.version)
		q.Set("$skipToken", base64.RawURLEncoding.EncodeToString([]byte(last)))
		out.NextLink = to(req.base + req.r.URL.Path + "?" + q.Encode())
	}
	return jsonReply(http.StatusOK, out)
}

func (s *Server) getPool(req *request, sub, rg, cl, name string) *reply {
	c, rep := s.lookup(sub, rg, cl, true)
	if rep != nil {
		return rep
	}
	p, ok := c.pools[strings.ToLower(name)]
	if !ok {
		return poolNotFound(c, name)
	}
	return jsonReply(http.StatusOK, p.view())
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
func preconditions(r *http.Request, p *pool, name string) *reply {
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

var verbs = map[string]string{stateCreating: "create", stateUpdating: "update", stateScaling: "scale", stateUpgrading: "upgrade", stateDeleting: "delete"}

func inProgress(p *pool) *reply {
	return errorReply(http.StatusConflict, "OperationNotAllowed",
		"Operation is not allowed because there's an in progress %s operation (id '%s', started %s) on agent pool '%s'. Please wait for it to finish before starting a new operation.",
		verbs[p.op.kind], p.op.id, p.op.start.UTC().Format(time.RFC3339), p.name)
}

func (s *Server) putPool(req *request, sub, rg, cl, name string) *reply {
	c, rep := s.lookup(sub, rg, cl, true)
	if rep != nil {
		return rep
	}
	existing := c.pools[strings.ToLower(name)]
	if rep := preconditions(req.r, existing, name); rep != nil {
		return rep
	}
	if existing != nil && existing.op != nil {
		return inProgress(existing)
	}
	var ap armcontainerservice.AgentPool
	if len(strings.TrimSpace(string(req.body))) == 0 {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: the body is empty.")
	}
	if err := json.Unmarshal(req.body, &ap); err != nil {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: %v", err)
	}
	if existing != nil {
		name = existing.name
	}
	next, rep := s.desired(c, name, existing, ap.Properties)
	if rep != nil {
		return rep
	}

	// The operation: what it is called, how long it takes, where nodes go.
	kind := stateCreating
	from := 0
	upgradeNodes := 0
	newVersion := ""
	if existing != nil {
		from = existing.ready
		kind = stateUpdating
		if v := deref(next.CurrentOrchestratorVersion); v != deref(existing.props.CurrentOrchestratorVersion) {
			kind, newVersion = stateUpgrading, v
			// Until the upgrade is done the nodes run the old version.
			next.CurrentOrchestratorVersion = existing.props.CurrentOrchestratorVersion
			upgradeNodes = int(deref(next.Count))
		} else if onlyCountDiffers(existing.props, next) {
			kind = stateScaling
		}
	}
	want := int(deref(next.Count))
	delta := abs(want - from)
	target := want
	if req.failOp {
		// A failed operation leaves the nodes half way.
		if want >= from {
			target = from + delta/2
		} else {
			target = from - delta/2
		}
	}
	o := s.startOp(req, c, kind, from, target, delta+upgradeNodes)
	o.newVersion = newVersion
	created := existing == nil
	p := existing
	if created {
		p = &pool{cluster: c, name: name}
		c.pools[strings.ToLower(name)] = p
	}
	p.props = next
	p.etag = s.newID()
	p.op = o
	o.pool = p

	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	rep = jsonReply(status, p.view())
	rep.created = created
	rep.header.Set("Azure-AsyncOperation", s.operationURL(req, o, "operations"))
	return rep
}

func (s *Server) deletePool(req *request, sub, rg, cl, name string) *reply {
	c, rep := s.lookup(sub, rg, cl, true)
	if rep != nil {
		return rep
	}
	p := c.pools[strings.ToLower(name)]
	if rep := preconditions(req.r, p, name); rep != nil {
		return rep
	}
	if p == nil {
		return newReply(http.StatusNoContent) // ARM: deleting what is not there succeeds
	}
	if p.op != nil {
		return inProgress(p)
	}
	from := p.ready
	target := 0
	if req.failOp {
		target = from - from/2
	}
	o := s.startOp(req, c, stateDeleting, from, target, from)
	o.pool = p
	p.op = o
	rep = newReply(http.StatusAccepted)
	rep.header.Set("Azure-AsyncOperation", s.operationURL(req, o, "operations"))
	rep.header.Set("Location", s.operationURL(req, o, "operationresults"))
	return rep
}

// startOp registers an operation that changes nodes nodes.
func (s *Server) startOp(req *request, c *cluster, kind string, from, target, nodes int) *operation {
	o := &operation{
		id: s.newID(), kind: kind, subscription: c.subscription, location: c.location,
		start: req.now, end: req.now.Add(s.opTime + time.Duration(nodes)*s.nodeTime),
		from: from, target: target, status: "InProgress",
	}
	if req.failOp {
		o.fail = true
		req.failStarted = true
		o.errCode = "InternalOperationError"
		o.errMessage = fmt.Sprintf("The %s operation failed: an internal error occurred (fault injected by kpool cloudsim).", strings.ToLower(kind))
	}
	s.ops[strings.ToLower(o.id)] = o
	s.active[o] = true
	return o
}

func (s *Server) operationURL(req *request, o *operation, kind string) string {
	return fmt.Sprintf("%s/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s/%s/%s?api-version=%s",
		req.base, o.subscription, o.location, kind, o.id, url.QueryEscape(req.version))
}

func (s *Server) findOp(sub, location, id string) (*operation, *reply) {
	o, ok := s.ops[strings.ToLower(id)]
	if !ok || !strings.EqualFold(o.subscription, sub) || !strings.EqualFold(o.location, normLocation(location)) {
		return nil, errorReply(http.StatusNotFound, "NotFound", "Operation '%s' was not found in location '%s'.", id, location)
	}
	return o, nil
}

type operationStatus struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	StartTime string    `json:"startTime"`
	EndTime   string    `json:"endTime,omitempty"`
	Error     *armError `json:"error,omitempty"`
}

func (s *Server) operationStatus(req *request, sub, location, id string) *reply {
	o, rep := s.findOp(sub, location, id)
	if rep != nil {
		return rep
	}
	st := operationStatus{
		ID:        fmt.Sprintf("/subscriptions/%s/providers/Microsoft.ContainerService/locations/%s/operations/%s", o.subscription, o.location, o.id),
		Name:      o.id,
		Status:    o.status,
		StartTime: o.start.UTC().Format(time.RFC3339Nano),
	}
	if o.status != "InProgress" {
		st.EndTime = o.end.UTC().Format(time.RFC3339Nano)
	}
	if o.status == stateFailed {
		st.Error = &armError{Code: o.errCode, Message: o.errMessage}
	}
	return jsonReply(http.StatusOK, st)
}

// operationResult answers the Location URL of an operation: 202 while it
// runs, then 204 for a delete (or a pool since gone), 200 with the pool
// for a create or update, or the operation's error.
func (s *Server) operationResult(req *request, sub, location, id string) *reply {
	o, rep := s.findOp(sub, location, id)
	if rep != nil {
		return rep
	}
	switch o.status {
	case "InProgress":
		rep := newReply(http.StatusAccepted)
		rep.header.Set("Location", s.operationURL(req, o, "operationresults"))
		return rep
	case stateFailed:
		return errorReply(http.StatusBadRequest, o.errCode, "%s", o.errMessage)
	}
	if o.kind == stateDeleting {
		return newReply(http.StatusNoContent)
	}
	if cur, ok := o.pool.cluster.pools[strings.ToLower(o.pool.name)]; ok && cur == o.pool {
		return jsonReply(http.StatusOK, cur.view())
	}
	return newReply(http.StatusNoContent)
}

// onlyCountDiffers reports whether next differs from old in count alone.
func onlyCountDiffers(old, next *props) bool {
	if deref(old.Count) == deref(next.Count) {
		return false
	}
	a, b := cloneProps(old), cloneProps(next)
	a.Count, b.Count = nil, nil
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// cloneProps deep-copies properties through their JSON form.
func cloneProps(p *props) *props {
	out := &props{}
	if p == nil {
		return out
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("aks: encoding agent pool properties: %v", err))
	}
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("aks: decoding agent pool properties: %v", err))
	}
	return out
}

func to[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
