package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/kpool/kpool"
)

// The credential model every cloud shares: a credential is of a platform
// and a kind, may be used for some scopes (subscriptions, accounts,
// projects, compartments), sent to some endpoints and chosen by some
// users. What else it holds is its kind's settings, which its platform's
// profile declares (CredentialProfile.CredentialKinds): the shared model
// knows no cloud's fields.

// The kinds every platform takes.
const (
	// CredentialDefault is the cloud SDK's default chain: environment,
	// workload or managed identity, the cloud's CLI. It takes no settings.
	CredentialDefault = "default"
	// CredentialEmulator is an emulator's identity, given in code (kpool
	// dev): Identity holds it and the driver uses it as it is. A
	// credentials file cannot name this kind.
	CredentialEmulator = "emulator"
	// CredentialKubeconfig is a kubeconfig the operator holds for a
	// cluster's Kubernetes API (spec.kubeconfig names it), read from its
	// secret kubeconfig (kubeconfigEnv or kubeconfigFile); its server must
	// be among the entry's endpoints, which it must list.
	CredentialKubeconfig = "kubeconfig"
)

// kubeconfigKind is the kind CredentialKubeconfig, which every platform
// that takes credentials takes.
var kubeconfigKind = CredentialKind{Name: CredentialKubeconfig, Noun: "kubeconfig", Secrets: []string{"kubeconfig"}}

// CredentialProfile is a profile whose driver calls its cloud with the
// operator's credentials: it says where the cloud's public API is, which
// subscription, account, project or compartment a cluster is in (what
// credentials are scoped to), and the kinds of credential it takes.
type CredentialProfile interface {
	Profile
	// PublicEndpoints are the https origins of the cloud's public API:
	// where a credential that lists no endpoints may be sent.
	PublicEndpoints() []string
	// Scope returns the field and value of the cluster's subscription,
	// account, project or compartment, and what the cloud calls it.
	Scope(s *kpool.ClusterSpec) (field, id, word string)
	// CredentialKinds are the kinds of credential the platform takes
	// besides CredentialDefault and CredentialEmulator.
	CredentialKinds() []CredentialKind
}

// CredentialKind is a kind of credential one platform takes: its name in a
// credentials file, and the settings it takes there besides the shared
// ones (type, kind, scopes, endpoints, users).
type CredentialKind struct {
	Name string // as kind: gives it ("client-secret")
	Noun string // for messages ("client secret")
	// Required and Optional are its plain settings (tenantId).
	Required, Optional []string
	// Secrets are read when the driver first needs them, each from the
	// variable NAMEEnv or the file NAMEFile, exactly one of them, and are
	// never written in the file itself (secret: secretEnv or secretFile).
	Secrets []string
	// Check checks its settings' values, adding each fault under the
	// setting's name (authority); nil: none.
	Check func(fe *kpool.FieldErrors, c *Credential)
}

// keys are the settings a kind takes, in a credentials file's words.
func (k CredentialKind) keys() []string {
	out := append([]string(nil), k.Required...)
	for _, s := range k.Secrets {
		out = append(out, s+"Env", s+"File")
	}
	return append(out, k.Optional...)
}

// names are the settings a kind takes, each secret once, for messages.
func (k CredentialKind) names() []string {
	out := append(append([]string(nil), k.Required...), k.Secrets...)
	return append(out, k.Optional...)
}

// Any, in a credential's scopes or users, allows every one.
const Any = "*"

// Credential is one credential the operator configured: what identity it
// is, what it may be used for and by whom, and where it may be sent.
// Secrets are never inline: they are read from the environment or a file.
type Credential struct {
	Name string
	Type kpool.PlatformType
	Kind string
	// Settings are the kind's own (its CredentialKind's), by their name in
	// the credentials file: none for the shared kinds.
	Settings map[string]string
	// Scopes are the subscriptions, accounts, projects or compartments the
	// credential may be used for; "*" is any.
	Scopes []string
	// Endpoints are the https origins the credential may be sent to; none
	// means the cloud's public endpoint only.
	Endpoints []string
	// Users may name the credential in spec.credential (and use it as
	// their platform's default): e-mail addresses, group:NAME for everyone
	// in a group (an OpenID Connect groups claim, a token's --group),
	// team:NAME for the admins of a team, for the team's clusters, or "*"
	// for everyone. Admins may use every credential.
	Users []string
	// Identity is the identity of an emulator credential, of the type its
	// platform's driver takes (IdentityOf); never from a file.
	Identity any

	profile CredentialProfile
	origins kpool.Origins
	scopes  map[string]bool
	users   map[string]bool // e-mail addresses, or Any
	groups  map[string]bool // group names, as kpool.ParseGroup has them
	teams   map[string]bool // team names, whose admins may use it
}

// sharedKeys are the keys of a credentials file's entry that every kind
// has; the others are the kind's settings.
var sharedKeys = map[string]bool{"type": true, "kind": true, "scopes": true, "endpoints": true, "users": true}

// UnmarshalJSON reads an entry of a credentials file: the shared keys
// into their fields, every other key into Settings (a string each), for
// the platform's profile to check.
func (c *Credential) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var shared struct {
		Type      kpool.PlatformType `json:"type"`
		Kind      string             `json:"kind"`
		Scopes    []string           `json:"scopes"`
		Endpoints []string           `json:"endpoints"`
		Users     []string           `json:"users"`
	}
	if err := json.Unmarshal(b, &shared); err != nil {
		return err
	}
	c.Type, c.Kind, c.Scopes, c.Endpoints, c.Users = shared.Type, shared.Kind, shared.Scopes, shared.Endpoints, shared.Users
	c.Settings = map[string]string{}
	for k, v := range raw {
		if sharedKeys[k] {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return fmt.Errorf("%s: not a string", k) // its value is not echoed: it may be a secret
		}
		if s != "" {
			c.Settings[k] = s
		}
	}
	return nil
}

// AllowsOrigin reports whether the credential may be sent to origin (in
// kpool.Origin's form).
func (c *Credential) AllowsOrigin(origin string) bool { return c.origins[origin] }

// AllowsScope reports whether the credential may be used for the
// subscription, account, project or compartment id.
func (c *Credential) AllowsScope(id string) bool {
	return c.scopes[Any] || (id != "" && c.scopes[strings.ToLower(id)])
}

// Secret reads the credential's secret (its kind's secret "secret") from
// its variable or file.
func (c *Credential) Secret() (string, error) { return c.Read("secret") }

// Read reads the secret name of the credential's kind (CredentialKind's
// Secrets) from the variable its nameEnv setting names or the file its
// nameFile setting names. The messages never hold the variable's value.
func (c *Credential) Read(name string) (string, error) {
	if env := c.Settings[name+"Env"]; env != "" {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return v, nil
		}
		// The variable is not named: the message reaches logs and the
		// pool's status, and a secret pasted into it by mistake would be
		// in it.
		return "", fmt.Errorf("credential %s: the environment variable its %sEnv names is empty or unset", c.Name, name)
	}
	file := c.Settings[name+"File"]
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("credential %s: %w", c.Name, err)
	}
	if v := strings.TrimSpace(string(b)); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("credential %s: %s is empty", c.Name, file)
}
