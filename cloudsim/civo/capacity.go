package civo

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Capacity: Civo has no zones, so a size is an offering of the engine's
// capacity table with zone "" and no spot (Civo sells none). The table is
// the emulator's, every region alike (README.md, "Capacity").

// offering is where a node of size counts in the capacity table.
func offering(size string) sim.Offering { return sim.Offering{MachineType: size} }

// codeCapacity is Civo's code for running out of capacity (civogo's
// errors.go: "out_of_capacity", OutOFCapacityError): the answer to a
// create or scale that can start none of its nodes, and the reason of the
// cluster's WorkerNodesReady condition while a pool lacks nodes for it.
const codeCapacity = "out_of_capacity"

// checkCapacity refuses a create or scale up that needs nodes of size
// when the region can start none of them: 400 out_of_capacity (the code
// civogo's table holds; the status, the reason and "none" rather than
// "not all" are the emulator's).
func (s *Server) checkCapacity(size, region string, need int) *sim.Reply {
	if need <= 0 {
		return nil
	}
	if n, limited := s.Capacity().Available(offering(size)); !limited || n > 0 {
		return nil
	}
	return detailed(http.StatusBadRequest, codeCapacity, fmt.Sprintf("Sorry, %s is out of capacity for the size %s", region, size),
		fmt.Sprintf("%d more %s nodes asked for, none can start; try another size or later", need, size))
}

// grow adds n nodes to p, BUILDING, each holding a node of the pool's
// size in the capacity table; those the table cannot give are made in
// ERROR at once and hold none (short): OpenStack, under Civo's instances,
// fails a build that finds no host. It returns how many got capacity.
func (s *Server) grow(p *pool, n int, now time.Time) int {
	got := s.Capacity().Take(offering(p.size), n)
	for i := range n {
		in := s.newInstance(p, now)
		if i < got {
			in.held = p.size
		} else {
			in.status, in.short = StatusError, true
		}
		p.insts = append(p.insts, in)
	}
	return got
}

// release gives back the capacity the nodes removed held.
func (s *Server) release(insts ...*instance) {
	for _, in := range insts {
		if in.held != "" {
			s.Capacity().Release(offering(in.held), 1)
			in.held = ""
		}
	}
}

// shortNodes counts the pool's nodes that could not start for want of
// capacity.
func (p *pool) shortNodes() int {
	n := 0
	for _, in := range p.insts {
		if in.short {
			n++
		}
	}
	return n
}

// condition is a cluster's condition as Civo's cluster GET has it
// (civogo's Condition: type, status, synced, last_transition_time,
// reason, message).
type condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Synced             bool      `json:"synced"`
	LastTransitionTime time.Time `json:"last_transition_time"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
}

// conditions are the cluster's conditions at now, of the three types the
// civo CLI shows (cmd/kubernetes: ControlPlaneReady, WorkerNodesReady,
// ClusterVersionSync). WorkerNodesReady is True when every pool has its
// count of ACTIVE nodes; while a pool has nodes that could not start for
// want of capacity it is False with the reason out_of_capacity and a
// message naming each such pool ("pool <id>: ..."; pools apart by "; ").
func (c *cluster) conditions(now time.Time) []condition {
	workers := condition{Type: "WorkerNodesReady", Status: "True", Synced: true, LastTransitionTime: c.created.UTC()}
	var short []string
	for _, p := range c.sortedPools() {
		_, st := p.statuses(now)
		active := 0
		for _, v := range st {
			if v == StatusActive {
				active++
			}
		}
		if active != p.count || len(st) != p.count {
			workers.Status = "False"
		}
		if n := p.shortNodes(); n > 0 {
			short = append(short, fmt.Sprintf("pool %s: %d of %d nodes could not start: %s is out of capacity for the size %s", p.id, n, p.count, c.Region, p.size))
			if t := p.shortSince(); t.After(workers.LastTransitionTime) {
				workers.LastTransitionTime = t.UTC()
			}
		}
	}
	if len(short) > 0 {
		workers.Reason, workers.Message = codeCapacity, strings.Join(short, "; ")
	}
	return []condition{
		{Type: "ControlPlaneReady", Status: "True", Synced: true, LastTransitionTime: c.created.UTC()},
		workers,
		{Type: "ClusterVersionSync", Status: "True", Synced: true, LastTransitionTime: c.created.UTC()},
	}
}

// shortSince is when the pool's first node short of capacity was asked for.
func (p *pool) shortSince() time.Time {
	var t time.Time
	for _, in := range p.insts {
		if in.short && (t.IsZero() || in.created.Before(t)) {
			t = in.created
		}
	}
	return t
}
