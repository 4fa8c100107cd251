package provider

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// Credential kinds: how a driver gets the identity it calls its cloud with.
const (
	// CredentialDefault is the cloud SDK's default chain: environment,
	// workload or managed identity, the cloud's CLI.
	CredentialDefault = "default"
	// CredentialClientSecret is an application's id and secret (a service
	// principal of TenantID), the secret read from SecretEnv or SecretFile
	// when the driver first needs it.
	CredentialClientSecret = "client-secret"
	// CredentialStatic is an AWS access key: its id and secret access key
	// read from the environment variables AccessKeyIDEnv and
	// SecretAccessKeyEnv, or from the files AccessKeyIDFile and
	// SecretAccessKeyFile, when the driver first needs them.
	CredentialStatic = "static"

	// CredentialServiceAccount is a service account's key (Google Cloud's
	// JSON key file), read from SecretEnv (the key itself) or
	// SecretFile (the key file's path) when the driver first needs it.
	CredentialServiceAccount = "service-account"

	// CredentialAPIKey is an API key: Civo's (the key itself), or OCI's
	// signing key (TenantID the tenancy OCID, ClientID the user OCID,
	// Fingerprint the key's fingerprint), read from SecretEnv (the key or
	// the PEM itself) or SecretFile when the driver first needs it.
	CredentialAPIKey = "api-key"

	// CredentialEmulator is an emulator's identity, given in code (kpool
	// dev): Identity holds it and the driver uses it as it is. A
	// credentials file cannot name this kind.
	CredentialEmulator = "emulator"
)

// CredentialChecker is a CredentialProfile with rules of its own for a
// credential of its platform (which fields a kind needs there).
type CredentialChecker interface {
	CheckCredential(c *Credential) error
}

// CredentialProfile is a profile whose driver calls its cloud with the
// operator's credentials: it says where the cloud's public API is and which
// subscription, account, project or compartment a cluster is in, what
// credentials are scoped to.
type CredentialProfile interface {
	Profile
	// PublicEndpoints are the https origins of the cloud's public API:
	// where a credential that lists no endpoints may be sent.
	PublicEndpoints() []string
	// Scope returns the field and value of the cluster's subscription,
	// account, project or compartment, and what the cloud calls it.
	Scope(s *kpool.ClusterSpec) (field, id, word string)
}

// Any, in a credential's scopes or users, allows every one.
const Any = "*"

// Credential is one credential the operator configured: what identity it
// is, what it may be used for and by whom, and where it may be sent.
// Secrets are never inline: they are read from the environment or a file.
type Credential struct {
	Name string             `json:"-"`
	Type kpool.PlatformType `json:"type"`
	Kind string             `json:"kind"`
	// TenantID and ClientID say which application a client-secret
	// credential is.
	TenantID   string `json:"tenantId,omitempty"`
	ClientID   string `json:"clientId,omitempty"`
	SecretEnv  string `json:"secretEnv,omitempty"`
	SecretFile string `json:"secretFile,omitempty"`
	// Fingerprint is an OCI API signing key's fingerprint (not a secret).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Authority is the https origin a client-secret credential's secret
	// is sent to for access tokens (Entra ID's authority host: a sovereign
	// cloud's, an emulator's); empty is the cloud's public one.
	Authority string `json:"authority,omitempty"`
	// The access key of a static (aws) credential: each part from an
	// environment variable or a file, never inline.
	AccessKeyIDEnv      string `json:"accessKeyIdEnv,omitempty"`
	AccessKeyIDFile     string `json:"accessKeyIdFile,omitempty"`
	SecretAccessKeyEnv  string `json:"secretAccessKeyEnv,omitempty"`
	SecretAccessKeyFile string `json:"secretAccessKeyFile,omitempty"`
	// Scopes are the subscriptions, accounts, projects or compartments the
	// credential may be used for; "*" is any.
	Scopes []string `json:"scopes"`
	// Endpoints are the https origins the credential may be sent to; none
	// means the cloud's public endpoint only.
	Endpoints []string `json:"endpoints,omitempty"`
	// Users may name the credential in spec.credential (and use it as
	// their platform's default): e-mail addresses, group:NAME for everyone
	// in a group (an OpenID Connect groups claim, a token's --group),
	// team:NAME for the admins of a team, for the team's clusters, or "*"
	// for everyone. Admins may use every credential.
	Users []string `json:"users,omitempty"`
	// Identity is the identity of an emulator credential, of the type its
	// platform's driver takes (IdentityOf); never from a file.
	Identity any `json:"-"`

	profile   CredentialProfile
	origins   kpool.Origins
	scopes    map[string]bool
	users     map[string]bool // e-mail addresses, or Any
	groups    map[string]bool // group names, as kpool.ParseGroup has them
	teams     map[string]bool // team names, whose admins may use it
	authority string          // Authority as kpool.Origin has it
}

