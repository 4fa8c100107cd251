package oke

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// lookupPool finds the node pool of the path.
func (s *Server) lookupPool(req *sim.Request) (*pool, *sim.Reply) {
	id := req.HTTP.PathValue("id")
	p, ok := s.pools[id]
	if !ok {
		return nil, notFound("node pool", id)
	}
	return p, nil
}

func (s *Server) getPool(req *sim.Request) *sim.Reply {
	p, rep := s.lookupPool(req)
	if rep != nil {
		return rep
	}
	v := p.view()
	rep = jsonReply(http.StatusOK, v)
	rep.Header.Set("etag", etag(v))
	return rep
}

// listPools answers a page of node pool summaries, oldest first (newest
// with sortOrder DESC).
func (s *Server) listPools(req *sim.Request) *sim.Reply {
	q := req.HTTP.URL.Query()
	compartment := q.Get("compartmentId")
	if compartment == "" {
		return missing("compartmentId")
	}
	size, ok := sim.PageSize(q.Get("limit"), s.pageSize, 1000)
	if !ok {
		return invalid("limit must be between 1 and 1000.")
	}
	desc := q.Get("sortOrder") == "DESC"
	states := q["lifecycleState"]
	var all []*pool
	for _, p := range s.sortedPools(compartment, q.Get("clusterId")) {
		if n := q.Get("name"); n != "" && ptr.Deref(p.np.Name, "") != n {
			continue
		}
		if len(states) > 0 && !slices.Contains(states, p.lifecycle()) {
			continue
		}
		all = append(all, p)
	}
	if desc {
		slices.Reverse(all)
	}
	page, next, err := sim.Page(all, func(p *pool) string { return p.pageKey(desc) }, q.Get("page"), size)
	if err != nil {
		return invalid("The page token is invalid.")
	}
	out := []ce.NodePoolSummary{}
	for _, p := range page {
		out = append(out, p.summary())
	}
	rep := jsonReply(http.StatusOK, out)
	if next != "" {
		rep.Header.Set("opc-next-page", next)
	}
	return rep
}

// pageKey is the pool's place in the list as a key that sorts as the list
// does: by creation (time, then order), ascending, or descending for desc.
func (p *pool) pageKey(desc bool) string {
	t, n := uint64(p.created.UnixNano())^1<<63, uint64(p.seq)
	if desc {
		t, n = ^t, ^n
	}
	return fmt.Sprintf("%016x%016x", t, n)
}

// ifMatch checks the if-match header against the pool's etag.
func ifMatch(req *sim.Request, p *pool) *sim.Reply {
	m := req.HTTP.Header.Get("if-match")
	if m == "" || m == "*" {
		return nil
	}
	if m != etag(p.view()) {
		return failf(http.StatusPreconditionFailed, errPreconditionFailed, "The resource has changed since the if-match etag %s was read.", m)
	}
	return nil
}

// busy refuses a second operation while a work request holds the pool.
func busy(p *pool) *sim.Reply {
	return failf(http.StatusConflict, errIncorrectState, "Node pool %s is in state %s: another work request (%s) is in progress on it.", p.id, p.lifecycle(), p.work.id)
}

