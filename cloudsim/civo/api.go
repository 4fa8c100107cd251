package civo

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// PoolState is a pool as GET returns it now, plus what only the emulator
// knows.
type PoolState struct {
	Pool
	// Operation is the kind of the operation in progress (Creating,
	// Scaling, Deleting); "" when idle.
	Operation string
	// Created is when the pool was created.
	Created time.Time
}

// PoolOf returns a pool as Civo would return it now; false if there is
// none. region must be the cluster's.
func (s *Server) PoolOf(region, clusterID, id string) (st PoolState, found bool) {
	s.Do(func(now time.Time) {
		s.heal(now)
		p, err := s.poolOf(region, clusterID, id)
		if err != nil {
			return
		}
		st, found = PoolState{Pool: p.view(now), Created: p.created}, true
		if p.op != nil {
			st.Operation = p.op.Kind
		}
	})
	return st, found
}

// Mutate changes a pool behind the client's back, as someone using Civo's
// dashboard would: fn may change its labels, taints, count, size and public
// IP setting (instances and the id are the emulator's). A count change is
// applied at once, with no operation.
func (s *Server) Mutate(region, clusterID, id string, fn func(*Pool)) (err error) {
	s.Do(func(now time.Time) {
		var p *pool
		if p, err = s.poolOf(region, clusterID, id); err != nil {
			return
		}
		v := p.view(now)
		fn(&v)
		delete(v.Labels, PoolLabel)
		p.labels, p.taints, p.size, p.publicIP = v.Labels, v.Taints, v.Size, v.PublicIPNodePool
		if v.Count >= 1 && v.Count != p.count && p.op == nil {
			p.count = v.Count
			from := len(p.insts)
			s.grow(p, p.count-from, now) // those short of capacity stay in ERROR
			for _, in := range p.insts[min(from, len(p.insts)):] {
				if !in.short {
					in.status = StatusActive
				}
			}
			p.truncate(s, p.count)
		}
		s.syncNodes(p.cluster, now)
	})
	return err
}

// poolOf finds a pool for the emulator's own methods, under the engine's
// lock (Do). region must be the cluster's.
func (s *Server) poolOf(region, clusterID, id string) (*pool, error) {
	c, ok := s.clusters[clusterID]
	if !ok || !strings.EqualFold(c.Region, region) {
		return nil, fmt.Errorf("civo: no cluster %s in %s", clusterID, region)
	}
	if p, ok := c.pools[id]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("civo: no pool %s in cluster %s", id, clusterID)
}

// find finds the pool of the path in the call's cluster.
func (c *call) find() (*pool, *sim.Reply) {
	if p, ok := c.cluster.pools[c.pool]; ok {
		return p, nil
	}
	// The code is civogo's (DatabaseClusterPoolNotFoundError, which the
	// Terraform provider waits for after a delete); the reason is the
	// emulator's, in the words of Civo's recorded not-found reasons.
	return nil, failf(http.StatusNotFound, codePoolNotFound, "Failed to find the Kubernetes cluster pool in the internal database")
}

func (s *Server) listPools(req *call) *sim.Reply {
	out := []Pool{}
	for _, p := range req.cluster.sortedPools() {
		out = append(out, p.view(req.Now))
	}
	return jsonReply(out)
}

func (s *Server) getPool(req *call) *sim.Reply {
	p, rep := req.find()
	if rep != nil {
		return rep
	}
	return jsonReply(p.view(req.Now))
}

func (s *Server) createPool(req *call) *sim.Reply {
	c, in := req.cluster, req.body
	if in.ID == "" {
		in.ID = s.NewID() // Civo names a pool it is given no id for
	}
	if _, ok := c.pools[in.ID]; ok {
		return failf(http.StatusConflict, codeDuplicate, "A pool with the id %s already exists in Kubernetes cluster %s", in.ID, c.ID)
	}
	if rep := validateCreate(in); rep != nil {
		return rep
	}
	if rep := s.checkQuota(in.Size, *in.Count); rep != nil {
		return rep
	}
	if rep := s.checkCapacity(in.Size, c.Region, *in.Count); rep != nil {
		return rep
	}
	p := &pool{cluster: c, id: in.ID, size: in.Size, count: *in.Count, labels: maps.Clone(in.Labels),
		publicIP: in.PublicIPNodePool != nil && *in.PublicIPNodePool, created: req.Now}
	if in.Taints != nil {
		p.taints = slices.Clone(*in.Taints)
	}
	delete(p.labels, PoolLabel)
	got := s.grow(p, p.count, req.Now) // the rest are short of capacity: ERROR at once
	c.pools[p.id] = p
	s.start(req.Request, p, opCreating, 0, got)
	rep := success(p.id)
	rep.Created, rep.Resource = true, req.HTTP.URL.Path+"/"+p.id
	return rep
}

