package store

import (
	"context"
	"time"

	"github.com/kpool/kpool"
)

const tokenCols = `id, user_email, role, controller_names, group_names, scope, created_at, created_by, expires_at, last_used_at, revoked_at`

func scanToken(s Scanner) (*kpool.Token, error) {
	t := &kpool.Token{}
	var role string
	err := s.Scan(&t.ID, &t.User, &role, jsonCol{&t.ControllerNames}, jsonCol{&t.Groups}, jsonCol{&t.Scope}, timeCol{&t.CreatedAt}, &t.CreatedBy,
		nullTimeCol{&t.ExpiresAt}, nullTimeCol{&t.LastUsedAt}, nullTimeCol{&t.RevokedAt})
	t.Role = kpool.Role(role)
	if t.ControllerNames == nil {
		t.ControllerNames = []string{}
	}
	if t.Groups == nil {
		t.Groups = []string{}
	}
	return t, err
}

func tokenNotFound(id string) error {
	return &kpool.Error{Code: kpool.CodeNotFound, Message: "Token not found", Details: id}
}

// CreateToken stores a token with the hash of its secret.
func (db *DB) CreateToken(ctx context.Context, t *kpool.Token, hash string) error {
	names, groups := t.ControllerNames, t.Groups
	if names == nil {
		names = []string{}
	}
	if groups == nil {
		groups = []string{}
	}
	_, err := db.db.Exec(ctx, db.q(`INSERT INTO tokens (id, token_hash, user_email, role, controller_names, group_names, scope, created_at, created_by, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		t.ID, hash, t.User, string(t.Role), mustJSON(names), mustJSON(groups), mustJSON(t.Scope), db.d.Time(t.CreatedAt), t.CreatedBy, db.nullTime(t.ExpiresAt))
	return db.fail(ctx, err)
}

// TokenByHash returns the token whose secret has hash.
func (db *DB) TokenByHash(ctx context.Context, hash string) (*kpool.Token, error) {
	var t *kpool.Token
	err := db.db.Read(ctx, db.read(`SELECT `+tokenCols+` FROM tokens WHERE token_hash = ?`, []any{hash}, func(s Scanner) (err error) {
		t, err = scanToken(s)
		return err
	}))
	if err == nil && t == nil {
		err = tokenNotFound("")
	}
	return t, db.fail(ctx, err)
}

// Tokens lists every token, oldest first.
func (db *DB) Tokens(ctx context.Context) ([]*kpool.Token, error) {
	out := []*kpool.Token{}
	err := db.db.Read(ctx, db.read(`SELECT `+tokenCols+` FROM tokens ORDER BY created_at, id`, nil, func(s Scanner) error {
		t, err := scanToken(s)
		out = append(out, t)
		return err
	}))
	return out, db.fail(ctx, err)
}

// RevokeToken marks a token revoked; a revoked token keeps its first time.
func (db *DB) RevokeToken(ctx context.Context, id string, at time.Time) error {
	n, err := db.db.Exec(ctx, db.q(`UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`), db.d.Time(at), id)
	if err == nil && n == 0 {
		err = tokenNotFound(id)
	}
	return db.fail(ctx, err)
}

// TouchToken records a use of a token, at most once per kpool.TouchEvery.
func (db *DB) TouchToken(ctx context.Context, id string, at time.Time) error {
	_, err := db.db.Exec(ctx, db.q(`UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)`),
		db.d.Time(at), id, db.d.Time(at.Add(-kpool.TouchEvery)))
	return db.fail(ctx, err)
}

var _ kpool.TokenStore = (*DB)(nil)