// AuthorityHost is the origin of the credential's Authority with a
// trailing slash, as the cloud's SDK takes it; "" for the public one.
func (c *Credential) AuthorityHost() string {
	if c.authority == "" {
		return ""
	}
	return c.authority + "/"
}

// AllowsOrigin reports whether the credential may be sent to origin (in
// kpool.Origin's form).
func (c *Credential) AllowsOrigin(origin string) bool { return c.origins[origin] }

// AllowsScope reports whether the credential may be used for the
// subscription, account, project or compartment id.
func (c *Credential) AllowsScope(id string) bool {
	return c.scopes[Any] || (id != "" && c.scopes[strings.ToLower(id)])
}

// Secret reads a client-secret credential's secret from its environment
// variable or file.
func (c *Credential) Secret() (string, error) {
	if c.SecretEnv != "" {
		v := strings.TrimSpace(os.Getenv(c.SecretEnv))
		if v == "" {
			// The variable is not named: the message reaches logs and the
			// pool's status, and a secret pasted into secretEnv by mistake
			// would be in it.
			return "", fmt.Errorf("credential %s: the environment variable its secretEnv names is empty or unset", c.Name)
		}
		return v, nil
	}
	b, err := os.ReadFile(c.SecretFile)
	if err != nil {
		return "", fmt.Errorf("credential %s: %w", c.Name, err)
	}
	if v := strings.TrimSpace(string(b)); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("credential %s: %s is empty", c.Name, c.SecretFile)
}

// AccessKey reads a static credential's access key id and secret access
// key from their environment variables or files.
func (c *Credential) AccessKey() (id, secret string, err error) {
	if id, err = readPart(c.Name, "accessKeyIdEnv", c.AccessKeyIDEnv, c.AccessKeyIDFile); err != nil {
		return "", "", err
	}
	if secret, err = readPart(c.Name, "secretAccessKeyEnv", c.SecretAccessKeyEnv, c.SecretAccessKeyFile); err != nil {
		return "", "", err
	}
	return id, secret, nil
}

// readPart reads one part of a credential from the variable env or the
// file; the messages never name the variable's value.
func readPart(name, what, env, file string) (string, error) {
	if env != "" {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("credential %s: the environment variable its %s names is empty or unset", name, what)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("credential %s: %w", name, err)
	}
	if v := strings.TrimSpace(string(b)); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("credential %s: %s is empty", name, file)
}

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
		}
		s.defaults[t] = name
	}
	return s, nil
}

