package oke

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The Cluster Autoscaler add-on's configuration (docs: "Cluster Autoscaler"
// configuration arguments, configuration-arguments-cluster-autoscaler.htm):
// nodes is a comma-separated list of MIN:MAX:NODEPOOL_OCID, one per node
// pool the autoscaler manages; authType is instance or workload. Other
// keys are taken as given.

// Bounds is one entry of the nodes configuration.
type Bounds struct {
	Min, Max int
	Pool     string // the node pool's OCID
}

// ParseNodes reads a nodes value; an entry that is not MIN:MAX:OCID is
// an error naming it.
func ParseNodes(v string) ([]Bounds, error) {
	var out []Bounds
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.SplitN(part, ":", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("%q is not MIN:MAX:NODEPOOL_OCID", part)
		}
		lo, err1 := strconv.Atoi(f[0])
		hi, err2 := strconv.Atoi(f[1])
		switch {
		case err1 != nil || err2 != nil || lo < 0 || hi < lo:
			return nil, fmt.Errorf("%q: MIN and MAX must be whole numbers with 0 <= MIN <= MAX", part)
		case !strings.HasPrefix(f[2], "ocid1.nodepool."):
			return nil, fmt.Errorf("%q: %s is not a node pool OCID", part, f[2])
		}
		out = append(out, Bounds{Min: lo, Max: hi, Pool: f[2]})
	}
	return out, nil
}

// maxConfigLength bounds an add-on configuration's key and value: 1-255
// characters (the API reference's AddonConfiguration, as Oracle publishes
// it for the 20180222 API in the Private Cloud Appliance's copy: "Minimum
// Length: 1, Maximum Length: 255").
const maxConfigLength = 255

// checkAddonConfig refuses a configuration the add-on would not take:
// for the Cluster Autoscaler, a nodes value that does not parse or an
// authType other than instance or workload; for any add-on, a key twice.
func checkAddonConfig(name string, configs []ce.AddonConfiguration) *sim.Reply {
	seen := map[string]bool{}
	for i, c := range configs {
		key, value := ptr.Deref(c.Key, ""), ptr.Deref(c.Value, "")
		switch {
		case len(key) < 1 || len(key) > maxConfigLength:
			return invalid("configurations[%d].key: size must be between 1 and %d.", i, maxConfigLength)
		case len(value) < 1 || len(value) > maxConfigLength:
			return invalid("configurations[%d].value: size must be between 1 and %d.", i, maxConfigLength)
		case seen[key]:
			return invalid("configurations: the key %s is given twice.", key)
		}
		seen[key] = true
		if name != AutoscalerAddon {
			continue
		}
		switch key {
		case "nodes":
			if _, err := ParseNodes(value); err != nil {
				return invalid("Invalid value of configuration nodes: %v.", err)
			}
		case "authType":
			if value != "instance" && value != "workload" {
				return invalid("Invalid value of configuration authType: %q (instance or workload).", value)
			}
		}
	}
	return nil
}

// AddonConfig returns an add-on's configuration on a cluster, by key,
// and whether it is installed.
func (s *Server) AddonConfig(clusterID, name string) (config map[string]string, installed bool) {
	s.Do(func(now time.Time) {
		s.tick(now)
		c, ok := s.clusters[clusterID]
		if !ok {
			return
		}
		a, ok := c.addons[name]
		if !ok {
			return
		}
		config, installed = map[string]string{}, true
		for _, cfg := range a.configs {
			config[ptr.Deref(cfg.Key, "")] = ptr.Deref(cfg.Value, "")
		}
	})
	return config, installed
}

// AutoscalerNodes returns the Cluster Autoscaler add-on's nodes value on a
// cluster and whether the add-on is installed.
func (s *Server) AutoscalerNodes(clusterID string) (nodes string, installed bool) {
	config, installed := s.AddonConfig(clusterID, AutoscalerAddon)
	return config["nodes"], installed
}

// SetDemand is the emulated cluster asking for nodes in a node pool, as
// pending pods or idle nodes make the Cluster Autoscaler do: when the
// add-on is installed and has an entry for the pool, the pool's size moves
// to nodes held within the entry's bounds (its nodes come and go at once,
// ACTIVE); it returns the new size. A pool the autoscaler does not manage,
// or one a work request holds, is an error and keeps its size.
func (s *Server) SetDemand(clusterID, poolName string, nodes int) (size int, err error) {
	s.Do(func(now time.Time) {
		s.tick(now)
		p := s.byName(clusterID, poolName)
		if p == nil || p.state == stateDeleted {
			err = fmt.Errorf("oke: no node pool %s in cluster %s", poolName, clusterID)
			return
		}
		a := p.cluster.addons[AutoscalerAddon]
		if a == nil || a.state == ce.AddonLifecycleStateDeleting {
			err = fmt.Errorf("oke: cluster %s has no Cluster Autoscaler add-on", clusterID)
			return
		}
		b, ok := entryOf(a, p.id)
		switch {
		case !ok:
			err = fmt.Errorf("oke: the Cluster Autoscaler add-on has no entry for node pool %s", p.id)
			return
		case p.op != nil:
			err = fmt.Errorf("oke: node pool %s is %s", poolName, p.lifecycle())
			return
		case p.removing() != nil:
			err = fmt.Errorf("oke: node pool %s has a node being deleted", poolName)
			return
		}
		size = min(max(nodes, b.Min), b.Max)
		p.np.NodeConfigDetails.Size = &size
		p.resize(s, size)
	})
	return size, err
}

// entryOf is the add-on's entry for a node pool.
func entryOf(a *addon, poolID string) (Bounds, bool) {
	for _, cfg := range a.configs {
		if ptr.Deref(cfg.Key, "") != "nodes" {
			continue
		}
		entries, _ := ParseNodes(ptr.Deref(cfg.Value, ""))
		for _, b := range entries {
			if b.Pool == poolID {
				return b, true
			}
		}
	}
	return Bounds{}, false
}

// resize brings the pool to size nodes at once, ACTIVE, as heal does;
// those that find no capacity stay as they failed and the pool
// NEEDS_ATTENTION (capacity.go).
func (p *pool) resize(s *Server, size int) {
	p.dropFailed()
	for len(p.nodes) > size {
		p.victim()
		p.nodes = p.nodes[:len(p.nodes)-1]
	}
	for len(p.nodes) < size {
		p.addNode(s)
	}
	activate(p.nodes)
	s.settleCapacity()
	if n := p.failedNodes(); n > 0 {
		p.state, p.details, p.healAt = stateNeedsAttention, shortage(n), time.Time{}
	} else if p.state == stateNeedsAttention {
		p.state, p.details, p.healAt = stateActive, "", time.Time{}
	}
}

// SetAddon installs an add-on, ACTIVE, or sets its configuration, as
// someone using the console would.
func (s *Server) SetAddon(clusterID, name string, configs map[string]string) error {
	var err error
	s.Do(func(now time.Time) {
		c, ok := s.clusters[clusterID]
		if !ok {
			err = fmt.Errorf("oke: no cluster %s", clusterID)
			return
		}
		a := c.addons[name]
		if a == nil {
			a = &addon{name: name, created: now}
			c.addons[name] = a
		}
		a.configs, a.state, a.rev = nil, ce.AddonLifecycleStateActive, a.rev+1
		for _, k := range kpool.SortedKeys(configs) {
			a.configs = append(a.configs, ce.AddonConfiguration{Key: ptr.To(k), Value: ptr.To(configs[k])})
		}
	})
	return err
}
