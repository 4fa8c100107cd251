package oke

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Node pool lifecycle states (NodePoolLifecycleStateEnum), node lifecycle
// states (NodeLifecycleStateEnum) and work request operation types, as the
// SDK names them.
const (
	stateCreating       = string(ce.NodePoolLifecycleStateCreating)
	stateActive         = string(ce.NodePoolLifecycleStateActive)
	stateUpdating       = string(ce.NodePoolLifecycleStateUpdating)
	stateDeleting       = string(ce.NodePoolLifecycleStateDeleting)
	stateDeleted        = string(ce.NodePoolLifecycleStateDeleted)
	stateFailed         = string(ce.NodePoolLifecycleStateFailed)
	stateNeedsAttention = string(ce.NodePoolLifecycleStateNeedsAttention)

	opCreate = string(ce.WorkRequestOperationTypeNodepoolCreate)
	opUpdate = string(ce.WorkRequestOperationTypeNodepoolUpdate)
	opDelete = string(ce.WorkRequestOperationTypeNodepoolDelete)
)

// deletedKept is how long a DELETED node pool is still returned by GET and
// list, as OCI keeps deleted resources visible for a while.
const deletedKept = time.Hour

// pool is a node pool and what only the emulator knows of it.
type pool struct {
	id      string
	cluster *cluster
	// np is the pool's configuration as OKE stores it; lifecycle and
	// nodes are added by view.
	np        ce.NodePool
	state     string // when no operation runs: ACTIVE, FAILED, NEEDS_ATTENTION, DELETED
	details   string // lifecycleDetails
	created   time.Time
	seq       int // order of creation
	op        *sim.Operation
	work      *work
	nodes     []*node
	healAt    time.Time // when a NEEDS_ATTENTION pool heals
	deletedAt time.Time
}

// NodeConfig is the configuration a node was created with: OKE applies a
// pool's changes to the nodes created afterwards only, so older nodes keep
// theirs. Of it, OKE's Node shows kubernetesVersion only (and the node's
// freeform tags); the rest is the compute instance's.
type NodeConfig struct {
	KubernetesVersion   string
	Shape               string
	OCPUs, MemoryInGBs  float32
	ImageID             string
	BootVolumeSizeInGBs int64
	Preemptible         bool
	Labels              map[string]string
}

type node struct {
	id, name, ad, subnet, faultDomain, ip string
	state                                 string
	tags                                  map[string]string
	cfg                                   NodeConfig
}

// work is a work request.
type work struct {
	id, typ, compartment, poolID string
	accepted                     time.Time
	op                           *sim.Operation
}

// tick finishes what time has finished: nodes of running operations,
// pools that heal, deleted pools forgotten.
func (s *Server) tick(now time.Time) {
	for id, p := range s.pools {
		p.sync(now, s)
		if p.op == nil && p.state == stateNeedsAttention && !p.healAt.IsZero() && !now.Before(p.healAt) {
			p.heal(s)
		}
		if p.state == stateDeleted && p.op == nil && now.Sub(p.deletedAt) > deletedKept {
			delete(s.pools, id)
		}
	}
}

// heal brings a NEEDS_ATTENTION pool to its size with new nodes, ACTIVE.
func (p *pool) heal(s *Server) {
	size := deref(p.np.NodeConfigDetails.Size)
	for len(p.nodes) > size {
		p.nodes = p.nodes[:len(p.nodes)-1]
	}
	for len(p.nodes) < size {
		p.addNode(s)
	}
	for _, n := range p.nodes {
		n.state = string(ce.NodeLifecycleStateActive)
	}
	p.state, p.details, p.healAt = stateActive, "", time.Time{}
}

// config is the configuration new nodes of the pool get.
func (p *pool) config() NodeConfig {
	c := NodeConfig{KubernetesVersion: deref(p.np.KubernetesVersion), Shape: deref(p.np.NodeShape), Labels: map[string]string{}}
	if sc := p.np.NodeShapeConfig; sc != nil {
		c.OCPUs, c.MemoryInGBs = deref(sc.Ocpus), deref(sc.MemoryInGBs)
	}
	if src, ok := p.np.NodeSourceDetails.(ce.NodeSourceViaImageDetails); ok {
		c.ImageID, c.BootVolumeSizeInGBs = deref(src.ImageId), deref(src.BootVolumeSizeInGBs)
	}
	for _, pc := range p.np.NodeConfigDetails.PlacementConfigs {
		if pc.PreemptibleNodeConfig != nil {
			c.Preemptible = true
		}
	}
	for _, kv := range p.np.InitialNodeLabels {
		c.Labels[deref(kv.Key)] = deref(kv.Value)
	}
	return c
}

