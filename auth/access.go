package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

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
	tokens      kpool.TokenStore
	people      People // token mode: bearers that are not kpool tokens (OIDC)
	now         func() time.Time
}

// People identifies a person by a bearer token of an identity provider
// (package oidc: an OpenID Connect issuer's ID token).
type People interface {
	Identify(ctx context.Context, raw string) (*kpool.Identity, error)
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
		e, err := kpool.ParseEmail(s)
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
		e, err := kpool.ParseEmail(addr)
		if err != nil {
			return nil, fmt.Errorf("controllers: %v", err)
		}
		var names []string
		if granted {
			names = []string{}
			for _, n := range strings.Split(list, "|") {
				if n = strings.TrimSpace(n); !kpool.IsControllerName(n) {
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
func NewTokenAccess(tokens kpool.TokenStore) *Access {
	return &Access{mode: AuthToken, tokens: tokens, now: time.Now}
}

// WithTokens makes a header-mode Access accept API tokens too: a request
// whose Authorization carries a kpool token is who the token says (and
// refused if it is not valid); any other is identified by X-User-Email, so a
// gateway's own Authorization header passes through as before.
func (a *Access) WithTokens(tokens kpool.TokenStore) *Access {
	a.tokens, a.now = tokens, time.Now
	return a
}

// Mode is AuthToken or AuthHeader.
func (a *Access) Mode() string { return a.mode }

// unauthorized is the one answer to a missing, unknown, expired or revoked
// token: it does not say which.
var unauthorized = &kpool.Error{Code: kpool.CodeUnauthorized, Message: "Authentication required", Details: "send Authorization: Bearer <API token>"}

// Authenticate returns the caller of a request from its Authorization and
// X-User-Email headers, as the mode says.
func (a *Access) Authenticate(ctx context.Context, authorization, email string) (*kpool.Identity, error) {
	scheme, secret, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	secret = strings.TrimSpace(secret)
	bearer := strings.EqualFold(scheme, "Bearer")
	if a.mode == AuthHeader && (a.tokens == nil || !bearer || !strings.HasPrefix(secret, kpool.TokenPrefix)) {
		return a.Identify(email)
	}
	if bearer && a.people != nil && !strings.HasPrefix(secret, kpool.TokenPrefix) {
		id, err := a.people.Identify(ctx, secret)
		if err != nil {
			return nil, unauthorized
		}
		// People are users or admins: controllers use API tokens.
		return &kpool.Identity{Email: id.Email, Admin: id.Admin, Groups: id.Groups}, nil
	}
	if !bearer || !LooksLikeToken(secret) {
		return nil, unauthorized
	}
	t, err := a.tokens.TokenByHash(ctx, HashToken(secret))
	if kpool.ErrorCode(err) == kpool.CodeNotFound {
		return nil, unauthorized
	}
	if err != nil {
		return nil, err
	}
	now := a.now()
	if t.Usable(now) != "" {
		return nil, unauthorized
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= kpool.TouchEvery {
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
		return "", &kpool.Error{Code: kpool.CodeUnauthorized, Message: "Authentication required", Details: "X-User-Email: sent more than once; send exactly one"}
	}
	if len(values) == 1 {
		return values[0], nil
	}
	return "", nil
}

// Identify turns the address a caller presents into an Identity (header
// mode).
func (a *Access) Identify(email string) (*kpool.Identity, error) {
	e, err := kpool.ParseEmail(email)
	if err != nil {
		return nil, &kpool.Error{Code: kpool.CodeUnauthorized, Message: "Authentication required", Details: "X-User-Email: " + err.Error()}
	}
	names, ctl := a.controllers[e]
	return &kpool.Identity{Email: e, Admin: a.admins[e], Controller: ctl, ControllerNames: names}, nil
}

// The dashboard's session: its cookie holds the user's API token
// (HttpOnly, SameSite=Strict), and the API takes it in place of an
// Authorization header only from a request that carries SessionHeader,
// which no form or link of another site can send.
const (
	SessionCookie = "kpool_session"
	SessionHeader = "X-Kpool-Dashboard"
)
