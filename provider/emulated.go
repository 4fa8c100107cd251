package provider

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kpool/kpool"
)

// WithEmulators returns s (nil: the operator gave no credentials file)
// with, for each platform in ids, a credential of kind emulator: ids'
// identity, sent only to endpoints, the credential of every cluster there
// that names none. A cluster elsewhere that names none uses s's default
// for its platform; without one it has no credential, and none says why.
// So kpool dev reaches its emulators, and a real cloud only with
// credentials the operator named: never with a cloud SDK's default chain,
// which probes the machine's metadata service and public hosts unasked.
func WithEmulators(s *CredentialSet, profiles []Profile, ids map[kpool.PlatformType]any, endpoints []string, none string) (*CredentialSet, error) {
	out := &CredentialSet{byName: map[string]*Credential{}, defaults: map[kpool.PlatformType]string{},
		emulators: map[kpool.PlatformType]*Credential{}, none: none}
	if s != nil {
		maps.Copy(out.byName, s.byName)
		maps.Copy(out.defaults, s.defaults)
	}
	for _, t := range slices.Sorted(maps.Keys(ids)) {
		c := &Credential{Name: string(t) + "-emulator", Type: t, Kind: CredentialEmulator, Identity: ids[t],
			Scopes: []string{Any}, Endpoints: slices.Clone(endpoints), Users: []string{Any}}
		if _, taken := out.byName[c.Name]; taken {
			return nil, fmt.Errorf("credentials.%s: the name is kpool dev's for its %s emulator", c.Name, t)
		}
		if err := c.check(profiles); err != nil {
			return nil, err
		}
		out.byName[c.Name] = c
		out.emulators[t] = c
	}
	return out, nil
}

// emulator returns the emulator credential of a cluster on one of its
// endpoints (nil: none).
func (s *CredentialSet) emulator(spec *kpool.ClusterSpec) *Credential {
	c := s.emulators[spec.Platform.Type]
	if c == nil || spec.Endpoint == "" {
		return nil
	}
	o, err := kpool.Origin(spec.Endpoint)
	if err != nil || !c.AllowsOrigin(o) {
		return nil
	}
	return c
}

// IdentityOf returns the identity an emulator credential carries, as the
// type T its platform's driver takes.
func IdentityOf[T any](c *Credential) (T, error) {
	id, ok := c.Identity.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("credential %s carries no identity this driver takes (%T)", c.Name, c.Identity)
	}
	return id, nil
}
