package provider

import (
	"sort"
	"sync"
)

// A cloud whose list of a cluster's pools does not carry everything a
// driver reports (names only, or no nodes) needs a read of each pool; made
// on every list pass, that costs a call per pool per pass, and a fleet at
// rest spends its read quota on watching. Refresh keeps each pool's last
// read between passes and says which to read again, so that a pass at rest
// costs the list and RefreshPerList reads, whatever the number of pools.

// RefreshPerList is how many settled pools a list pass reads again, the
// longest unread first: every settled pool is read again within
// ceil(settled/RefreshPerList) passes, which finds what changed behind
// kpool's back that its list entry does not show.
const RefreshPerList = 2

// RefreshPools bounds the pools and clusters a Refresh keeps, together:
// past it, the least recently listed clusters are forgotten (their next
// pass reads every pool).
const RefreshPools = 100_000

// Refresh is a driver's memory of its clusters' pools between list passes:
// per cluster (key) and pool (a name the driver chooses: provider name or
// id), the last read V, whether it was settled and the fingerprint of the
// list entry it was read with. It is safe for concurrent use.
type Refresh[V any] struct {
	mu       sync.Mutex
	clusters map[string]*refreshed[V]
	used     uint64 // counts Plans, for the least recently listed cluster
	pools    int    // entries over all clusters
	max      int
}

// refreshed is one cluster's pools.
type refreshed[V any] struct {
	pass  uint64 // the cluster's last pass
	used  uint64
	pools map[string]*kept[V]
}

// kept is one pool: its last read, if any, and what makes it stale.
type kept[V any] struct {
	value       V
	read        bool // value holds a read
	settled     bool
	fingerprint string // of the list entry it was read with
	pass        uint64 // the pass that read it
	writes      uint64 // Invalidate calls
	seen        uint64 // writes as of the plan of the pass that read it
}

// Listed is a pool as a cluster's list gives it: the name the driver keeps
// it by, and a fingerprint of its list entry ("" when the list gives only
// the name).
type Listed struct{ Name, Fingerprint string }

// NewRefresh returns a Refresh that keeps at most max pools and clusters
// (RefreshPools), besides those of the cluster being listed.
func NewRefresh[V any](max int) *Refresh[V] {
	return &Refresh[V]{clusters: map[string]*refreshed[V]{}, max: max}
}

// Pass is one list pass of a cluster: which pools it reads, and the kept
// reads of the others.
type Pass[V any] struct {
	r       *Refresh[V]
	c       *refreshed[V]
	pass    uint64
	listed  map[string]string // fingerprint by name
	reading map[string]uint64 // writes as of the plan, by name
}

// Plan starts a list pass of cluster key that listed these pools. A pool
// is read when it is new, its list entry changed, its last read was not
// settled, a write of the driver's came after that read (Invalidate), or
// it is among the RefreshPerList settled ones read longest ago. Pools not
// listed are forgotten.
func (r *Refresh[V]) Plan(key string, listed []Listed) *Pass[V] {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.used++
	c := r.clusters[key]
	if c == nil {
		c = &refreshed[V]{pools: map[string]*kept[V]{}}
		r.clusters[key] = c
	}
	c.pass++
	c.used = r.used
	p := &Pass[V]{r: r, c: c, pass: c.pass, listed: map[string]string{}, reading: map[string]uint64{}}
	for _, l := range listed {
		p.listed[l.Name] = l.Fingerprint
	}
	before := len(c.pools)
	for name := range c.pools {
		if _, ok := p.listed[name]; !ok {
			delete(c.pools, name)
		}
	}
	var settled []string
	for name, fp := range p.listed {
		e := c.pools[name]
		if e == nil {
			e = &kept[V]{}
			c.pools[name] = e
		}
		if !e.read || !e.settled || e.fingerprint != fp || e.writes != e.seen {
			p.reading[name] = e.writes
			continue
		}
		settled = append(settled, name)
	}
	sort.Slice(settled, func(i, j int) bool {
		a, b := c.pools[settled[i]], c.pools[settled[j]]
		return a.pass < b.pass || a.pass == b.pass && settled[i] < settled[j]
	})
	for _, name := range settled[:min(RefreshPerList, len(settled))] {
		p.reading[name] = c.pools[name].writes
	}
	r.pools += len(c.pools) - before
	r.evict(c)
	return p
}

// evict forgets the least recently listed clusters but keep while more
// than max pools and clusters are kept.
func (r *Refresh[V]) evict(keep *refreshed[V]) {
	for r.pools+len(r.clusters) > r.max {
		var oldest string
		var o *refreshed[V]
		for k, c := range r.clusters {
			if c != keep && (o == nil || c.used < o.used) {
				oldest, o = k, c
			}
		}
		if o == nil {
			return
		}
		r.pools -= len(o.pools)
		delete(r.clusters, oldest)
	}
}

// Kept returns the kept read of a pool this pass does not read (false:
// read it).
func (p *Pass[V]) Kept(name string) (V, bool) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	e := p.c.pools[name]
	if _, reading := p.reading[name]; reading || e == nil || !e.read {
		var zero V
		return zero, false
	}
	return e.value, true
}

// ReadAll reports the pools the pass lists, in the order of names: a
// kept one from its kept read, the others by read(i), limit at a time. A
// nil pool (gone since the list) stays nil; the first error in list order
// fails it.
func (p *Pass[V]) ReadAll(names []string, limit int, kept func(V) Pool, read func(i int) (*Pool, error)) ([]*Pool, error) {
	pools := make([]*Pool, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i, n := range names {
		if v, ok := p.Kept(n); ok {
			pool := kept(v)
			pools[i] = &pool
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			pools[i], errs[i] = read(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return pools, nil
}

// Last returns the last read of a pool, whether or not this pass reads it
// again: what did not change since may be taken from it.
func (p *Pass[V]) Last(name string) (V, bool) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	if e := p.c.pools[name]; e != nil && e.read {
		return e.value, true
	}
	var zero V
	return zero, false
}

// Keep records a read of this pass, and whether it found the pool
// settled (Settled). A read older than the one kept, or of a pool no
// longer listed, is dropped.
func (p *Pass[V]) Keep(name string, v V, settled bool) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	e := p.c.pools[name]
	if e == nil || e.pass > p.pass {
		return
	}
	e.value, e.read, e.settled, e.pass = v, true, settled, p.pass
	e.fingerprint = p.listed[name]
	e.seen = p.reading[name]
}

// Invalidate marks a pool the driver wrote to: the next pass that plans
// after the write reads it, even if a pass that planned before keeps a
// read of it meanwhile. A pool not kept needs nothing: it is read anyway.
func (r *Refresh[V]) Invalidate(key, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clusters[key]; c != nil {
		if e := c.pools[name]; e != nil {
			e.writes++
		}
	}
}

// Settled reports whether a read pool needs no read before its turn: it
// is Ready with all its nodes up, and short of none.
func Settled(p *Pool) bool {
	return p.State == StateReady && !p.ReadyUnknown && p.Shortage == nil && p.Nodes == p.Count && p.ReadyNodes == p.Nodes
}
