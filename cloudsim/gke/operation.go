package gke

import (
	"fmt"
	"strings"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// opInfo is what the protocol keeps of an operation, as its sim.Operation's Data.
type opInfo struct {
	cluster *cluster
	pool    *pool
	opType  string
	// apply, when set, applies the change to the pool when the operation
	// succeeds.
	apply func()
	// version and replace, for an upgrade: the version its new nodes run
	// and how many of the pool's nodes it replaces, one at a time.
	version string
	replace int
	// short, for an upgrade, are the zones whose new instances found no
	// capacity: it fails and changes nothing. err is the error of an
	// operation whose instance groups ran short (capacity.go).
	short map[string]int
	err   *container.Status
}

func infoOf(o *sim.Operation) *opInfo { return o.Data.(*opInfo) }

// start starts an operation of opType on pool p, moving its nodes from
// its ready count to its target, plus extra node replacements.
func (s *Server) start(req *sim.Request, p *pool, opType string, to, extra int, apply func()) *sim.Operation {
	from := p.ready
	if p.op != nil {
		from = p.readyAt(req.Now)
	}
	o := req.Start(opType, from, to, extra)
	o.Data = &opInfo{cluster: p.cluster, pool: p, opType: opType, apply: apply}
	o.Done = finish
	p.op = o
	p.etag = s.NewID()
	return o
}

// finish applies an operation's outcome when it ends.
func finish(o *sim.Operation) {
	in := infoOf(o)
	p := in.pool
	if p.op != o {
		return // a create its pool's delete took over: the delete says what is left
	}
	p.ready, p.op = o.To, nil
	if o.Fails {
		failed(o)
		return
	}
	switch {
	case in.opType == opDelete:
		p.acquire(nil)
		delete(p.cluster.pools, p.np.Name)
		return
	case len(in.short) > 0:
		// An upgrade whose new instances found no capacity: the pool
		// keeps its nodes and says why until its next operation.
		p.acquire(p.wants(p.np))
		in.err = p.stockError(in.short, o.To, o.To-sum(in.short), o.End.Sub(o.Start))
		p.status, p.message = statusRunningWithError, p.stockMessage(in.short, o.End.Sub(o.Start))
		p.cond = []*container.StatusCondition{{Code: codeStockout, CanonicalCode: codeResourceExhausted, Message: p.message}}
		return
	}
	if in.apply != nil {
		in.apply()
	}
	// The instance groups' last try before GKE reports; it releases what
	// an upgrade's old instances held.
	p.acquire(p.wants(p.np))
	p.ready = p.goalIn(p.np.Locations, p.np.Config)
	if short := p.short(); len(short) > 0 {
		in.err = p.stockError(short, p.nodes(), p.ready, o.End.Sub(o.Start))
		p.outOfStock(in.opType, o.End.Sub(o.Start))
		return
	}
	p.status, p.message, p.cond, p.stockout = statusRunning, "", nil, false
}

// failed applies the outcome of an operation that a fault made fail.
func failed(o *sim.Operation) {
	in := infoOf(o)
	p := in.pool
	e := opError(o)
	p.message = e.Message
	p.cond = []*container.StatusCondition{{Code: "GCE_STOCKOUT", CanonicalCode: codeResourceExhausted, Message: e.Message}}
	switch in.opType {
	case opCreate, opDelete:
		p.status = statusError
	default:
		// The change is taken (the instance groups have their new
		// size and template) but the instances did not come: the
		// groups keep trying, and reach it as long again as the
		// operation took.
		p.status, p.ready = statusRunningWithError, o.From
		p.healAt = o.HealAt()
		if in.apply != nil {
			in.apply()
		}
	}
}

// sum is the total of a count by zone.
func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// opError is the error of a failed operation, as GKE words the usual
// causes: Compute Engine out of capacity for creates and resizes, a drain
// that times out for upgrades.
func opError(o *sim.Operation) *container.Status {
	in := infoOf(o)
	const injected = " (fault injected by kpool cloudsim)"
	switch in.opType {
	case opUpgrade:
		return &container.Status{Code: int64(rpcNumber[codeFailedPrecondition]),
			Message: fmt.Sprintf("Node pool %q: upgrading node gke-%s-%s-0 failed: draining the node timed out: a PodDisruptionBudget prevents evicting pod default/web-0.%s", in.pool.np.Name, in.cluster.name, in.pool.np.Name, injected)}
	case opDelete:
		return &container.Status{Code: int64(rpcNumber[codeInternal]),
			Message: fmt.Sprintf("Deleting the instance groups of node pool %q failed: an internal error occurred.%s", in.pool.np.Name, injected)}
	}
	zone := ""
	if len(in.pool.np.Locations) > 0 {
		zone = in.pool.np.Locations[0]
	}
	return &container.Status{Code: int64(rpcNumber[codeResourceExhausted]),
		Message: fmt.Sprintf("Google Compute Engine: The zone 'projects/%s/zones/%s' does not have enough resources available to fulfill the request. Try a different zone, or try again later.%s", in.cluster.project, zone, injected)}
}

// operation is an Operation as GKE returns it.
func (s *Server) operation(base string, o *sim.Operation, now time.Time) *container.Operation {
	in := infoOf(o)
	c := in.cluster
	out := &container.Operation{
		Name: "operation-" + o.ID, OperationType: in.opType, Zone: c.location, Location: c.location,
		SelfLink:   fmt.Sprintf("%s/v1/projects/%s/locations/%s/operations/operation-%s", base, c.project, c.location, o.ID),
		TargetLink: base + "/v1/" + in.pool.path(),
		StartTime:  o.Start.UTC().Format(time.RFC3339Nano),
		Status:     opRunning,
	}
	switch {
	case o.Running() && !now.After(o.Start):
		out.Status = opPending
	case !o.Running():
		out.Status = opDone
		out.EndTime = o.End.UTC().Format(time.RFC3339Nano)
		if o.Fails {
			out.Error = opError(o)
		} else if in.err != nil {
			out.Error = in.err
		}
		if out.Error != nil {
			out.StatusMessage = out.Error.Message
		}
	}
	return out
}

func (s *Server) getOperation(req *sim.Request) *sim.Reply {
	project, location, name := req.HTTP.PathValue("project"), req.HTTP.PathValue("location"), req.HTTP.PathValue("operation")
	id, ok := strings.CutPrefix(name, "operation-")
	var o *sim.Operation
	if ok {
		o = req.Operation(id)
	}
	if o == nil || infoOf(o).cluster.project != project || infoOf(o).cluster.location != location {
		return errorReply(codeNotFound, "Not found: projects/%s/locations/%s/operations/%s.", project, location, name)
	}
	return jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
}
