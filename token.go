package kpool

import (
	"context"
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

// Identity is the identity a valid token gives.
func (t *Token) Identity() *Identity {
	id := &Identity{Email: t.User, Admin: t.Role == RoleAdmin, Controller: t.Role == RoleController}
	if id.Controller {
		id.ControllerNames = append([]string{}, t.ControllerNames...)
		if !t.Scope.IsZero() {
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

// TouchEvery is how often a token's last-used time is written at most, so
// that requests stay reads.
const TouchEvery = time.Minute
