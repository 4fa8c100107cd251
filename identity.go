package kpool

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
)

// Identity is the caller of an operation. Admins see and change everything;
// controllers read everything and are the only ones that write status; every
// other caller sees only the clusters it registered and their pools.
type Identity struct {
	Email      string
	Admin      bool
	Controller bool
}

// SeesAll reports whether the caller may read every cluster and pool.
func (id *Identity) SeesAll() bool { return id.Admin || id.Controller }

// Owns reports whether the caller may see and change an object created by owner.
func (id *Identity) Owns(owner string) bool { return id.Admin || strings.EqualFold(id.Email, owner) }

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

// Access decides who is an admin and who is a controller.
type Access struct {
	admins      map[string]bool
	controllers map[string]bool
}

// NewAccess builds an Access from lists of e-mail addresses.
func NewAccess(admins, controllers []string) (*Access, error) {
	a := &Access{admins: map[string]bool{}, controllers: map[string]bool{}}
	for _, set := range []struct {
		name string
		in   []string
		out  map[string]bool
	}{{"admins", admins, a.admins}, {"controllers", controllers, a.controllers}} {
		for _, s := range set.in {
			if strings.TrimSpace(s) == "" {
				continue
			}
			e, err := ParseEmail(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", set.name, err)
			}
			set.out[e] = true
		}
	}
	return a, nil
}

// Identify turns the address a caller presents into an Identity.
func (a *Access) Identify(email string) (*Identity, error) {
	e, err := ParseEmail(email)
	if err != nil {
		return nil, &Error{Code: CodeUnauthorized, Message: "Authentication required", Details: "X-User-Email: " + err.Error()}
	}
	return &Identity{Email: e, Admin: a.admins[e], Controller: a.controllers[e]}, nil
}