func (s *Server) createPool(req *sim.Request) *sim.Reply {
	token := req.HTTP.Header.Get("opc-retry-token")
	if id, ok := s.tokens[token]; ok && token != "" {
		if w, ok := s.works[id]; ok && s.pools[w.poolID] != nil {
			return s.accepted(w, http.StatusAccepted)
		}
	}
	var in ce.CreateNodePoolDetails
	if rep := decodeStrict(req.Body, &in); rep != nil {
		return rep
	}
	c, rep := s.validateCreate(&in)
	if rep != nil {
		return rep
	}
	if rep := s.checkLimits(c, nil, *in.NodeConfigDetails.Size); rep != nil {
		return rep
	}
	id := ocid("nodepool", c.Region, s.NewID())
	np := ce.NodePool{CompartmentId: in.CompartmentId, ClusterId: in.ClusterId, Name: in.Name, KubernetesVersion: in.KubernetesVersion,
		NodeMetadata: in.NodeMetadata, NodeSourceDetails: in.NodeSourceDetails, NodeShape: in.NodeShape, InitialNodeLabels: in.InitialNodeLabels,
		SshPublicKey: in.SshPublicKey, FreeformTags: in.FreeformTags,
		NodePoolCyclingDetails: in.NodePoolCyclingDetails, NodeEvictionNodePoolSettings: in.NodeEvictionNodePoolSettings,
		NodeConfigDetails: &ce.NodePoolNodeConfigDetails{Size: in.NodeConfigDetails.Size, PlacementConfigs: in.NodeConfigDetails.PlacementConfigs,
			FreeformTags: in.NodeConfigDetails.FreeformTags, NsgIds: in.NodeConfigDetails.NsgIds, IsPvEncryptionInTransitEnabled: common.Bool(false)}}
	if in.KubernetesVersion == nil {
		np.KubernetesVersion = common.String(c.Version)
	}
	if sc := in.NodeShapeConfig; sc != nil {
		np.NodeShapeConfig = &ce.NodeShapeConfig{Ocpus: sc.Ocpus, MemoryInGBs: sc.MemoryInGBs}
		if sc.MemoryInGBs == nil && sc.Ocpus != nil {
			np.NodeShapeConfig.MemoryInGBs = common.Float32(*sc.Ocpus * 16) // OKE's default: 16 GB per OCPU
		}
	}
	s.seq++
	p := &pool{id: id, cluster: c, np: np, state: stateActive, created: req.Now, seq: s.seq}
	s.pools[id] = p
	w := s.begin(req, p, opCreate, stateCreating, 0, ptr.Deref(np.NodeConfigDetails.Size, 0))
	if token != "" {
		s.tokens[token] = w.id
	}
	rep = s.accepted(w, http.StatusAccepted)
	rep.Created, rep.Resource = true, "/"+APIVersion+"/nodePools/"+id
	return rep
}

// accepted answers a call that started a work request: no body (the
// model's CreateNodePoolResponse, UpdateNodePoolResponse and
// DeleteNodePoolResponse have headers only), its id in
// opc-work-request-id.
func (s *Server) accepted(w *work, status int) *sim.Reply {
	rep := sim.NewReply(status)
	rep.Header.Set("opc-work-request-id", w.id)
	return rep
}

// begin starts a work request on p that moves its nodes from from to to.
func (s *Server) begin(req *sim.Request, p *pool, typ, kind string, from, to int) *work {
	o := req.Start(kind, from, to, 0)
	s.seq++
	w := &work{id: ocid("clustersworkrequest", p.cluster.Region, o.ID), typ: typ, compartment: ptr.Deref(p.np.CompartmentId, ""), poolID: p.id,
		accepted: req.Now, seq: s.seq, op: o}
	w.log(req.Now, "Node pool %s %s accepted.", p.id, w.verb())
	s.works[w.id] = w
	s.forget()
	p.op, p.work, p.healAt = o, w, time.Time{}
	o.Data = w
	o.Done = func(o *sim.Operation) { s.finish(o, p, w) }
	return w
}

// keptWorks bounds the work requests kept: past it, the older half of
// the finished ones (and their retry tokens) are forgotten.
const keptWorks = 10000

func (s *Server) forget() {
	if len(s.works) <= keptWorks {
		return
	}
	var done []*work
	for _, w := range s.works {
		if !w.running() {
			done = append(done, w)
		}
	}
	slices.SortFunc(done, func(a, b *work) int { return a.accepted.Compare(b.accepted) })
	for _, w := range done[:len(done)/2] {
		delete(s.works, w.id)
	}
	for t, id := range s.tokens {
		if _, ok := s.works[id]; !ok {
			delete(s.tokens, t)
		}
	}
}

const injected = " (fault injected by kpool cloudsim)"

