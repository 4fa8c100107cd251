package provider

import "github.com/kpool/kpool"

// Offering reads a pool spec's machine type and spot through its
// platform's profile, and its zone when it has one logical zone.
func (r *Registry) Offering(c *kpool.Cluster, s *kpool.NodePoolSpec) kpool.Offering {
	b := r.Profile(s.Platform.Type).Block(c, s)
	o := kpool.Offering{MachineType: b.MachineType, Spot: b.Spot}
	if len(s.Zones) == 1 {
		o.Zone = s.Zones[0]
	}
	return o
}

// SetOffering writes an offering's machine type and spot into a pool
// spec's platform block, and its zone into spec.zones.
func (r *Registry) SetOffering(c *kpool.Cluster, s *kpool.NodePoolSpec, o kpool.Offering) {
	p := r.Profile(s.Platform.Type)
	b := p.Block(c, s)
	b.MachineType, b.Spot = o.MachineType, o.Spot
	p.SetBlock(s, b)
	if o.Zone != "" {
		s.Zones = []string{o.Zone}
	}
}
