package provider

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// Credentials resolve the credential a driver uses for a cluster. Drivers
// call Resolve before every use, so a record written around the API's
// checks (an old one, a restore) is refused too.
type Credentials interface {
	// Resolve returns the cluster's credential (spec.credential, or its
	// platform's default) after checking that it is for the cluster's
	// platform, may be used for its subscription, account or project and
	// may be sent to its endpoint; otherwise a validation error naming
	// spec.credential or spec.endpoint.
	Resolve(c *kpool.Cluster) (*Credential, error)
}

// CredentialSet is the operator's named credentials (kpool serve
// --credentials), with a default per platform. It answers both the API
// (kpool.CredentialGrants: who may use which) and the drivers
// (Credentials: where one may go).
type CredentialSet struct {
	byName   map[string]*Credential
	defaults map[kpool.PlatformType]string
	// emulators are, by platform, the credentials of clusters on an
	// emulator (kpool dev; see WithEmulators); none, when set, is why a
	// cluster elsewhere that names no credential has none.
	emulators map[kpool.PlatformType]*Credential
	none      string
}

var (
	_ Credentials            = (*CredentialSet)(nil)
	_ kpool.CredentialGrants = (*CredentialSet)(nil)
)

var credentialName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$`)

// envName is an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// credentialsFile is the --credentials file, YAML or JSON.
type credentialsFile struct {
	// Defaults name, per platform type, the credential of the clusters
	// that name none.
	Defaults    map[kpool.PlatformType]string `json:"defaults,omitempty"`
	Credentials map[string]*Credential        `json:"credentials"`
}

// LoadCredentials reads a credentials file (YAML or JSON); profiles are
// the platforms kpool knows (catalog.Profiles).
func LoadCredentials(path string, profiles []Profile) (*CredentialSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseCredentials(b, profiles)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseCredentials parses a credentials file (YAML or JSON); unknown keys
// are errors, so that a misspelt limit is not silently no limit.
func ParseCredentials(data []byte, profiles []Profile) (*CredentialSet, error) {
	var f credentialsFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	if len(f.Credentials) == 0 {
		return nil, fmt.Errorf("credentials: none configured")
	}
	s := &CredentialSet{byName: map[string]*Credential{}, defaults: map[kpool.PlatformType]string{}}
	for _, name := range kpool.SortedKeys(f.Credentials) {
		c := f.Credentials[name]
		if c == nil {
			return nil, fmt.Errorf("credentials.%s: empty", name)
		}
		c.Name = name
		if err := c.check(profiles); err != nil {
			return nil, err
		}
		s.byName[name] = c
	}
	for _, t := range slices.Sorted(maps.Keys(f.Defaults)) {
		name := f.Defaults[t]
		c, ok := s.byName[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("defaults.%s: no credential named %q", t, name)
		case c.Type != t:
			return nil, fmt.Errorf("defaults.%s: credential %q is for %s", t, name, c.Type)
		case c.Kind == CredentialKubeconfig:
			return nil, fmt.Errorf("defaults.%s: credential %q is a kubeconfig, not a cloud credential", t, name)
		}
		s.defaults[t] = name
	}
	return s, nil
}

// credentialProfiles are the profiles that take credentials.
func credentialProfiles(profiles []Profile) []CredentialProfile {
	var out []CredentialProfile
	for _, p := range profiles {
		if cp, ok := p.(CredentialProfile); ok {
			out = append(out, cp)
		}
	}
	return out
}

// DefaultCredentials is the set a kpool without a credentials file has: for
// each platform of profiles that takes credentials, a credential of the
// SDK's default chain ("default", or "<type>-default" when there are
// several), for any subscription, usable by everyone, sent only to the
// cloud's public endpoint and to extra (the operator's allowed endpoints).
func DefaultCredentials(profiles []Profile, extra []string) (*CredentialSet, error) {
	s := &CredentialSet{byName: map[string]*Credential{}, defaults: map[kpool.PlatformType]string{}}
	cps := credentialProfiles(profiles)
	for _, p := range cps {
		c := &Credential{Name: "default", Type: p.Type(), Kind: CredentialDefault, Scopes: []string{Any},
			Endpoints: append(slices.Clone(p.PublicEndpoints()), extra...), Users: []string{Any}}
		if len(cps) > 1 {
			c.Name = string(p.Type()) + "-default"
		}
		if err := c.check(profiles); err != nil {
			return nil, err
		}
		s.byName[c.Name] = c
		s.defaults[c.Type] = c.Name
	}
	return s, nil
}

// Credential returns the credential named name.
func (s *CredentialSet) Credential(name string) (*Credential, bool) {
	c, ok := s.byName[name]
	return c, ok
}

// Names lists the credentials' names.
func (s *CredentialSet) Names() []string { return kpool.SortedKeys(s.byName) }

// lookup finds the credential a spec uses: its own, an emulator's for a
// cluster on one, or its platform's default; nil (and no error) when it
// names none and there is no default.
func (s *CredentialSet) lookup(spec *kpool.ClusterSpec) (*Credential, string, error) {
	name := spec.Credential
	if name == "" {
		if c := s.emulator(spec); c != nil {
			return c, c.Name, nil
		}
		name = s.defaults[spec.Platform.Type]
		if name == "" {
			return nil, "", nil
		}
	}
	c, ok := s.byName[name]
	if !ok {
		return nil, name, fmt.Errorf("no credential named %q is configured", name)
	}
	if c.Type != spec.Platform.Type {
		return nil, name, fmt.Errorf("credential %q is for %s, not %s", name, c.Type, spec.Platform.Type)
	}
	if c.Kind == CredentialKubeconfig {
		return nil, name, fmt.Errorf("credential %q is a kubeconfig, not a cloud credential: name it in spec.kubeconfig", name)
	}
	return c, name, nil
}

// fits checks the credential against the cluster's scope and endpoint; it
// returns the field at fault and why.
func (c *Credential) fits(spec *kpool.ClusterSpec) (field, reason string) {
	if f, id, word := c.profile.Scope(spec); f != "" && !c.AllowsScope(id) {
		return "spec.credential", fmt.Sprintf("credential %q may not be used for %s %q", c.Name, word, id)
	}
	if spec.Endpoint != "" {
		o, err := kpool.Origin(spec.Endpoint)
		if err != nil {
			return "spec.endpoint", err.Error()
		}
		if !c.AllowsOrigin(o) {
			return "spec.endpoint", fmt.Sprintf("credential %q may not be sent to %s: the operator has not allowed that endpoint for it", c.Name, o)
		}
	}
	return "", ""
}

// Resolve implements Credentials.
func (s *CredentialSet) Resolve(cl *kpool.Cluster) (*Credential, error) {
	t := cl.Spec.Platform.Type
	c, _, err := s.lookup(&cl.Spec)
	switch {
	case err != nil:
		return nil, ValidationError(t, "spec.credential", "%v", err)
	case c == nil && s.none != "":
		return nil, ValidationError(t, "spec.credential", "%s", s.none)
	case c == nil:
		return nil, ValidationError(t, "spec.credential", "cluster %s names no credential and the operator configured no default for %s", cl.Name, t)
	}
	if field, why := c.fits(&cl.Spec); field != "" {
		return nil, ValidationError(t, field, "%s", why)
	}
	if !c.holds(cl.Grant, cl) {
		return nil, ValidationError(t, "spec.credential", "credential %q is no longer granted to the cluster's owner or team (granted by %s when chosen)", c.Name, grantWord(cl.Grant))
	}
	return c, nil
}

// CredentialsOr is creds, or when nil the default credentials of profile
// alone (its SDK's default chain, any scope, its public endpoints): what a
// driver built without Options.Credentials uses.
func CredentialsOr(creds Credentials, profile Profile) Credentials {
	if creds != nil {
		return creds
	}
	set, err := DefaultCredentials([]Profile{profile}, nil)
	if err != nil {
		panic(err) // the built-in public endpoints parse
	}
	return set
}
