package kpool

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
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

// Visible is what a list filters on for the caller: its e-mail address and
// teams, or none for one who sees all.
func (id *Identity) Visible() (owner string, teams []string) {
	if id.SeesAll() {
		return "", nil
	}
	return id.Email, id.TeamNames()
}

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
