package oke

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// DeleteNode (DELETE /nodePools/{nodePoolId}/node/{nodeId}, the SDK's
// DeleteNodeRequest: isDecrementSize, overrideEvictionGraceDuration and
// isForceDeletionAfterOverrideGraceDuration in the query, if-match)
// deletes one node of a pool, named by its compute instance's OCID, and
// with isDecrementSize lowers the pool's size by one (OKE's "Deleting
// Worker Nodes"). It answers 202 with an opc-work-request-id
// (DeleteNodeResponse carries headers only); the node is DELETING, still a
// node of the cluster's Kubernetes API, until its work request ends, then
// gone from both. Several may run at once: the cluster autoscaler's OCI
// provider deletes a node group's nodes one DeleteNode each, without
// waiting, and reads 409 as a node already being deleted and 404 as one
// gone (cloudprovider/oci/nodepools/cache.go removeInstance).

// deleteNode answers DeleteNode.
func (s *Server) deleteNode(req *sim.Request) *sim.Reply {
	p, rep := s.lookupPool(req)
	if rep != nil {
		return rep
	}
	q := req.HTTP.URL.Query()
	decrement, rep := boolQuery(q.Get("isDecrementSize"), "isDecrementSize")
	if rep != nil {
		return rep
	}
	if _, rep := boolQuery(q.Get("isForceDeletionAfterOverrideGraceDuration"), "isForceDeletionAfterOverrideGraceDuration"); rep != nil {
		return rep
	}
	if g := q.Get("overrideEvictionGraceDuration"); g != "" {
		if d, ok := parseISODuration(g); !ok || d > maxEvictionGrace {
			return invalid("overrideEvictionGraceDuration must be an ISO 8601 duration from PT0M to PT60M, got %s.", g)
		}
	}
	if rep := ifMatch(req, p); rep != nil {
		return rep
	}
	id := req.HTTP.PathValue("node")
	i := slices.IndexFunc(p.nodes, func(n *node) bool { return n.id == id })
	switch {
	case p.state == stateDeleted || p.op != nil && p.op.Kind == stateDeleting:
		return notFound("node pool", p.id)
	case i < 0:
		return notFound("node", id)
	case p.nodes[i].del != nil:
		return failf(http.StatusConflict, errIncorrectState, "Node %s is already being deleted by work request %s.", id, p.nodes[i].del.id)
	case p.op != nil:
		return busy(p)
	case p.state == stateFailed:
		return failf(http.StatusConflict, errIncorrectState, "Node pool %s is in state %s.", p.id, p.state)
	case !decrement:
		// OKE makes a new node in its place; not emulated.
		return invalid("isDecrementSize false (a replacement node) is not emulated by kpool cloudsim: give isDecrementSize=true.")
	}
	return s.accepted(s.beginNodeDelete(req, p, p.nodes[i]), http.StatusAccepted)
}

// maxEvictionGrace is the longest overrideEvictionGraceDuration
// (DeleteNodeRequest: "Default PT60M, Min PT0M, Max: PT60M").
const maxEvictionGrace = time.Hour

// boolQuery reads a boolean query parameter ("" is false).
func boolQuery(v, name string) (bool, *sim.Reply) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, invalid("%s must be true or false, got %s.", name, v)
	}
	return b, nil
}

// beginNodeDelete lowers the pool's size and starts the node's deletion,
// its own work request (NODEPOOL_UPDATE: the pool's size changes; the
// type is the emulator's choice, OKE's is not published).
func (s *Server) beginNodeDelete(req *sim.Request, p *pool, n *node) *work {
	o := req.Start(stateUpdating, 1, 0, 0)
	s.seq++
	w := &work{id: ocid("clustersworkrequest", p.cluster.Region, o.ID), typ: opUpdate, compartment: ptr.Deref(p.np.CompartmentId, ""), poolID: p.id,
		accepted: req.Now, seq: s.seq, op: o}
	w.log(req.Now, "Node %s of node pool %s: delete accepted, the node pool's size decremented.", n.id, p.id)
	s.works[w.id] = w
	s.forget()
	size := max(ptr.Deref(p.np.NodeConfigDetails.Size, 0)-1, 0)
	p.np.NodeConfigDetails.Size = &size
	n.del, n.state = w, string(ce.NodeLifecycleStateDeleting)
	o.Data = w
	o.Done = func(o *sim.Operation) {
		n.del = nil
		if o.Fails {
			// The node stays; the next update terminates it (the size
			// is already one lower).
			n.state = string(ce.NodeLifecycleStateActive)
			w.fail(o.End, "InternalError", fmt.Sprintf("Terminating the instance of node %s timed out.%s", n.id, injected))
			return
		}
		p.nodes = slices.DeleteFunc(p.nodes, func(x *node) bool { return x == n })
		w.log(o.End, "Node %s of node pool %s deleted.", n.id, p.id)
	}
	return w
}

// removing reports whether a node of the pool is being deleted by
// DeleteNode: the pool takes no other change until it is gone.
func (p *pool) removing() *work {
	for _, n := range p.nodes {
		if n.del != nil {
			return n.del
		}
	}
	return nil
}

// removingBusy refuses a change while a node deletion runs.
func removingBusy(p *pool, w *work) *sim.Reply {
	return failf(http.StatusConflict, errIncorrectState, "Node pool %s has a node being deleted: another work request (%s) is in progress on it.", p.id, w.id)
}