// addNode adds a CREATING node in the placement domain with the fewest.
func (p *pool) addNode(s *Server) {
	pcs := p.np.NodeConfigDetails.PlacementConfigs
	best := 0
	count := func(ad string) int {
		n := 0
		for _, x := range p.nodes {
			if x.ad == ad {
				n++
			}
		}
		return n
	}
	for i := range pcs {
		if count(deref(pcs[i].AvailabilityDomain)) < count(deref(pcs[best].AvailabilityDomain)) {
			best = i
		}
	}
	s.seq++
	n := &node{id: ocid("instance", p.cluster.Region, s.NewID()), state: string(ce.NodeLifecycleStateCreating),
		faultDomain: "FAULT-DOMAIN-" + strconv.Itoa(s.seq%3+1), ip: fmt.Sprintf("10.0.%d.%d", (s.seq/250)%250, s.seq%250+2),
		tags: cloneMap(p.np.NodeConfigDetails.FreeformTags), cfg: p.config()}
	if len(pcs) > 0 {
		n.ad, n.subnet = deref(pcs[best].AvailabilityDomain), deref(pcs[best].SubnetId)
	}
	n.name = "oke-" + shortID(p.id) + "-" + shortID(n.id)
	p.nodes = append(p.nodes, n)
}

// victim moves the node to remove next to the end: one outside the
// placement domains, else one of the domain with the most nodes.
func (p *pool) victim() {
	in := map[string]int{}
	for _, pc := range p.np.NodeConfigDetails.PlacementConfigs {
		in[deref(pc.AvailabilityDomain)] = 0
	}
	for _, n := range p.nodes {
		if _, ok := in[n.ad]; ok {
			in[n.ad]++
		}
	}
	pick := -1
	for i, n := range p.nodes {
		if _, ok := in[n.ad]; !ok {
			pick = i
		}
	}
	if pick < 0 {
		for i, n := range p.nodes {
			if pick < 0 || in[n.ad] >= in[p.nodes[pick].ad] {
				pick = i
			}
		}
	}
	last := len(p.nodes) - 1
	p.nodes[pick], p.nodes[last] = p.nodes[last], p.nodes[pick]
}

// sync moves the pool's nodes with its running operation: nodes come up
// (CREATING, then ACTIVE) or go (DELETING, then gone) one at a time.
func (p *pool) sync(now time.Time, s *Server) {
	o := p.op
	if o == nil {
		return
	}
	done := o.Nodes(now)
	if o.To >= o.From {
		want := done
		if done < o.To && o.Running() {
			want++ // the one coming up
		}
		for len(p.nodes) < want {
			p.addNode(s)
		}
		for i, n := range p.nodes {
			if i < done {
				n.state = string(ce.NodeLifecycleStateActive)
			}
		}
		return
	}
	for len(p.nodes) > done {
		if p.nodes[len(p.nodes)-1].state != string(ce.NodeLifecycleStateDeleting) {
			p.victim()
		}
		p.nodes = p.nodes[:len(p.nodes)-1]
	}
	if done > o.To && o.Running() && len(p.nodes) > 0 {
		if p.nodes[len(p.nodes)-1].state != string(ce.NodeLifecycleStateDeleting) {
			p.victim()
		}
		p.nodes[len(p.nodes)-1].state = string(ce.NodeLifecycleStateDeleting)
	}
}

// lifecycle is the pool's state now.
func (p *pool) lifecycle() string {
	if p.op != nil {
		return p.op.Kind
	}
	return p.state
}

