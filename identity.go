package kpool

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Identity is the caller of an operation. Admins see and change everything;
// controllers read everything and are the only ones that write status; every
// other caller sees only the clusters it registered and their pools.
type Identity struct {
	Email      string
	Admin      bool
	Controller bool
	// ControllerNames are the controller names a controller was granted;
	// nil lets it report under any name that no built-in controller has.
	ControllerNames []string
	// System marks kpool's own controllers, which report under the
	// built-in controllers' names.
	System bool
	// Groups are the groups the caller is in, in lower case (ParseGroup):
	// from an OpenID Connect ID token's groups claim, or an API token's
	// --group. The operator's credentials may be granted to a group.
	Groups []string
	// Scope, for a controller, bounds the pools it may report on; nil
	// (tokens made before scopes, header-mode controllers) is every pool.
	Scope *ControllerScope
}

// InGroup reports whether the caller is in group (in ParseGroup's form).
func (id *Identity) InGroup(group string) bool { return slices.Contains(id.Groups, group) }

// MaxGroupLen is the longest group name kpool takes.
const MaxGroupLen = 256

// ParseGroup checks a group name and returns it in the form kpool compares
// and stores: trimmed and in lower case. Names are what identity providers
// send (platform-admins, an Entra ID object id, /team/sub, cn=a,ou=b): any
// printable text up to MaxGroupLen bytes. The name is not echoed in the
// error.
func ParseGroup(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", fmt.Errorf("empty group name")
	case len(s) > MaxGroupLen:
		return "", fmt.Errorf("a group name of %d bytes: at most %d", len(s), MaxGroupLen)
	case !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", fmt.Errorf("a group name with control characters or invalid UTF-8")
	}
	return strings.ToLower(s), nil
}

// ParseGroups parses a list of group names with ParseGroup, dropping
// duplicates; nil for none.
func ParseGroups(list []string) ([]string, error) {
	var out []string
	for _, g := range list {
		n, err := ParseGroup(g)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// SeesAll reports whether the caller may read every cluster and pool.
func (id *Identity) SeesAll() bool { return id.Admin || id.Controller }

// Owns reports whether the caller may see and change an object created by owner.
func (id *Identity) Owns(owner string) bool { return id.Admin || strings.EqualFold(id.Email, owner) }

// MayReportAs checks that a controller may report status under name;
// reserved are the names of kpool's built-in controllers, which only kpool's
// own controllers and identities granted them may use. The error is a
// FORBIDDEN naming controller_name.
func (id *Identity) MayReportAs(name string, reserved []string) error {
	switch {
	case id.System:
		return nil
	case id.ControllerNames != nil:
		if slices.Contains(id.ControllerNames, name) {
			return nil
		}
		return forbiddenName(name, fmt.Sprintf("%s may report only as %s", id.Email, strings.Join(id.ControllerNames, ", ")))
	case slices.Contains(reserved, name):
		return forbiddenName(name, fmt.Sprintf("%q is a built-in controller's name: grant it to %s explicitly", name, id.Email))
	}
	return nil
}

func forbiddenName(name, reason string) error {
	return &Error{Code: CodeForbidden, Message: fmt.Sprintf("Not allowed to report as %s", name),
		Details: reason, Fields: []FieldError{{Field: "controller_name", Reason: reason}}}
}

type identityKey struct{}

// WithIdentity returns a context that carries id.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity in ctx, or nil.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// ParseEmail checks that s is a bare e-mail address (no display name) and
// returns it in lower case, the form kpool compares and stores.
func ParseEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("missing e-mail address")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", fmt.Errorf("%q is not a bare e-mail address", s)
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return "", fmt.Errorf("%q is not a bare e-mail address", s)
	}
	return strings.ToLower(s), nil
}

// Auth modes of the API.
const (
	// AuthToken requires an API token (Authorization: Bearer) on every call.
	AuthToken = "token"
	// AuthHeader trusts the X-User-Email header that a gateway in front of
	// kpool sets: for loopback or behind such a gateway only.
	AuthHeader = "header"
)

// Access decides who the caller of a request is: from its API token, or in
// header mode from X-User-Email and the lists of admins and controllers.
type Access struct {
	mode        string
	admins      map[string]bool
	controllers map[string][]string // e-mail -> names granted (nil: any not reserved)
	tokens      TokenStore
	people      People // token mode: bearers that are not kpool tokens (OIDC)
	now         func() time.Time
}

// People identifies a person by a bearer token of an identity provider
// (package oidc: an OpenID Connect issuer's ID token).
type People interface {
	Identify(ctx context.Context, raw string) (*Identity, error)
}

// WithPeople makes a token-mode Access accept the identity provider's
// tokens for people, beside kpool's own API tokens.
func (a *Access) WithPeople(p People) *Access {
	a.people = p
	return a
}

