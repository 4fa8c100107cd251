package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// tokenLen is the length of a token: the prefix and 32 random bytes in
// unpadded base64url (43 characters).
const tokenLen = len(kpool.TokenPrefix) + 43

// NewTokenSecret returns a new token and the hash to store for it.
func NewTokenSecret() (secret, hash string) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	secret = kpool.TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
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
	if len(s) != tokenLen || !strings.HasPrefix(s, kpool.TokenPrefix) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s[len(kpool.TokenPrefix):])
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
	Role            kpool.Role
	ControllerNames []string
	// Groups put the holder in groups (user and admin tokens).
	Groups []string
	// Scope bounds a controller token's reports: its platforms (required
	// for a new controller token), and optionally clusters or teams.
	Scope     kpool.ControllerScope
	CreatedBy string
	// Expires is how long the token lasts from now (0: until revoked).
	Expires time.Duration
}

// CheckToken validates a request for a token and returns the token to store
// (secret not included), made at now.
func CheckToken(in TokenRequest, now time.Time) (*kpool.Token, error) {
	var fe kpool.FieldErrors
	user, err := kpool.ParseEmail(in.User)
	if err != nil {
		fe.Add("user", "%v", err)
	}
	switch in.Role {
	case kpool.RoleUser, kpool.RoleAdmin:
		if len(in.ControllerNames) > 0 {
			fe.Add("controller_names", "only tokens of role controller carry controller names")
		}
		if !in.Scope.IsZero() {
			fe.Add("scope", "only tokens of role controller have a scope")
		}
	case kpool.RoleController:
		if len(in.ControllerNames) == 0 {
			fe.Add("controller_names", "required for role controller: the names it may report status under")
		}
		in.Scope.Check(&fe)
	default:
		fe.Add("role", "%q is not a role: use user, admin or controller", in.Role)
	}
	seen := map[string]bool{}
	for _, n := range in.ControllerNames {
		if !kpool.IsControllerName(n) {
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
	groups, err := kpool.ParseGroups(in.Groups)
	switch {
	case err != nil:
		fe.Add("groups", "%v", err)
	case len(groups) > 0 && in.Role == kpool.RoleController:
		fe.Add("groups", "only user and admin tokens are in groups: controllers are bound to their names")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	t := &kpool.Token{ID: NewTokenID(), User: user, Role: in.Role, ControllerNames: in.ControllerNames, Groups: groups, Scope: in.Scope,
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
