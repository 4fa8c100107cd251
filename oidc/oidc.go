// Package oidc authenticates people by the ID tokens of an OpenID Connect
// issuer (coreos/go-oidc): the token's signature, issuer, audience and
// expiry are checked against the issuer's published keys; its email claim
// is the user, and its groups are the identity's groups (for credentials
// granted to a group) and can make the user an admin. Controllers are
// not people: they use kpool's own tokens.
package oidc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/kpool/kpool"
)

// Config is the issuer kpool trusts and how its claims map to identities.
type Config struct {
	// Issuer is the issuer's URL, as its tokens' iss claim has it.
	Issuer string
	// Audience is the client id kpool's tokens are issued to (aud).
	Audience string
	// GroupsClaim names the claim that lists the user's groups (default
	// "groups"); members of AdminGroups are admins.
	GroupsClaim string
	AdminGroups []string
	// TeamRoles maps a group of the issuer's to the team memberships it
	// grants (TEAM:ROLE, such as platform:operator). Only this mapping
	// grants team roles to people: a group the issuer sends that merely
	// reads TEAM:ROLE grants nothing.
	TeamRoles map[string][]string
	// Client reaches the issuer (nil: http.DefaultClient).
	Client *http.Client
}

// Verifier turns ID tokens into identities.
type Verifier struct {
	cfg  Config
	v    *oidc.IDTokenVerifier
	ctx  context.Context // carries the client for key refreshes
	keys *keySet
}

// New discovers the issuer (its /.well-known/openid-configuration) and
// returns a verifier of its tokens.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oidc: an issuer and an audience (client id) are required")
	}
	if err := checkIssuer(cfg.Issuer); err != nil {
		return nil, err
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.Client != nil {
		ctx = oidc.ClientContext(ctx, cfg.Client)
	}
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc: discovering %s: %w", cfg.Issuer, err)
	}
	var meta struct {
		JWKS string `json:"jwks_uri"`
	}
	if err := p.Claims(&meta); err != nil || meta.JWKS == "" {
		return nil, fmt.Errorf("oidc: %s names no jwks_uri", cfg.Issuer)
	}
	if err := checkIssuer(meta.JWKS); err != nil {
		return nil, fmt.Errorf("oidc: the issuer's keys: %w", err)
	}
	// Keys are fetched later too, when the issuer rotates them: with this
	// context's client, never with the first request's, and at most once
	// per RefreshEvery.
	bg := oidc.ClientContext(context.WithoutCancel(ctx), clientOf(cfg))
	keys, err := newKeySet(ctx, meta.JWKS, clientOf(cfg))
	if err != nil {
		return nil, err
	}
	v := oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{ClientID: cfg.Audience})
	return &Verifier{cfg: cfg, v: v, ctx: bg, keys: keys}, nil
}

// checkIssuer refuses an issuer (or its keys) reached over plain http
// beyond loopback: whoever sits on the path could hand kpool keys and so
// sign in as anyone.
func checkIssuer(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("oidc: %q is not an absolute URL", raw)
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); u.Scheme == "http" && (host == "localhost" || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return fmt.Errorf("oidc: %s: an issuer is reached over https (plain http only on loopback, for tests)", raw)
}

func clientOf(cfg Config) *http.Client {
	if cfg.Client != nil {
		return cfg.Client
	}
	return http.DefaultClient
}

// ErrInvalid is every refusal of a token; its text says why, for the log,
// not for the caller.
var ErrInvalid = errors.New("oidc: invalid token")

// Identify verifies a raw ID token and returns whom it names.
func (v *Verifier) Identify(ctx context.Context, raw string) (*kpool.Identity, error) {
	tok, err := v.v.Verify(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", ErrInvalid, err)
	}
	email, _ := claims["email"].(string)
	if email == "" {
		return nil, fmt.Errorf("%w: no email claim", ErrInvalid)
	}
	if verified, ok := claims["email_verified"]; ok && verified != true {
		return nil, fmt.Errorf("%w: the email %s is not verified", ErrInvalid, email)
	}
	e, err := kpool.ParseEmail(email)
	if err != nil {
		return nil, fmt.Errorf("%w: email claim: %v", ErrInvalid, err)
	}
	id := &kpool.Identity{Email: e}
	for _, g := range groups(claims[v.cfg.GroupsClaim]) {
		if slices.Contains(v.cfg.AdminGroups, g) {
			id.Admin = true
		}
		// The identity's groups, for credentials granted to a group: in
		// kpool's form, once each; a name kpool cannot take (empty,
		// control characters, too long) is left out, and so is one that
		// would read as a team membership.
		if n, err := kpool.ParseGroup(g); err == nil && !id.InGroup(n) {
			if _, _, member := kpool.ParseMembership(n); !member {
				id.Groups = append(id.Groups, n)
			}
		}
		for _, m := range v.cfg.TeamRoles[g] {
			if !id.InGroup(m) {
				id.Groups = append(id.Groups, m)
			}
		}
	}
	return id, nil
}

// groups reads a groups claim: a list of strings, or one string.
func groups(c any) []string {
	switch c := c.(type) {
	case string:
		return []string{c}
	case []any:
		var out []string
		for _, g := range c {
			if s, ok := g.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// IsJWT reports whether a bearer token has a JWT's shape (three base64url
// parts), as opposed to one of kpool's own tokens.
func IsJWT(raw string) bool { return strings.Count(raw, ".") == 2 && !strings.HasPrefix(raw, "kpool_") }

// ParseTeamRoles reads the operator's mapping of an issuer's groups to
// team memberships: GROUP=TEAM:ROLE, comma-separated (a group may be
// named more than once).
func ParseTeamRoles(entries []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, e := range entries {
		group, m, ok := strings.Cut(e, "=")
		group, m = strings.TrimSpace(group), strings.ToLower(strings.TrimSpace(m))
		if !ok || group == "" {
			return nil, fmt.Errorf("%q: write GROUP=TEAM:ROLE, such as platform-devs=platform:operator", e)
		}
		if _, _, member := kpool.ParseMembership(m); !member {
			return nil, fmt.Errorf("%q: %q is not TEAM:ROLE (roles: viewer, operator, admin)", e, m)
		}
		out[group] = append(out[group], m)
	}
	return out, nil
}
