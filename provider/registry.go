package provider

import (
	"fmt"
	"slices"

	"github.com/kpool/kpool"
)

// Registry holds the platforms kpool knows (their profiles) and the drivers
// this process can use. It answers the service's questions about platforms
// (kpool.Platforms). The zero Registry knows no platform; provider/catalog
// makes one with every profile.
type Registry struct {
	profiles map[kpool.PlatformType]Profile
	types    []kpool.PlatformType
	drivers  map[kpool.PlatformType]Driver
	domains  []string
}

var _ kpool.Platforms = (*Registry)(nil)

// NewRegistry returns a registry of the profiles, in that order.
func NewRegistry(profiles ...Profile) *Registry {
	r := &Registry{profiles: map[kpool.PlatformType]Profile{}, drivers: map[kpool.PlatformType]Driver{}}
	r.domains = append(r.domains, kpool.LabelDomains...)
	for _, p := range profiles {
		t := p.Type()
		if _, dup := r.profiles[t]; dup {
			panic(fmt.Sprintf("provider: profile %s registered twice", t))
		}
		r.profiles[t] = p
		r.types = append(r.types, t)
		for _, d := range p.LabelDomains() {
			if !slices.Contains(r.domains, d) {
				r.domains = append(r.domains, d)
			}
		}
	}
	return r
}

// Add registers a driver under the platform its capabilities name.
func (r *Registry) Add(d Driver) {
	if r.drivers == nil {
		r.drivers = map[kpool.PlatformType]Driver{}
	}
	r.drivers[d.Capabilities().Provider] = d
}

// Driver returns the driver of a platform. A platform without pools gets
// the unsupported driver; one with pools but no driver configured here is
// NOT_IMPLEMENTED too, saying so.
func (r *Registry) Driver(t kpool.PlatformType) Driver {
	if d, ok := r.drivers[t]; ok {
		return d
	}
	return Unsupported{Profile: r.Profile(t)}
}

// HasDriver reports whether a driver for the platform is configured.
func (r *Registry) HasDriver(t kpool.PlatformType) bool {
	_, ok := r.drivers[t]
	return ok
}

// Drivers lists the platforms with a driver, in the profiles' order.
func (r *Registry) Drivers() []kpool.PlatformType {
	var out []kpool.PlatformType
	for _, t := range r.types {
		if r.HasDriver(t) {
			out = append(out, t)
		}
	}
	return out
}

// Profile returns a platform's profile; an unknown platform gets one with
// no node pools, so that every question about it has an answer.
func (r *Registry) Profile(t kpool.PlatformType) Profile {
	if p, ok := r.profiles[t]; ok {
		return p
	}
	return NoPools{Platform: t}
}

// Profiles lists the known profiles, in order.
func (r *Registry) Profiles() []Profile {
	out := make([]Profile, len(r.types))
	for i, t := range r.types {
		out[i] = r.profiles[t]
	}
	return out
}

// Platform returns a known platform as the service sees it.
func (r *Registry) Platform(t kpool.PlatformType) (kpool.Platform, bool) {
	p, ok := r.profiles[t]
	if !ok {
		return nil, false
	}
	return platform{p: p, domains: r.domains}, true
}

// ControllerNames are every profile's controller name.
func (r *Registry) ControllerNames() []string {
	out := make([]string, 0, len(r.types))
	for _, t := range r.types {
		out = append(out, r.profiles[t].ControllerName())
	}
	return out
}

// Types lists the known platforms, in order.
func (r *Registry) Types() []kpool.PlatformType { return slices.Clone(r.types) }

// LabelDomains are kpool's and Kubernetes' label domains and every
// provider's.
func (r *Registry) LabelDomains() []string { return r.domains }

// Owned reports whether a label or taint key is in a domain that kpool,
// Kubernetes or a provider owns.
func (r *Registry) Owned(key string) bool { return kpool.ReservedDomain(key, r.domains) != "" }