// view returns the pool as GetNodePool returns it.
func (p *pool) view() ce.NodePool {
	v := p.np
	v.Id = &p.id
	v.LifecycleState = ce.NodePoolLifecycleStateEnum(p.lifecycle())
	v.LifecycleDetails = common.String(p.details)
	v.FreeformTags = cloneMap(v.FreeformTags)
	if v.FreeformTags == nil {
		v.FreeformTags = map[string]string{}
	}
	v.DefinedTags = map[string]map[string]interface{}{}
	v.SystemTags = map[string]map[string]interface{}{}
	v.InitialNodeLabels = slices.Clone(v.InitialNodeLabels)
	ncd := *v.NodeConfigDetails
	ncd.PlacementConfigs = slices.Clone(ncd.PlacementConfigs)
	ncd.FreeformTags = cloneMap(ncd.FreeformTags)
	v.NodeConfigDetails = &ncd
	if src, ok := v.NodeSourceDetails.(ce.NodeSourceViaImageDetails); ok {
		v.NodeImageId = src.ImageId
		v.NodeSource = ce.NodeSourceViaImageOption{SourceName: common.String("kpool-cloudsim-image"), ImageId: src.ImageId}
	}
	v.Nodes = []ce.Node{}
	for _, n := range p.nodes {
		v.Nodes = append(v.Nodes, ce.Node{Id: common.String(n.id), Name: common.String(n.name), KubernetesVersion: common.String(n.cfg.KubernetesVersion),
			AvailabilityDomain: common.String(n.ad), SubnetId: common.String(n.subnet), NodePoolId: common.String(p.id),
			FaultDomain: common.String(n.faultDomain), PrivateIp: common.String(n.ip), FreeformTags: cloneMap(n.tags),
			DefinedTags: map[string]map[string]interface{}{}, SystemTags: map[string]map[string]interface{}{},
			LifecycleState: ce.NodeLifecycleStateEnum(n.state), LifecycleDetails: common.String("")})
	}
	return v
}

// summary returns the pool as ListNodePools returns it.
func (p *pool) summary() ce.NodePoolSummary {
	v := p.view()
	return ce.NodePoolSummary{Id: v.Id, LifecycleState: v.LifecycleState, LifecycleDetails: v.LifecycleDetails, CompartmentId: v.CompartmentId,
		ClusterId: v.ClusterId, Name: v.Name, KubernetesVersion: v.KubernetesVersion, NodeImageId: v.NodeImageId, NodeShapeConfig: v.NodeShapeConfig,
		NodeSource: v.NodeSource, NodeSourceDetails: v.NodeSourceDetails, NodeShape: v.NodeShape, InitialNodeLabels: v.InitialNodeLabels,
		NodeConfigDetails: v.NodeConfigDetails, FreeformTags: v.FreeformTags, DefinedTags: v.DefinedTags, SystemTags: v.SystemTags,
		SshPublicKey: v.SshPublicKey}
}

// etag is the pool's entity tag: it changes whenever what GET returns does.
func etag(v ce.NodePool) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func (s *Server) lookupPool(id string) (*pool, *sim.Reply) {
	p, ok := s.pools[id]
	if !ok {
		return nil, notFound("node pool", id)
	}
	return p, nil
}

func (s *Server) getPool(req *sim.Request, id string) *sim.Reply {
	p, rep := s.lookupPool(id)
	if rep != nil {
		return rep
	}
	v := p.view()
	rep = jsonReply(http.StatusOK, v)
	rep.Header.Set("etag", etag(v))
	return rep
}

