package fake

import (
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool/provider"
)

func (d *Driver) start(kind provider.State, now time.Time, from, to int, fail bool) *operation {
	moved := time.Duration(max(from-to, to-from)) * d.nodeTime
	return &operation{kind: kind, start: now, end: now.Add(d.opTime + moved), from: from, to: to, fail: fail}
}

// nodesAt is the node count at t: nodes move one at a time, NodeTime
// apart, from the count at the start to the target.
func (o *operation) nodesAt(t time.Time, nodeTime time.Duration) int {
	if !t.Before(o.end) {
		return o.to
	}
	steps := int(max(t.Sub(o.start), 0) / nodeTime)
	if o.to < o.from {
		return max(o.from-steps, o.to)
	}
	return min(o.from+steps, o.to)
}

// advance ends the operations whose time has come.
func (d *Driver) advance(now time.Time) {
	for k, p := range d.pools {
		o := p.op
		if o == nil || now.Before(o.end) {
			continue
		}
		p.op, p.nodes = nil, o.to
		p.message = ""
		switch {
		case o.fail:
			p.state = provider.StateFailed
			p.message = fmt.Sprintf("%s failed: AllocationFailed: not enough capacity for %s in the zone (fault injected by the fake driver)",
				strings.ToLower(string(o.kind)), p.spec.MachineType)
		case o.kind == provider.StateDeleting:
			delete(d.pools, k)
		default:
			p.state = provider.StateReady
		}
	}
}

// view is a pool as NodePoolList reports it at now.
func (d *Driver) view(p *pool, k poolKey, now time.Time) provider.Pool {
	v := provider.Pool{PoolSpec: clone(p.spec), State: p.state, Nodes: p.nodes,
		Extra: map[string]string{"id": k.cluster + "/" + k.name}}
	v.ProviderState = string(v.State)
	v.Message = p.message
	if p.op != nil {
		v.State, v.Nodes, v.ProviderState = p.op.kind, p.op.nodesAt(now, d.nodeTime), string(p.op.kind)
		if p.op.providerState != "" {
			v.ProviderState = p.op.providerState
		}
	}
	v.ReadyNodes = v.Nodes
	v.StaleNodes = min(p.stale, v.Nodes)
	if d.opaque && p.op != nil {
		// Only the target is known, as ARM reports it.
		v.Nodes, v.ReadyNodes, v.ReadyUnknown = p.op.to, 0, true
	}
	v.Name = v.Labels[provider.LabelPool]
	if len(v.Zones) > 0 && !v.ReadyUnknown {
		v.NodesByZone = map[string]int{}
		for i, z := range v.Zones {
			n := v.Nodes / len(v.Zones)
			if i < v.Nodes%len(v.Zones) {
				n++
			}
			v.NodesByZone[z] = n
		}
	}
	v.Problems = provider.CheckContract(&v)
	return v
}
