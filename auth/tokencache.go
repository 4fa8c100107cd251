package auth

import (
	"context"
	"sync"
	"time"

	"github.com/kpool/kpool"
)

// TokenCacheTTL is how long a token looked up by its hash is trusted without
// reading the store again: a revocation (kpool token revoke, on the database)
// takes effect in every process within this time.
const TokenCacheTTL = 5 * time.Second

// maxCachedTokens bounds the cache; a full cache starts over.
const maxCachedTokens = 10000

// TokenCache is a TokenStore that remembers TokenByHash answers for a few
// seconds, so that an authenticated request costs no database round trip
// beyond its own. Only tokens that exist are remembered: an unknown token is
// looked up every time, and a flood of them cannot fill the cache.
type TokenCache struct {
	kpool.TokenStore
	TTL time.Duration    // default TokenCacheTTL
	Now func() time.Time // default time.Now

	mu     sync.Mutex
	byHash map[string]cachedToken
}

type cachedToken struct {
	t  kpool.Token
	at time.Time
}

// NewTokenCache returns ts with its lookups cached for TokenCacheTTL.
func NewTokenCache(ts kpool.TokenStore) *TokenCache {
	return &TokenCache{TokenStore: ts, TTL: TokenCacheTTL, Now: time.Now, byHash: map[string]cachedToken{}}
}

// TokenByHash answers from the cache while the entry is fresh, otherwise
// from the store. The caller gets a copy it may keep.
func (c *TokenCache) TokenByHash(ctx context.Context, hash string) (*kpool.Token, error) {
	now := c.Now()
	c.mu.Lock()
	e, ok := c.byHash[hash]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.TTL && !now.Before(e.at) {
		t := e.t
		return &t, nil
	}
	t, err := c.TokenStore.TokenByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.byHash) >= maxCachedTokens {
		clear(c.byHash)
	}
	c.byHash[hash] = cachedToken{t: *t, at: now}
	c.mu.Unlock()
	cp := *t
	return &cp, nil
}

// TouchToken records the use in the store and in the cached copy, so that
// the next requests within a minute do not write again.
func (c *TokenCache) TouchToken(ctx context.Context, id string, at time.Time) error {
	if err := c.TokenStore.TouchToken(ctx, id, at); err != nil {
		return err
	}
	c.mu.Lock()
	for h, e := range c.byHash {
		if e.t.ID == id {
			e.t.LastUsedAt = &at
			c.byHash[h] = e
		}
	}
	c.mu.Unlock()
	return nil
}

// RevokeToken revokes in the store and forgets the token here at once (other
// processes see it within the TTL).
func (c *TokenCache) RevokeToken(ctx context.Context, id string, at time.Time) error {
	err := c.TokenStore.RevokeToken(ctx, id, at)
	c.mu.Lock()
	for h, e := range c.byHash {
		if e.t.ID == id {
			delete(c.byHash, h)
		}
	}
	c.mu.Unlock()
	return err
}
