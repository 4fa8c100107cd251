package aks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Capacity: every instance of a pool's scale set is started from the
// engine's capacity of its offering (its zone, the pool's vmSize, Spot or
// Regular), and gives it back when it is deleted or deallocated. When an
// offering cannot give all an operation asks for, the instances it could
// get come up and the operation ends Failed with the allocation error AKS
// passes on from the scale set (learn.microsoft.com/troubleshoot/azure/
// azure-kubernetes/error-codes/zonalallocation-allocationfailed-error):
// ZonalAllocationFailed for a zone, AllocationFailed for a pool without
// zones, OverconstrainedZonalAllocationRequest when several zones fail
// together. AKS does not retry on its own: the pool stays Failed until a
// new PUT.

// offering is where instance id of p takes its capacity from.
func (p *pool) offering(id int) sim.Offering {
	size := ptr.Deref(p.props.VMSize, "")
	if v, _ := sizeIn(p.cluster.location, size); v != nil {
		size = v.name // the catalogue's spelling: ARM compares sizes without case
	}
	return sim.Offering{Zone: p.zoneOf(id), MachineType: size,
		Spot: ptr.Deref(p.props.ScaleSetPriority, "") == armcontainerservice.ScaleSetPrioritySpot}
}

// offering is p.offering as the capacity table names it: a limit set on
// the size in another case (ARM compares sizes without case) applies.
func (s *Server) offering(p *pool, id int) sim.Offering {
	o := p.offering(id)
	for _, e := range s.Capacity().Entries() {
		if e.Zone == o.Zone && e.Spot == o.Spot && strings.EqualFold(e.MachineType, o.MachineType) {
			return e.Offering
		}
	}
	return o
}

// zoneOf is the zone of instance id: the one it was placed in, else the
// pool's zones in turn by instance id; "" for a pool without zones.
func (p *pool) zoneOf(id int) string {
	if z, ok := p.placed[id]; ok {
		return z
	}
	zs := p.props.AvailabilityZones
	if len(zs) == 0 {
		return ""
	}
	return ptr.Deref(zs[id%len(zs)], "")
}

// live are the instances that hold capacity when no operation runs: the
// running ones (a stopped pool's are deallocated).
func (p *pool) live() []int {
	if powerOf(p.props) == armcontainerservice.CodeStopped {
		return nil
	}
	return p.vms[:min(p.ready, len(p.vms))]
}

// settle brings the capacity p holds to its live instances, once an
// operation has ended (or the pool changed behind the client's back):
// what is no longer live is released; a live instance that holds none
// (one AddPool or Mutate made) takes it if it can.
func (s *Server) settle(p *pool) {
	live := p.live()
	for id := range p.held {
		if !slices.Contains(live, id) {
			s.Capacity().Release(s.offering(p, id), 1)
			delete(p.held, id)
		}
	}
	for _, id := range live {
		if !p.held[id] && s.Capacity().Take(s.offering(p, id), 1) == 1 {
			p.hold(id)
		}
	}
}

func (p *pool) hold(id int) {
	if p.held == nil {
		p.held = map[int]bool{}
	}
	p.held[id] = true
}

// releaseAll gives back everything p holds (the pool is gone).
func (s *Server) releaseAll(p *pool) {
	for id := range p.held {
		s.Capacity().Release(s.offering(p, id), 1)
	}
	p.held = nil
}

// take takes capacity for the instances ids would start, offering by
// offering: got are those it could start, in order; short the offerings
// that could not give all they were asked.
func (s *Server) take(p *pool, ids []int) (got []int, short []sim.Offering) {
	want := map[sim.Offering]int{}
	var order []sim.Offering
	for _, id := range ids {
		o := s.offering(p, id)
		if want[o] == 0 {
			order = append(order, o)
		}
		want[o]++
	}
	left := map[sim.Offering]int{}
	for _, o := range order {
		left[o] = s.Capacity().Take(o, want[o])
		if left[o] < want[o] {
			short = append(short, o)
		}
	}
	for _, id := range ids {
		if o := s.offering(p, id); left[o] > 0 {
			left[o]--
			got = append(got, id)
		}
	}
	return got, short
}

