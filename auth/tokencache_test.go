package auth_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/store/testdb"
)

// countingTokens counts the store's lookups and writes.
type countingTokens struct {
	kpool.TokenStore
	lookups, touches atomic.Int32
}

func (c *countingTokens) TokenByHash(ctx context.Context, hash string) (*kpool.Token, error) {
	c.lookups.Add(1)
	return c.TokenStore.TokenByHash(ctx, hash)
}

func (c *countingTokens) TouchToken(ctx context.Context, id string, at time.Time) error {
	c.touches.Add(1)
	return c.TokenStore.TouchToken(ctx, id, at)
}

// TestTokenCache: requests within the TTL cost no lookup and one touch a
// minute; a revocation on the database (another process) holds once the TTL
// has passed, one through the cache at once; unknown tokens are never
// remembered; expiry is exact whatever the cache holds.
func TestTokenCache(t *testing.T) {
	ctx := context.Background()
	db := testdb.SQLite(t).(kpool.TokenStore)
	store := &countingTokens{TokenStore: db}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	cache := auth.NewTokenCache(store)
	cache.Now = clock
	a := auth.NewTokenAccess(cache)
	auth.SetAccessClock(a, clock)

	mk := func(req auth.TokenRequest) (string, *kpool.Token) {
		tok, err := auth.CheckToken(req, now)
		if err != nil {
			t.Fatal(err)
		}
		secret, hash := auth.NewTokenSecret()
		if err := db.CreateToken(ctx, tok, hash); err != nil {
			t.Fatal(err)
		}
		return secret, tok
	}
	authenticate := func(secret string) error {
		_, err := a.Authenticate(ctx, "Bearer "+secret, "")
		return err
	}
	secret, tok := mk(auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser})
	short, _ := mk(auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, Expires: 3 * time.Second})

	for range 50 {
		if err := authenticate(secret); err != nil {
			t.Fatal(err)
		}
	}
	if l, w := store.lookups.Load(), store.touches.Load(); l != 1 || w != 1 {
		t.Fatalf("50 requests: %d lookups and %d touches, want 1 and 1", l, w)
	}

	// Expiry is checked on every request, not when the cache was filled.
	if err := authenticate(short); err != nil {
		t.Fatal(err)
	}
	now = now.Add(3 * time.Second)
	if err := authenticate(short); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Fatalf("an expired token from the cache: %v", err)
	}

	// Revoked on the database by another process: trusted at most the TTL.
	if err := db.RevokeToken(ctx, tok.ID, now); err != nil {
		t.Fatal(err)
	}
	now = now.Add(auth.TokenCacheTTL)
	if err := authenticate(secret); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Fatalf("a token revoked %s ago: %v", auth.TokenCacheTTL, err)
	}

	// Revoked through the cache: refused at once.
	other, otherTok := mk(auth.TokenRequest{User: "b@x.io", Role: kpool.RoleUser})
	if err := authenticate(other); err != nil {
		t.Fatal(err)
	}
	if err := cache.RevokeToken(ctx, otherTok.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := authenticate(other); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Fatalf("a token revoked through the cache: %v", err)
	}

	// Unknown tokens are looked up every time.
	unknown, _ := auth.NewTokenSecret()
	before := store.lookups.Load()
	for range 3 {
		if err := authenticate(unknown); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
			t.Fatal(err)
		}
	}
	if n := store.lookups.Load() - before; n != 3 {
		t.Fatalf("unknown token: %d lookups for 3 requests, want 3", n)
	}
}

// BenchmarkAuthenticate is the cost of identifying a request in each mode:
// a trusted header, an API token looked up in the store every time, and one
// answered from the TokenCache.
func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	header, err := auth.NewAccess(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("header", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := header.Authenticate(ctx, "", "a@x.io"); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, open := range testdb.Stores() {
		db := open(b).(kpool.TokenStore)
		tok, err := auth.CheckToken(auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		secret, hash := auth.NewTokenSecret()
		if err := db.CreateToken(ctx, tok, hash); err != nil {
			b.Fatal(err)
		}
		for _, m := range []struct {
			name          string
			a             *auth.Access
			authz, header string
		}{
			{name + "/token", auth.NewTokenAccess(db), "Bearer " + secret, ""},
			{name + "/token-cached", auth.NewTokenAccess(auth.NewTokenCache(db)), "Bearer " + secret, ""},
		} {
			b.Run(m.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.a.Authenticate(ctx, m.authz, m.header); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
