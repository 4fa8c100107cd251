package oke

import (
	"fmt"
	"strings"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"
)

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
		if p.cluster.ID != clusterID || ptr.Deref(p.np.Name, "") != name {
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
