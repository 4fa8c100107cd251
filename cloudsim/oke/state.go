package oke

import (
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/oracle/oci-go-sdk/v65/common"
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

// AddPool adds an ACTIVE node pool of size nodes of a flexible shape to a
// cluster, placed in every availability domain it has a subnet in.
func (s *Server) AddPool(clusterID, name, shape string, ocpus, memoryInGBs float32, size int) {
	s.Do(func(now time.Time) {
		c, ok := s.clusters[clusterID]
		if !ok {
			return
		}
		var pcs []ce.NodePoolPlacementConfigDetails
		for _, ad := range kpool.SortedKeys(c.Subnets) {
			pcs = append(pcs, ce.NodePoolPlacementConfigDetails{AvailabilityDomain: common.String(ad), SubnetId: common.String(c.Subnets[ad])})
		}
		id := ocid("nodepool", c.Region, s.NewID())
		s.seq++
		p := &pool{id: id, cluster: c, state: stateActive, created: now, seq: s.seq, np: ce.NodePool{
			CompartmentId: common.String(c.CompartmentID), ClusterId: common.String(c.ID), Name: common.String(name),
			KubernetesVersion: common.String(c.Version), NodeShape: common.String(shape),
			NodeShapeConfig:   &ce.NodeShapeConfig{Ocpus: common.Float32(ocpus), MemoryInGBs: common.Float32(memoryInGBs)},
			NodeSourceDetails: ce.NodeSourceViaImageDetails{ImageId: common.String(c.ImageID), BootVolumeSizeInGBs: common.Int64(50)},
			InitialNodeLabels: []ce.KeyValue{}, FreeformTags: map[string]string{},
			NodeConfigDetails: &ce.NodePoolNodeConfigDetails{Size: common.Int(size), PlacementConfigs: pcs, FreeformTags: map[string]string{}},
		}}
		s.pools[id] = p
		for range size {
			p.addNode(s)
		}
		activate(p.nodes)
		if n := p.failedNodes(); n > 0 {
			p.state, p.details = stateNeedsAttention, shortage(n)
		}
		s.syncKube()
	})
}