// check validates a credential and builds its sets.
func (c *Credential) check(profiles []Profile) error {
	at := "credentials." + c.Name
	if !credentialName.MatchString(c.Name) {
		return fmt.Errorf("%s: name must be 1-63 lowercase letters, digits, '-', '_' and '.'", at)
	}
	var known []string
	for _, p := range credentialProfiles(profiles) {
		known = append(known, string(p.Type()))
		if p.Type() == c.Type {
			c.profile = p
		}
	}
	if c.profile == nil {
		return fmt.Errorf("%s.type: %q takes no credentials in this kpool (those that do: %s)", at, c.Type, strings.Join(known, ", "))
	}
	awsKey := c.AccessKeyIDEnv != "" || c.AccessKeyIDFile != "" || c.SecretAccessKeyEnv != "" || c.SecretAccessKeyFile != ""
	switch c.Kind {
	case CredentialDefault:
		if c.TenantID != "" || c.ClientID != "" || c.SecretEnv != "" || c.SecretFile != "" || c.Authority != "" || awsKey {
			return fmt.Errorf("%s: kind %s takes no tenantId, clientId, secret or authority", at, c.Kind)
		}
	case CredentialStatic:
		switch {
		case c.TenantID != "" || c.ClientID != "" || c.SecretEnv != "" || c.SecretFile != "" || c.Authority != "":
			return fmt.Errorf("%s: kind %s takes accessKeyId and secretAccessKey variables or files only", at, c.Kind)
		case (c.AccessKeyIDEnv == "") == (c.AccessKeyIDFile == ""):
			return fmt.Errorf("%s: kind %s needs exactly one of accessKeyIdEnv and accessKeyIdFile", at, c.Kind)
		case (c.SecretAccessKeyEnv == "") == (c.SecretAccessKeyFile == ""):
			return fmt.Errorf("%s: kind %s needs exactly one of secretAccessKeyEnv and secretAccessKeyFile (never the key itself)", at, c.Kind)
		case c.AccessKeyIDEnv != "" && !envName.MatchString(c.AccessKeyIDEnv),
			c.SecretAccessKeyEnv != "" && !envName.MatchString(c.SecretAccessKeyEnv):
			// Not echoed, like secretEnv.
			return fmt.Errorf("%s: accessKeyIdEnv and secretAccessKeyEnv name environment variables (letters, digits and '_')", at)
		}
	case CredentialClientSecret:
		switch {
		case awsKey:
			return fmt.Errorf("%s: kind %s takes no access key", at, c.Kind)
		case c.TenantID == "" || c.ClientID == "":
			return fmt.Errorf("%s: kind %s needs tenantId and clientId", at, c.Kind)
		case (c.SecretEnv == "") == (c.SecretFile == ""):
			return fmt.Errorf("%s: kind %s needs exactly one of secretEnv and secretFile (never the secret itself)", at, c.Kind)
		case c.SecretEnv != "" && !envName.MatchString(c.SecretEnv):
			// Not echoed: a secret pasted here by mistake must not reach a
			// log.
			return fmt.Errorf("%s.secretEnv: not an environment variable name (letters, digits and '_'); it names the variable that holds the secret", at)
		}
		if c.Authority != "" {
			o, err := kpool.ParseOrigins([]string{c.Authority})
			if err != nil {
				return fmt.Errorf("%s.authority: %v", at, err)
			}
			for a := range o {
				c.authority = a
			}
		}
	case CredentialAPIKey:
		switch {
		case awsKey || c.Authority != "":
			return fmt.Errorf("%s: kind %s takes no access key or authority", at, c.Kind)
		case (c.SecretEnv == "") == (c.SecretFile == ""):
			return fmt.Errorf("%s: kind %s needs exactly one of secretEnv and secretFile (never the key itself)", at, c.Kind)
		case c.SecretEnv != "" && !envName.MatchString(c.SecretEnv):
			return fmt.Errorf("%s.secretEnv: not an environment variable name (letters, digits and '_'); it names the variable that holds the key", at)
		}
	case CredentialServiceAccount:
		switch {
		case c.TenantID != "" || c.ClientID != "" || c.Authority != "":
			return fmt.Errorf("%s: kind %s takes no tenantId, clientId or authority", at, c.Kind)
		case (c.SecretEnv == "") == (c.SecretFile == ""):
			return fmt.Errorf("%s: kind %s needs exactly one of secretEnv and secretFile (the key file; never the key itself)", at, c.Kind)
		case c.SecretEnv != "" && !envName.MatchString(c.SecretEnv):
			return fmt.Errorf("%s.secretEnv: not an environment variable name (letters, digits and '_'); it names the variable that holds the key", at)
		}
	case CredentialEmulator:
		if c.Identity == nil {
			return fmt.Errorf("%s.kind: %s is kpool dev's own kind for its emulators; a credentials file cannot use it", at, c.Kind)
		}
	default:
		return fmt.Errorf("%s.kind: %q: use %s, %s, %s, %s or %s", at, c.Kind, CredentialDefault, CredentialClientSecret, CredentialStatic, CredentialServiceAccount, CredentialAPIKey)
	}
	if c.Fingerprint != "" && c.Kind != CredentialAPIKey {
		return fmt.Errorf("%s.fingerprint: only an api-key credential has one", at)
	}
	if cc, ok := c.profile.(CredentialChecker); ok && c.Kind != CredentialEmulator {
		if err := cc.CheckCredential(c); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
	} else if c.Kind == CredentialAPIKey {
		return fmt.Errorf("%s.kind: platform %s takes no API key", at, c.Type)
	}
	if len(c.Scopes) == 0 {
		return fmt.Errorf("%s.scopes: required: the subscriptions, accounts or projects it may be used for, or \"*\" for any", at)
	}
	c.scopes = map[string]bool{}
	for _, s := range c.Scopes {
		c.scopes[strings.ToLower(strings.TrimSpace(s))] = true
	}
	eps := c.Endpoints
	if len(eps) == 0 {
		eps = c.profile.PublicEndpoints()
	}
	o, err := kpool.ParseOrigins(eps)
	if err != nil {
		return fmt.Errorf("%s.endpoints: %v", at, err)
	}
	c.origins = o
	c.users, c.groups, c.teams = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, u := range c.Users {
		field := fmt.Sprintf("%s.users[%d]", at, i)
		if u == Any {
			c.users[Any] = true
			continue
		}
		if len(u) >= len(GroupPrefix) && strings.EqualFold(u[:len(GroupPrefix)], GroupPrefix) {
			g, err := kpool.ParseGroup(u[len(GroupPrefix):])
			if err != nil {
				return fmt.Errorf("%s: %v; write %sNAME", field, err, GroupPrefix)
			}
			c.groups[g] = true
			continue
		}
		if t, ok := strings.CutPrefix(u, TeamPrefix); ok {
			if _, err := kpool.ParseTeam(t); err != nil {
				return fmt.Errorf("%s: %v; write %sNAME", field, err, TeamPrefix)
			}
			c.teams[t] = true
			continue
		}
		if strings.Contains(u, ":") {
			return fmt.Errorf("%s: %q: an entry is an e-mail address, %s, %sNAME or %sNAME", field, u, Any, GroupPrefix, TeamPrefix)
		}
		e, err := kpool.ParseEmail(u)
		if err != nil {
			return fmt.Errorf("%s: %v (an entry is an e-mail address, %s or %sNAME)", field, err, Any, GroupPrefix)
		}
		c.users[e] = true
	}
	return nil
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