// finish applies a work request's outcome to its pool when it ends.
func (s *Server) finish(o *sim.Operation, p *pool, w *work) {
	p.sync(o.End, s)
	p.op = nil
	for _, n := range p.nodes {
		if n.state == string(ce.NodeLifecycleStateCreating) {
			n.state = string(ce.NodeLifecycleStateActive)
		}
	}
	short := w.typ != opDelete && !o.Fails && p.failedNodes() > 0
	if !o.Fails && !short {
		w.log(o.End, "Node pool %s %s succeeded.", p.id, w.verb())
	}
	size := ptr.Deref(p.np.NodeConfigDetails.Size, 0)
	switch {
	case short:
		p.failShort(w, o.End)
	case w.typ == opDelete && !o.Fails:
		p.state, p.details, p.nodes, p.deletedAt = stateDeleted, "", nil, o.End
	case w.typ == opCreate && o.Fails:
		p.state = stateFailed
		p.details = "The node pool could not be created: launching its instances failed with an internal error." + injected
		w.fail(o.End, "InternalError", "Launching the node pool's instances failed with an internal error."+injected)
	case w.typ == opDelete:
		p.state = stateNeedsAttention
		p.details = "The node pool could not be deleted: terminating its instances timed out." + injected
		p.healAt = o.HealAt()
		w.fail(o.End, "InternalError", "Terminating the node pool's instances timed out."+injected)
	case o.Fails:
		p.state = stateNeedsAttention
		p.details = fmt.Sprintf("%d of %d nodes could not be brought to the node pool's configuration: an internal error.%s", max(size-o.To, 1), size, injected)
		p.healAt = o.HealAt()
		w.fail(o.End, "InternalError", fmt.Sprintf("%d of %d instances could not be launched: an internal error.%s", max(size-o.To, 1), size, injected))
	default:
		p.state, p.details = stateActive, ""
	}
}

func (s *Server) updatePool(req *sim.Request) *sim.Reply {
	p, rep := s.lookupPool(req)
	if rep != nil {
		return rep
	}
	var in ce.UpdateNodePoolDetails
	if rep := decodeStrict(req.Body, &in); rep != nil {
		return rep
	}
	if rep := ifMatch(req, p); rep != nil {
		return rep
	}
	switch {
	case p.op != nil:
		return busy(p)
	case p.removing() != nil:
		return removingBusy(p, p.removing())
	case p.state == stateFailed || p.state == stateDeleted:
		return failf(http.StatusConflict, errIncorrectState, "Node pool %s is in state %s and cannot be updated.", p.id, p.state)
	}
	next, rep := s.validateUpdate(p, &in, req.Body)
	if rep != nil {
		return rep
	}
	if rep := s.checkLimits(p.cluster, p, ptr.Deref(next.NodeConfigDetails.Size, 0)); rep != nil {
		return rep
	}
	p.np = next
	p.dropFailed() // the update launches what the size still lacks (capacity.go)
	w := s.begin(req, p, opUpdate, stateUpdating, len(p.nodes), ptr.Deref(next.NodeConfigDetails.Size, 0))
	if in.NodePoolCyclingDetails != nil && ptr.Deref(in.NodePoolCyclingDetails.IsNodeCyclingEnabled, false) {
		p.startCycle(req.Now)
	}
	return s.accepted(w, http.StatusAccepted)
}

func (s *Server) deletePool(req *sim.Request) *sim.Reply {
	p, rep := s.lookupPool(req)
	if rep != nil {
		return rep
	}
	if rep := ifMatch(req, p); rep != nil {
		return rep
	}
	switch {
	case p.op != nil && p.op.Kind == stateDeleting:
		return s.accepted(p.work, http.StatusAccepted) // already being deleted
	case p.op != nil:
		return busy(p)
	case p.state == stateDeleted:
		return notFound("node pool", p.id)
	}
	p.dropFailed()
	w := s.begin(req, p, opDelete, stateDeleting, len(p.nodes), 0)
	return s.accepted(w, http.StatusAccepted)
}
