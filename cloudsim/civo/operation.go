package civo

import (
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// start begins an operation on p from..to nodes, superseding any other
// (its end then changes nothing).
func (s *Server) start(req *sim.Request, p *pool, kind string, from, to int) {
	o := req.Start(kind, from, to, 0)
	p.op, p.healAt = o, time.Time{}
	o.Data = &opData{pool: p, from: from, to: to}
	o.Done = func(o *sim.Operation) { s.finish(o, p) }
}

// opData is the emulator's record of an operation: the node counts it
// was asked to go between (a failed one's To is half way, which for a
// shrink of one node is From).
type opData struct {
	pool     *pool
	from, to int
}

// grows reports whether an operation adds nodes.
func grows(o *sim.Operation) bool {
	d := o.Data.(*opData)
	return d.to > d.from
}

// finish applies an operation's outcome to its pool when it ends; the
// nodes it removes give their capacity back.
func (s *Server) finish(o *sim.Operation, p *pool) {
	if p.op != o {
		return // superseded
	}
	p.op = nil
	switch {
	case o.Kind == opDeleting && !o.Fails:
		s.release(p.insts...)
		delete(p.cluster.pools, p.id)
		return
	case o.Kind == opDeleting:
		// The nodes that could not be removed keep running; the pool stays.
		p.truncate(s, o.To)
		for _, in := range p.insts {
			if !in.short {
				in.status = StatusActive
			}
		}
		return
	case grows(o):
		for i, in := range p.insts {
			if i >= o.From && !in.short {
				in.status = StatusActive
				if i >= o.To {
					in.status = StatusError // the build failed
				}
			}
		}
	default: // shrank
		p.truncate(s, o.To)
		for i, in := range p.insts {
			if i >= p.count {
				in.status = StatusError // the removal failed
			}
		}
	}
	if o.Fails {
		p.healAt = o.HealAt()
	}
}

// truncate keeps the pool's first n nodes; those removed give their
// capacity back.
func (p *pool) truncate(s *Server, n int) {
	n = min(n, len(p.insts))
	s.release(p.insts[n:]...)
	p.insts = p.insts[:n]
}

// heal finishes what a failed operation left: nodes that failed to build
// are up, those that failed to go are gone. Nodes that could not start
// for want of capacity are not healed: Civo is not known to retry them
// (README.md, "Capacity"); a PUT of the count asks again.
func (p *pool) heal(s *Server, now time.Time) {
	if p.op != nil || !sim.Due(p.healAt, now) {
		return
	}
	p.healAt = time.Time{}
	p.dropErrors(s, true)
}

// dropErrors removes the nodes in ERROR (replace: those within the count
// come back ACTIVE instead, but those short of capacity stay as they are);
// those removed give their capacity back.
func (p *pool) dropErrors(s *Server, replace bool) {
	var keep []*instance
	for i, in := range p.insts {
		switch {
		case in.status != StatusError:
		case replace && in.short:
		case replace && i < p.count:
			in.status = StatusActive
		default:
			s.release(in)
			continue
		}
		keep = append(keep, in)
	}
	p.insts = keep
}

// failedNodes counts the pool's nodes in ERROR.
func (p *pool) failedNodes() int {
	n := 0
	for _, in := range p.insts {
		if in.status == StatusError {
			n++
		}
	}
	return n
}
