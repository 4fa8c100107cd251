package gke

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Capacity (README.md, "Capacity"): a pool's instance groups hold
// capacity of the engine's sim.Capacity per offering (a zone, the pool's
// machine type, Spot or preemptible VMs or neither). What a group cannot
// get it keeps trying for, as Compute Engine's managed instance groups do;
// GKE reports it in the operation's error and the pool's status.

// Stockout codes as GKE's recorded answers carry them: the pool's
// statusMessage (hashicorp/terraform-provider-google#3304) and the
// operation's error (akka/akka-core#32992, tranquilitybase-io/tb-gcp#589).
const (
	codeZonePoolExhausted = "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"
	codeStockout          = "GCE_STOCKOUT"
)

// offering is what a node of a pool with configuration cfg counts against
// in zone: Spot and preemptible VMs both take spot capacity.
func offering(zone string, cfg *container.NodeConfig) sim.Offering {
	return sim.Offering{Zone: zone, MachineType: cfg.MachineType, Spot: cfg.Spot || cfg.Preemptible}
}

// wants are the nodes the pool's groups target, by offering, were its
// configuration np.
func (p *pool) wants(np *container.NodePool) map[sim.Offering]int {
	out := map[sim.Offering]int{}
	for _, z := range np.Locations {
		out[offering(z, np.Config)] += p.target(z)
	}
	return out
}

// acquire makes the capacity the pool holds what want says: it takes
// what want asks more (as much as there is) and gives back what it asks
// less, and returns what it could not get, by offering.
func (p *pool) acquire(want map[sim.Offering]int) map[sim.Offering]int {
	c := p.cluster.capacity
	if p.held == nil {
		p.held = map[sim.Offering]int{}
	}
	for o, h := range p.held {
		if _, ok := want[o]; !ok {
			c.Release(o, h)
			delete(p.held, o)
		}
	}
	short := map[sim.Offering]int{}
	for o, w := range want {
		h := p.held[o]
		switch {
		case w > h:
			h += c.Take(o, w-h)
			if h < w {
				short[o] = w - h
			}
		case w < h:
			c.Release(o, h-w)
			h = w
		}
		p.held[o] = h
	}
	return short
}

// drop gives back the capacity of k instances of the pool's group in
// zone that were deleted (deleteInstances).
func (p *pool) drop(zone string, k int) {
	o := offering(zone, p.np.Config)
	k = min(k, p.held[o])
	p.held[o] -= k
	p.cluster.capacity.Release(o, k)
}

// goal is the instances the pool's group in zone can have: its target
// size, as far as it got the capacity.
func (p *pool) goal(zone string) int {
	return min(p.target(zone), p.held[offering(zone, p.np.Config)])
}

// goalIn is the instances the pool's groups in zones can have, were its
// configuration cfg.
func (p *pool) goalIn(zones []string, cfg *container.NodeConfig) int {
	n := 0
	for _, z := range zones {
		n += min(p.target(z), p.held[offering(z, cfg)])
	}
	return n
}

// short is, by zone, the instances the pool's groups target but could
// not get.
func (p *pool) short() map[string]int {
	out := map[string]int{}
	for _, z := range p.np.Locations {
		if k := p.target(z) - p.goal(z); k > 0 {
			out[z] = k
		}
	}
	return out
}

// claim takes the capacity the pool's groups need were its configuration
// np, and returns the instances they can have.
func (p *pool) claim(np *container.NodePool) int {
	p.acquire(p.wants(np))
	return p.goalIn(np.Locations, np.Config)
}

// claimUpgrade takes the capacity an upgrade to next needs on top of the
// pool's (its new instances are made before the old ones go): the zones
// where next's offering is short, none when it got all, in which case it
// keeps both until the upgrade ends; else it gives next's back.
func (p *pool) claimUpgrade(next *container.NodePool) map[string]int {
	want := p.wants(p.np)
	for o, n := range p.wants(next) {
		want[o] = max(want[o], n)
	}
	missing := p.acquire(want)
	out := map[string]int{}
	for _, z := range next.Locations {
		if k := missing[offering(z, next.Config)]; k > 0 {
			out[z] = k
		}
	}
	if len(out) > 0 {
		p.acquire(p.wants(p.np))
	}
	return out
}