func (s *Server) updatePool(req *call) *sim.Reply {
	p, rep := req.find()
	if rep != nil {
		return rep
	}
	in := req.body
	if rep := validateUpdate(p, in); rep != nil {
		return rep
	}
	target := p.count
	if in.Count != nil {
		target = *in.Count
	}
	// A PUT of the count rebuilds what a failed operation left in ERROR.
	rebuild := in.Count != nil && p.failedNodes() > 0
	resize := target != p.count || rebuild
	if p.op != nil && (p.op.Kind == opDeleting || resize) {
		return busy(p)
	}
	if rep := s.checkQuota(p.size, target-len(p.insts)); rep != nil {
		return rep
	}
	if resize {
		// The nodes to start: those beyond the ones that stay (a PUT of the
		// count drops the nodes in ERROR, and starts them again).
		if rep := s.checkCapacity(p.size, p.cluster.Region, target-(len(p.insts)-p.failedNodes())); rep != nil {
			return rep
		}
	}
	if in.Labels != nil {
		p.labels = maps.Clone(in.Labels)
		delete(p.labels, PoolLabel)
	}
	if in.Taints != nil {
		p.taints = slices.Clone(*in.Taints)
	}
	if resize {
		p.healAt = time.Time{}
		p.dropErrors(s, false)
		from := len(p.insts)
		p.count = target
		to := target
		if target > from {
			to = from + s.grow(p, target-from, req.Now) // the rest are short of capacity
		}
		if from != to {
			s.start(req.Request, p, opScaling, from, to)
		}
	}
	return jsonReply(p.view(req.Now))
}

// busy answers a change the pool's running operation forbids (civogo's
// CannotScaleAlreadyRescalingClusterError; the status is the emulator's).
func busy(p *pool) *sim.Reply {
	return failf(http.StatusConflict, codeBusy, "The pool %s is already %s; try again once it is done", p.id, strings.ToLower(p.op.Kind))
}

func (s *Server) deletePool(req *call) *sim.Reply {
	p, rep := req.find()
	if rep != nil {
		return rep
	}
	if p.op != nil && p.op.Kind == opDeleting {
		return success(p.id) // already going
	}
	insts, _ := p.statuses(req.Now)
	p.truncate(s, len(insts)) // those a running shrink removed are gone
	s.start(req.Request, p, opDeleting, len(insts), 0)
	return success(p.id)
}

// deleteInstance removes one node of a pool (civogo's
// DeleteKubernetesClusterPoolInstance): the pool's count goes down by
// one and that node, not the newest, is the one removed (Civo's docs,
// scaling-nodes: "any instance that has been explicitly requested via the
// API to be deleted" goes first); it stays a node of the cluster's
// Kubernetes API until its instance is gone (nodes.go). Instance deletes
// may follow one another while the pool shrinks (the cluster autoscaler's
// Civo provider deletes a node group's nodes one call each, in a loop,
// without waiting: civo_node_group.go DeleteNodes); one of an instance
// already going answers success again (the emulator's choice).
func (s *Server) deleteInstance(req *call) *sim.Reply {
	p, rep := req.find()
	if rep != nil {
		return rep
	}
	id := req.HTTP.PathValue("instance")
	insts, _ := p.statuses(req.Now)
	i := slices.IndexFunc(insts, func(in *instance) bool { return in.id == id })
	switch {
	case i < 0:
		return failf(http.StatusNotFound, codeInstanceNotFound, "Failed to find the instance %s in the Kubernetes cluster pool %s", id, p.id)
	case i >= p.count && p.op != nil && !grows(p.op) && p.op.Kind == opScaling:
		return success(id) // already going
	case p.op != nil && (p.op.Kind != opScaling || grows(p.op)):
		return busy(p)
	case p.count <= 1:
		return failf(http.StatusBadRequest, codeParameterInvalid, "The pool %s has one node: delete the pool instead", p.id)
	}
	// The instance goes last of those that stay, first of those going:
	// statuses and finish remove a pool's instances from its end.
	p.truncate(s, len(insts)) // those a running shrink removed are gone
	rest := append(slices.Clone(insts[:i]), insts[i+1:]...)
	p.insts = slices.Concat(rest[:p.count-1], []*instance{insts[i]}, rest[p.count-1:])
	p.count--
	s.start(req.Request, p, opScaling, len(p.insts), p.count)
	return success(id)
}