// allocate takes the capacity operation o, just started on p, needs: an
// upgrade's surge instances, or the instances a create, scale, update or
// start brings up. When it gets fewer, o ends Failed with AKS's
// allocation error, and brings up only those it got (partial success).
func (s *Server) allocate(o *sim.Operation, p *pool) {
	in := infoOf(o)
	if reimaging(o.Kind) {
		got, short := s.take(p, p.fresh(p.surge()))
		in.surge = len(got)
		for _, id := range got {
			p.hold(id)
		}
		if len(short) > 0 {
			o.Fails, in.shortage = true, allocationError(p, short)
		}
		return
	}
	if o.To <= o.From {
		return
	}
	ids := append(slices.Clone(p.vms), p.fresh(o.To-len(p.vms))...)
	cand := ids[o.From:o.To]
	got, short := s.take(p, cand)
	if len(short) > 0 {
		got = p.place(o.From, got)
		o.To = o.From + len(got)
		o.Fails, in.shortage = true, allocationError(p, short)
	}
	for _, id := range got {
		p.hold(id)
	}
}

// place arranges the instances an operation got of those it asked for
// (after the first from instances) so that they come next: a
// deallocated instance that could not start is dropped, and the new
// instances it got take the next ids, each in the zone it got.
// It returns their ids.
func (p *pool) place(from int, got []int) []int {
	var old []int
	var zones []string
	for _, id := range got {
		if id < p.nextVM {
			old = append(old, id)
		} else {
			zones = append(zones, p.zoneOf(id))
		}
	}
	p.vms = append(p.vms[:from:from], old...)
	fresh := p.fresh(len(zones))
	if p.placed == nil {
		p.placed = map[int]string{}
	}
	for i, id := range fresh {
		p.placed[id] = zones[i]
	}
	return append(old, fresh...)
}

// Allocation errors as AKS passes them on from the scale set (the
// troubleshooting article above, and AKS's recorded answers: Azure/AKS
// issue 1272 for AllocationFailed, jenkins-infra/helpdesk issues 3584 and
// 4337 for OverconstrainedZonalAllocationRequest). The size and zones in
// the messages are the emulator's: Compute says "the requested VM size in
// this zone".
const (
	allocationGuidance = "Read more about improving likelihood of allocation success at https://aka.ms/allocation-guidance."
	aksAllocationTail  = " Please note that allocation failures can also arise if a proximity placement group is associated with this VMSS. " +
		"See https://learn.microsoft.com/troubleshoot/azure/azure-kubernetes/error-code-zonalallocationfailed-allocationfailed for more details. " +
		"This is not AKS controlled behavior, please ask help to VMSS team for allocation failure. " +
		"If the error is due to capacity constraint, consider upgrading with maxUnavailable instead of maxSurge, details: aka.ms/aks/maxUnavailable."
)

// allocationError is the error of an operation whose scale set could not
// get instances of the short offerings.
func allocationError(p *pool, short []sim.Offering) *armError {
	size := ptr.Deref(p.props.VMSize, "")
	var zones []string
	for _, o := range short {
		if o.Zone != "" && !slices.Contains(zones, o.Zone) {
			zones = append(zones, o.Zone)
		}
	}
	slices.Sort(zones)
	switch len(zones) {
	case 0:
		return &armError{Code: "AllocationFailed", Message: fmt.Sprintf(
			"Allocation failed. We do not have sufficient capacity for the requested VM size %s in this region. %s%s", size, allocationGuidance, aksAllocationTail)}
	case 1:
		return &armError{Code: "ZonalAllocationFailed", Message: fmt.Sprintf(
			"Allocation failed. We do not have sufficient capacity for the requested VM size %s in zone '%s'. %s%s", size, zones[0], allocationGuidance, aksAllocationTail)}
	}
	return &armError{Code: "OverconstrainedZonalAllocationRequest", Message: fmt.Sprintf(
		"Allocation failed. VM(s) of size %s in zones '%s' with the following constraints cannot be allocated, because the condition is too restrictive. "+
			"Please remove some constraints and try again. Constraints applied are:\n  - Availability Zone\n  - VM Size\n", size, strings.Join(zones, "', '"))}
}
