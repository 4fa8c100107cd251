package oke

import (
	"fmt"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Host capacity (README.md, "Capacity"): each node OKE launches takes one
// from the engine's capacity table (sim.Capacity) for its offering, the
// availability domain as placementConfigs name it, the pool's shape, and
// preemptible or not. A node that gets none is not launched: it stays in
// the pool as OKE leaves it, without a compute instance (an empty id),
// INACTIVE, with the nodeError Compute answered (500 InternalError "Out of
// host capacity."); the pool's work request FAILS with the count of nodes
// that could not launch. Such a node holds no capacity; nothing retries it
// by itself: an update of the pool drops the placeholders and launches
// what its size still lacks.

// Compute's answer when an availability domain has no host for a shape:
// "500-InternalError, Out of host capacity." (OCI's API errors; the node
// errors cluster-autoscaler's OCI provider classifies as out of resources:
// code InternalError, a message containing "Out of host capacity").
const (
	capacityCode    = "InternalError"
	capacityMessage = "Out of host capacity."
	capacityStatus  = "500"
)

// offering is where a node of the pool takes its capacity.
func (p *pool) offering(n *node) sim.Offering {
	return sim.Offering{Zone: n.ad, MachineType: n.cfg.Shape, Spot: n.cfg.Preemptible}
}

// launch takes the new node's capacity; without any, the node is left as
// OKE leaves a node whose instance could not launch.
func (s *Server) launch(p *pool, n *node) {
	o := p.offering(n)
	if s.Capacity().Take(o, 1) == 1 {
		s.held[n] = o
		return
	}
	n.id, n.state = "", string(ce.NodeLifecycleStateInactive)
	n.nodeErr = &ce.NodeError{Code: common.String(capacityCode), Message: common.String(capacityMessage),
		Status: common.String(capacityStatus), OpcRequestId: common.String(s.NewID())}
}

// failed reports whether the node could not launch (no capacity).
func (n *node) failed() bool { return n.nodeErr != nil }

// failedNodes counts the pool's nodes that could not launch.
func (p *pool) failedNodes() int {
	c := 0
	for _, n := range p.nodes {
		if n.failed() {
			c++
		}
	}
	return c
}

// dropFailed removes the nodes that could not launch: an update of the
// pool starts again from the nodes it has (they hold no capacity).
func (p *pool) dropFailed() {
	kept := p.nodes[:0]
	for _, n := range p.nodes {
		if !n.failed() {
			kept = append(kept, n)
		}
	}
	clear(p.nodes[len(kept):])
	p.nodes = kept
}

// settleCapacity gives back the capacity of every node gone from its
// pool since the last time (scaled down, deleted, replaced, the pool
// deleted), wherever it went.
func (s *Server) settleCapacity() {
	live := map[*node]bool{}
	for _, p := range s.pools {
		for _, n := range p.nodes {
			live[n] = true
		}
	}
	for n, o := range s.held {
		if !live[n] {
			s.Capacity().Release(o, 1)
			delete(s.held, n)
		}
	}
}

// shortage is the work request error and the pool's lifecycleDetails when
// n nodes could not launch, as OKE words it ("2 node(s) launch failure.
// Reason for failure on one of the nodes : … Out of host capacity.").
func shortage(n int) string {
	return fmt.Sprintf("%d node(s) launch failure. Reason for failure on one of the nodes : (500, %s) %s", n, capacityCode, capacityMessage)
}

// failShort ends a work request whose nodes could not all launch: FAILED,
// the pool NEEDS_ATTENTION with the nodes it got, until an update (it does
// not heal by itself: capacity is not retried).
func (p *pool) failShort(w *work, at time.Time) {
	msg := shortage(p.failedNodes())
	p.state, p.details, p.healAt = stateNeedsAttention, msg, time.Time{}
	w.settled, w.failed, w.end = true, true, at // FAILED, though no fault was injected
	w.fail(at, capacityCode, msg)
}

// Available is how many nodes an offering can still launch (ok false:
// unlimited), once the emulator's clock has settled what ended.
func (s *Server) Available(o sim.Offering) (n int, ok bool) {
	s.Do(func(now time.Time) {
		s.tick(now)
		n, ok = s.Capacity().Available(o)
	})
	return n, ok
}

// shortCycle ends the pool's node cycling when nodes it just added could
// not launch (FAILED, the pool NEEDS_ATTENTION with the old nodes it
// still has); true then.
func (p *pool) shortCycle(added []*node, at time.Time) bool {
	n := 0
	for _, x := range added {
		if x.failed() {
			n++
		}
	}
	if n == 0 {
		return false
	}
	p.endCycle(at, capacityCode, shortage(n))
	return true
}