// NewAccess builds a header-mode Access from lists of e-mail addresses. A
// controller entry may grant names: email=name1|name2.
func NewAccess(admins, controllers []string) (*Access, error) {
	a := &Access{mode: AuthHeader, admins: map[string]bool{}, controllers: map[string][]string{}}
	for _, s := range admins {
		if strings.TrimSpace(s) == "" {
			continue
		}
		e, err := ParseEmail(s)
		if err != nil {
			return nil, fmt.Errorf("admins: %v", err)
		}
		a.admins[e] = true
	}
	for _, s := range controllers {
		if strings.TrimSpace(s) == "" {
			continue
		}
		addr, list, granted := strings.Cut(s, "=")
		e, err := ParseEmail(addr)
		if err != nil {
			return nil, fmt.Errorf("controllers: %v", err)
		}
		var names []string
		if granted {
			names = []string{}
			for _, n := range strings.Split(list, "|") {
				if n = strings.TrimSpace(n); !controllerName.MatchString(n) {
					return nil, fmt.Errorf("controllers: %s: %q is not a controller name: use lowercase letters, digits, '-' and '.'", e, n)
				}
				names = append(names, n)
			}
		}
		a.controllers[e] = names
	}
	return a, nil
}

// NewTokenAccess builds a token-mode Access: callers are who their API
// token (kept in tokens) says.
func NewTokenAccess(tokens TokenStore) *Access {
	return &Access{mode: AuthToken, tokens: tokens, now: time.Now}
}

// WithTokens makes a header-mode Access accept API tokens too: a request
// whose Authorization carries a kpool token is who the token says (and
// refused if it is not valid); any other is identified by X-User-Email, so a
// gateway's own Authorization header passes through as before.
func (a *Access) WithTokens(tokens TokenStore) *Access {
	a.tokens, a.now = tokens, time.Now
	return a
}

// Mode is AuthToken or AuthHeader.
func (a *Access) Mode() string { return a.mode }

// unauthorized is the one answer to a missing, unknown, expired or revoked
// token: it does not say which.
var unauthorized = &Error{Code: CodeUnauthorized, Message: "Authentication required", Details: "send Authorization: Bearer <API token>"}

// Authenticate returns the caller of a request from its Authorization and
// X-User-Email headers, as the mode says.
func (a *Access) Authenticate(ctx context.Context, authorization, email string) (*Identity, error) {
	scheme, secret, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	secret = strings.TrimSpace(secret)
	bearer := strings.EqualFold(scheme, "Bearer")
	if a.mode == AuthHeader && (a.tokens == nil || !bearer || !strings.HasPrefix(secret, TokenPrefix)) {
		return a.Identify(email)
	}
	if bearer && a.people != nil && !strings.HasPrefix(secret, TokenPrefix) {
		id, err := a.people.Identify(ctx, secret)
		if err != nil {
			return nil, unauthorized
		}
		// People are users or admins: controllers use API tokens.
		return &Identity{Email: id.Email, Admin: id.Admin, Groups: id.Groups}, nil
	}
	if !bearer || !LooksLikeToken(secret) {
		return nil, unauthorized
	}
	t, err := a.tokens.TokenByHash(ctx, HashToken(secret))
	if ErrorCode(err) == CodeNotFound {
		return nil, unauthorized
	}
	if err != nil {
		return nil, err
	}
	now := a.now()
	if t.Usable(now) != "" {
		return nil, unauthorized
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= TouchEvery {
		if err := a.tokens.TouchToken(ctx, t.ID, now); err != nil {
			return nil, err
		}
	}
	return t.Identity(), nil
}

// UserHeader returns the one X-User-Email value of a request (values are
// all it carries; none is ""). Several are refused rather than read by the
// first: a gateway that appends its header instead of replacing it would
// otherwise let the client choose who it is.
func UserHeader(values []string) (string, error) {
	if len(values) > 1 {
		return "", &Error{Code: CodeUnauthorized, Message: "Authentication required", Details: "X-User-Email: sent more than once; send exactly one"}
	}
	if len(values) == 1 {
		return values[0], nil
	}
	return "", nil
}

// Identify turns the address a caller presents into an Identity (header
// mode).
func (a *Access) Identify(email string) (*Identity, error) {
	e, err := ParseEmail(email)
	if err != nil {
		return nil, &Error{Code: CodeUnauthorized, Message: "Authentication required", Details: "X-User-Email: " + err.Error()}
	}
	names, ctl := a.controllers[e]
	return &Identity{Email: e, Admin: a.admins[e], Controller: ctl, ControllerNames: names}, nil
}

// The dashboard's session: its cookie holds the user's API token
// (HttpOnly, SameSite=Strict), and the API takes it in place of an
// Authorization header only from a request that carries SessionHeader,
// which no form or link of another site can send.
const (
	SessionCookie = "kpool_session"
	SessionHeader = "X-Kpool-Dashboard"
)