// retry is the instance groups trying again for what they lack, at each
// request: what capacity came back, they get (the nodes come up at once);
// a pool whose groups failed for want of it is RUNNING again once they
// have all.
func (p *pool) retry() {
	if p.op != nil || p.held == nil || len(p.short()) == 0 && !p.stockout {
		return
	}
	p.acquire(p.wants(p.np))
	p.ready = p.goalIn(p.np.Locations, p.np.Config)
	if p.stockout && len(p.short()) == 0 {
		p.status, p.message, p.cond, p.stockout = statusRunning, "", nil, false
	}
}

// outOfStock marks the pool as its groups left it when they could not get
// all their instances: ERROR for a create that got none, else
// RUNNING_WITH_ERROR, with GKE's statusMessage, until they have them.
func (p *pool) outOfStock(opType string, took time.Duration) {
	p.status, p.stockout = statusRunningWithError, true
	if opType == opCreate && p.ready == 0 {
		p.status = statusError
	}
	p.message = p.stockMessage(p.short(), took)
	p.cond = []*container.StatusCondition{{Code: codeStockout, CanonicalCode: codeResourceExhausted, Message: p.message}}
}

// stockMessage is the pool's statusMessage for the zones short, as GKE
// words it (hashicorp/terraform-provider-google#3304: "us-west1-c: Deploy
// error: Not all instances running in IGM after 45.677691201s. Expect 1.
// Current errors: [ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS]: Instance
// '…' creation failed: The zone 'projects/…/zones/us-west1-c' does not
// have enough resources available to fulfill the request.  '(resource
// type:compute)'. - ; ."), a zone after another.
func (p *pool) stockMessage(short map[string]int, took time.Duration) string {
	var parts []string
	for _, z := range slices.Sorted(maps.Keys(short)) {
		parts = append(parts, fmt.Sprintf("%s: Deploy error: Not all instances running in IGM after %s. Expect %d. Current errors: [%s]: %s - ; .",
			z, took, p.target(z), codeZonePoolExhausted, p.creationFailed(z)))
	}
	return strings.Join(parts, " ")
}

// creationFailed is Compute Engine's words for an instance of the pool's
// group in zone that the zone had no capacity for (compute's
// resource-error page: "The zone 'projects/PROJECT_ID/zones/ZONE' does
// not have enough resources available to fulfill the request.").
func (p *pool) creationFailed(zone string) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%d/pending", p.path(), zone, p.made)
	v := h.Sum32()
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	for range 4 {
		b.WriteByte(chars[v%36])
		v /= 36
	}
	return fmt.Sprintf("Instance '%s-%s' creation failed: The zone 'projects/%s/zones/%s' does not have enough resources available to fulfill the request.  '(resource type:compute)'.",
		p.base(zone), b.String(), p.cluster.project, zone)
}

// stockError is the error of an operation whose instance groups could not
// get all their instances, as GKE words it (akka/akka-core#32992: "Google
// Compute Engine: Not all instances running in IGM after 35m4.033429035s.
// Expected 5, running 2, transitioning 3. Current errors: [GCE_STOCKOUT]:
// Instance '…' creation failed: The zone '…' does not have enough
// resources available to fulfill the request. '(resource type:compute)'.").
func (p *pool) stockError(short map[string]int, expected, running int, took time.Duration) *container.Status {
	var errs []string
	for _, z := range slices.Sorted(maps.Keys(short)) {
		errs = append(errs, fmt.Sprintf("[%s]: %s", codeStockout, p.creationFailed(z)))
	}
	return &container.Status{Code: int64(rpcNumber[codeResourceExhausted]),
		Message: fmt.Sprintf("Google Compute Engine: Not all instances running in IGM after %s. Expected %d, running %d, transitioning %d. Current errors: %s",
			took, expected, running, expected-running, strings.Join(errs, "; "))}
}
