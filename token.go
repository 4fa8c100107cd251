package kpool

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Role is what an API token lets its holder do.
type Role string

// Roles of tokens.
const (
	RoleUser       Role = "user"
	RoleAdmin      Role = "admin"
	RoleController Role = "controller"
)

// TokenPrefix starts every API token, so that a leaked one is easy to find
// (secret scanners, logs).
const TokenPrefix = "kpool_"

// tokenLen is the length of a token: the prefix and 32 random bytes in
// unpadded base64url (43 characters).
const tokenLen = len(TokenPrefix) + 43

// Token is an API token as stored: everything but its secret, of which only
// the SHA-256 is kept.
type Token struct {
	ID   string `json:"id"`
	User string `json:"user"`
	Role Role   `json:"role"`
	// ControllerNames are the controller names a controller token may
	// report status under.
	ControllerNames []string `json:"controller_names"`
	// Groups are the groups the holder is in (ParseGroup's form), for the
	// operator's credentials granted to a group.
	Groups []string `json:"groups"`
	// Scope bounds the pools a controller token may report on.
	Scope      ControllerScope `json:"scope"`
	CreatedAt  time.Time       `json:"created_at"`
	CreatedBy  string          `json:"created_by"`
	ExpiresAt  *time.Time      `json:"expires_at,omitempty"`
	LastUsedAt *time.Time      `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time      `json:"revoked_at,omitempty"`
}

// TokenStore keeps API tokens (store/sqlite and store/postgres).
type TokenStore interface {
	// CreateToken stores t with the hash of its secret.
	CreateToken(ctx context.Context, t *Token, hash string) error
	// TokenByHash returns the token whose secret hashes to hash, revoked and
	// expired ones included; NOT_FOUND when there is none.
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	// Tokens lists every token, oldest first.
	Tokens(ctx context.Context) ([]*Token, error)
	// RevokeToken marks a token revoked at at (NOT_FOUND for an unknown id;
	// revoking twice keeps the first time).
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// TouchToken records that the token was used at at, unless it was
	// already recorded as used after at minus a minute.
	TouchToken(ctx context.Context, id string, at time.Time) error
}

// TouchEvery is how often a token's last-used time is written at most, so
// that requests stay reads.
const TouchEvery = time.Minute

// NewTokenSecret returns a new token and the hash to store for it.
func NewTokenSecret() (secret, hash string) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	secret = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, HashToken(secret)
}

// HashToken is the stored form of a token: its SHA-256 in hex. A token has
// 256 bits of entropy, so a fast hash is enough.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LooksLikeToken reports whether s has a token's form (before any lookup).
func LooksLikeToken(s string) bool {
	if len(s) != tokenLen || !strings.HasPrefix(s, TokenPrefix) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s[len(TokenPrefix):])
	return err == nil
}

// NewTokenID returns a token id: short, random, not secret.
func NewTokenID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "tok_" + hex.EncodeToString(b[:])
}

// TokenRequest is what a new token is made from.
type TokenRequest struct {
	User            string
	Role            Role
	ControllerNames []string
	// Groups put the holder in groups (user and admin tokens).
	Groups []string
	// Scope bounds a controller token's reports: its platforms (required
	// for a new controller token), and optionally clusters or teams.
	Scope     ControllerScope
	CreatedBy string
	// Expires is how long the token lasts from now (0: until revoked).
	Expires time.Duration
}

// CheckToken validates a request for a token and returns the token to store
// (secret not included), made at now.
func CheckToken(in TokenRequest, now time.Time) (*Token, error) {
	var fe FieldErrors
	user, err := ParseEmail(in.User)
	if err != nil {
		fe.Add("user", "%v", err)
	}
	switch in.Role {
	case RoleUser, RoleAdmin:
		if len(in.ControllerNames) > 0 {
			fe.Add("controller_names", "only tokens of role controller carry controller names")
		}
		if !in.Scope.empty() {
			fe.Add("scope", "only tokens of role controller have a scope")
		}
	case RoleController:
		if len(in.ControllerNames) == 0 {
			fe.Add("controller_names", "required for role controller: the names it may report status under")
		}
		in.Scope.check(&fe)
	default:
		fe.Add("role", "%q is not a role: use user, admin or controller", in.Role)
	}
	seen := map[string]bool{}
	for _, n := range in.ControllerNames {
		if !controllerName.MatchString(n) {
			fe.Add("controller_names", "%q is not valid: use lowercase letters, digits, '-' and '.'", n)
		}
		if seen[n] {
			fe.Add("controller_names", "%q is given twice", n)
		}
		seen[n] = true
	}
	if in.Expires < 0 {
		fe.Add("expires", "must not be negative")
	}
	groups, err := ParseGroups(in.Groups)
	switch {
	case err != nil:
		fe.Add("groups", "%v", err)
	case len(groups) > 0 && in.Role == RoleController:
		fe.Add("groups", "only user and admin tokens are in groups: controllers are bound to their names")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	t := &Token{ID: NewTokenID(), User: user, Role: in.Role, ControllerNames: in.ControllerNames, Groups: groups, Scope: in.Scope,
		CreatedAt: now.UTC().Truncate(time.Microsecond), CreatedBy: in.CreatedBy}
	if t.ControllerNames == nil {
		t.ControllerNames = []string{}
	}
	if t.Groups == nil {
		t.Groups = []string{}
	}
	if in.Expires > 0 {
		at := t.CreatedAt.Add(in.Expires)
		t.ExpiresAt = &at
	}
	return t, nil
}

// Identity is the identity a valid token gives.
func (t *Token) Identity() *Identity {
	id := &Identity{Email: t.User, Admin: t.Role == RoleAdmin, Controller: t.Role == RoleController}
	if id.Controller {
		id.ControllerNames = append([]string{}, t.ControllerNames...)
		if !t.Scope.empty() {
			scope := t.Scope
			id.Scope = &scope
		}
	}
	if len(t.Groups) > 0 {
		id.Groups = append([]string{}, t.Groups...)
	}
	return id
}

// Usable reports why the token may not be used at now, or "" when it may.
func (t *Token) Usable(now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return "revoked"
	case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
		return "expired"
	}
	return ""
}

// PersonTokenLifetime is how long a user or admin token lasts when its
// maker gives no lifetime: a person's token that is forgotten, or leaks,
// stops working by itself.
const PersonTokenLifetime = 90 * 24 * time.Hour

// DefaultLifetime is how long a token of role r lasts when its maker gives
// no lifetime (0: until revoked). People's tokens (user, admin) last
// PersonTokenLifetime. Controllers' last until revoked: they live in a
// deployment's secret, where one that expired would stop every pool's
// reconciliation without warning; their makers rotate them or give
// --expires.
func (r Role) DefaultLifetime() time.Duration {
	if r == RoleUser || r == RoleAdmin {
		return PersonTokenLifetime
	}
	return 0
}

// NeverExpires is the lifetime of a token that lasts until revoked, as
// ParseExpiry reads it.
const NeverExpires = "never"

// ParseExpiry reads a token lifetime: a Go duration (36h), a number of days
// (90d), or NeverExpires (also "0" or ""), which is 0: until revoked.
func ParseExpiry(s string) (time.Duration, error) {
	if s == "" || s == "0" || s == NeverExpires {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(d, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != d || n > 36500 {
			return 0, fmt.Errorf("%q is not a number of days such as 90d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a lifetime such as 90d or 12h, or never", s)
	}
	return d, nil
}