// listPools answers a page of node pool summaries; the page token is
// opaque to clients (here, the offset, encoded).
func (s *Server) listPools(req *sim.Request) *sim.Reply {
	q := req.HTTP.URL.Query()
	compartment := q.Get("compartmentId")
	if compartment == "" {
		return missing("compartmentId")
	}
	size := s.pageSize
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return invalid("limit must be between 1 and 1000.")
		}
		size = n
	}
	offset := 0
	if tok := q.Get("page"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "kpool-page:"))
		if err != nil || err2 != nil || n < 0 || !strings.HasPrefix(string(b), "kpool-page:") {
			return invalid("The page token is invalid.")
		}
		offset = n
	}
	states := q["lifecycleState"]
	var all []ce.NodePoolSummary
	for _, p := range s.sortedPools(compartment, q.Get("clusterId")) {
		if n := q.Get("name"); n != "" && deref(p.np.Name) != n {
			continue
		}
		if len(states) > 0 && !slices.Contains(states, p.lifecycle()) {
			continue
		}
		all = append(all, p.summary())
	}
	if q.Get("sortOrder") == "DESC" {
		slices.Reverse(all)
	}
	out := []ce.NodePoolSummary{}
	if offset < len(all) {
		out = all[offset:min(offset+size, len(all))]
	}
	rep := jsonReply(http.StatusOK, out)
	if offset+size < len(all) {
		rep.Header.Set("opc-next-page", base64.RawURLEncoding.EncodeToString([]byte("kpool-page:"+strconv.Itoa(offset+size))))
	}
	return rep
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
		if w, ok := s.works[id]; ok {
			if p, ok := s.pools[w.poolID]; ok {
				return s.accepted(p, w, http.StatusAccepted)
			}
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
	id := ocid("nodepool", c.Region, s.NewID())
	np := ce.NodePool{CompartmentId: in.CompartmentId, ClusterId: in.ClusterId, Name: in.Name, KubernetesVersion: in.KubernetesVersion,
		NodeMetadata: in.NodeMetadata, NodeSourceDetails: in.NodeSourceDetails, NodeShape: in.NodeShape, InitialNodeLabels: in.InitialNodeLabels,
		SshPublicKey: in.SshPublicKey, FreeformTags: in.FreeformTags,
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
	w := s.begin(req, p, opCreate, stateCreating, 0, deref(np.NodeConfigDetails.Size))
	if token != "" {
		s.tokens[token] = w.id
	}
	rep = s.accepted(p, w, http.StatusAccepted)
	rep.Created, rep.Resource = true, "/"+APIVersion+"/nodePools/"+id
	return rep
}

// accepted answers a call that started a work request: its id in
// opc-work-request-id and, for a create, the pool.
func (s *Server) accepted(p *pool, w *work, status int) *sim.Reply {
	var rep *sim.Reply
	if w.typ == opCreate {
		v := p.view()
		rep = jsonReply(status, v)
		rep.Header.Set("etag", etag(v))
	} else {
		rep = sim.NewReply(status)
	}
	rep.Header.Set("opc-work-request-id", w.id)
	return rep
}

// begin starts a work request on p that moves its nodes from from to to.
func (s *Server) begin(req *sim.Request, p *pool, typ, kind string, from, to int) *work {
	o := req.Start(kind, from, to, 0)
	w := &work{id: ocid("clustersworkrequest", p.cluster.Region, o.ID), typ: typ, compartment: deref(p.np.CompartmentId), poolID: p.id, accepted: req.Now, op: o}
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
		if !w.op.Running() {
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
	switch {
	case w.typ == opDelete && !o.Fails:
		p.state, p.details, p.nodes, p.deletedAt = stateDeleted, "", nil, o.End
	case w.typ == opCreate && o.Fails:
		p.state = stateFailed
		p.details = fmt.Sprintf("Out of host capacity for shape %s in the requested availability domains.%s", deref(p.np.NodeShape), injected)
	case w.typ == opDelete:
		p.state = stateNeedsAttention
		p.details = "The node pool could not be deleted: terminating its instances timed out." + injected
		p.healAt = o.End.Add(o.End.Sub(o.Start))
	case o.Fails:
		p.state = stateNeedsAttention
		p.details = fmt.Sprintf("%d of %d nodes could not be brought to the node pool's configuration: out of host capacity for shape %s.%s",
			max(deref(p.np.NodeConfigDetails.Size)-o.To, 1), deref(p.np.NodeConfigDetails.Size), deref(p.np.NodeShape), injected)
		p.healAt = o.End.Add(o.End.Sub(o.Start)) // as long again as the operation took
	default:
		p.state, p.details = stateActive, ""
	}
}

func (s *Server) updatePool(req *sim.Request, id string) *sim.Reply {
	p, rep := s.lookupPool(id)
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
	case p.state == stateFailed || p.state == stateDeleted:
		return failf(http.StatusConflict, errIncorrectState, "Node pool %s is in state %s and cannot be updated.", p.id, p.state)
	}
	next, rep := s.validateUpdate(p, &in, req.Body)
	if rep != nil {
		return rep
	}
	p.np = next
	w := s.begin(req, p, opUpdate, stateUpdating, len(p.nodes), deref(next.NodeConfigDetails.Size))
	return s.accepted(p, w, http.StatusAccepted)
}

func (s *Server) deletePool(req *sim.Request, id string) *sim.Reply {
	p, rep := s.lookupPool(id)
	if rep != nil {
		return rep
	}
	if rep := ifMatch(req, p); rep != nil {
		return rep
	}
	switch {
	case p.op != nil && p.op.Kind == stateDeleting:
		return s.accepted(p, p.work, http.StatusAccepted) // already being deleted
	case p.op != nil:
		return busy(p)
	case p.state == stateDeleted:
		return notFound("node pool", id)
	}
	w := s.begin(req, p, opDelete, stateDeleting, len(p.nodes), 0)
	return s.accepted(p, w, http.StatusAccepted)
}

func (s *Server) getWork(req *sim.Request, id string) *sim.Reply {
	w, ok := s.works[id]
	if !ok {
		return notFound("work request", id)
	}
	return jsonReply(http.StatusOK, w.view())
}

func (w *work) view() ce.WorkRequest {
	v := ce.WorkRequest{Id: common.String(w.id), OperationType: ce.WorkRequestOperationTypeEnum(w.typ), CompartmentId: common.String(w.compartment),
		TimeAccepted: &common.SDKTime{Time: w.accepted}, TimeStarted: &common.SDKTime{Time: w.accepted}}
	action := ce.WorkRequestResourceActionTypeInProgress
	switch {
	case w.op.Running():
		v.Status = ce.WorkRequestStatusInProgress
	case w.op.Fails:
		v.Status, action = ce.WorkRequestStatusFailed, ce.WorkRequestResourceActionTypeFailed
		v.TimeFinished = &common.SDKTime{Time: w.op.End}
	default:
		v.Status = ce.WorkRequestStatusSucceeded
		v.TimeFinished = &common.SDKTime{Time: w.op.End}
		action = map[string]ce.WorkRequestResourceActionTypeEnum{opCreate: ce.WorkRequestResourceActionTypeCreated,
			opUpdate: ce.WorkRequestResourceActionTypeUpdated, opDelete: ce.WorkRequestResourceActionTypeDeleted}[w.typ]
	}
	v.Resources = []ce.WorkRequestResource{{ActionType: action, EntityType: common.String("nodepool"), Identifier: common.String(w.poolID),
		EntityUri: common.String("/" + APIVersion + "/nodePools/" + w.poolID)}}
	return v
}

// PoolState is a node pool as GetNodePool returns it now, plus what only
// the emulator knows: the configuration each node was created with.
type PoolState struct {
	ce.NodePool
	Etag        string
	NodeConfigs map[string]NodeConfig // by node OCID
}

// PoolOf returns a node pool of a cluster by name as OKE would return it
// now (the newest when several share the name); false if there is none.
func (s *Server) PoolOf(clusterID, name string) (st PoolState, found bool) {
	s.Do(func(now time.Time) {
		s.tick(now)
		p := s.byName(clusterID, name)
		if p == nil {
			return
		}
		v := p.view()
		st, found = PoolState{NodePool: v, Etag: etag(v), NodeConfigs: map[string]NodeConfig{}}, true
		for _, n := range p.nodes {
			st.NodeConfigs[n.id] = n.cfg
		}
	})
	return st, found
}

func (s *Server) byName(clusterID, name string) *pool {
	var found *pool
	for _, p := range s.pools {
		if p.cluster.ID != clusterID || deref(p.np.Name) != name {
			continue
		}
		switch {
		case found == nil, found.state == stateDeleted && p.state != stateDeleted,
			(found.state == stateDeleted) == (p.state == stateDeleted) && p.created.After(found.created):
			found = p
		}
	}
	return found
}

// Mutate changes a node pool behind the client's back, as someone using
// the console would: fn may change its configuration; lifecycle and nodes
// are the emulator's.
func (s *Server) Mutate(clusterID, name string, fn func(*ce.NodePool)) (err error) {
	s.Do(func(now time.Time) {
		s.tick(now)
		p := s.byName(clusterID, name)
		if p == nil {
			err = fmt.Errorf("oke: no node pool %s in cluster %s", name, clusterID)
			return
		}
		v := p.view()
		fn(&v)
		v.Nodes, v.Id, v.LifecycleState, v.LifecycleDetails = nil, nil, "", nil
		p.np = v
	})
	return err
}

// ocid makes an OCI id of a resource type in a region.
func ocid(typ, region, uuid string) string {
	return "ocid1." + typ + ".oc1." + region + "." + strings.ToLower(strings.ReplaceAll(uuid, "-", ""))
}

func shortID(id string) string {
	if len(id) < 10 {
		return id
	}
	return id[len(id)-10:]
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
