package oidc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// RefreshEvery is how often, at most, kpool fetches the issuer's signing
// keys again when a token is signed with a key it does not hold (the
// issuer rotated its keys, or someone sends tokens of unknown keys): a
// flood of such tokens costs the issuer one fetch per interval, not one a
// token.
const RefreshEvery = 30 * time.Second

// keySet is the issuer's signing keys (its jwks_uri), fetched at start and
// again at most once per RefreshEvery. It implements go-oidc's KeySet.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex // held through a fetch: one at a time
	keys    *oidc.StaticKeySet
	fetched time.Time
	fetches int
}

func newKeySet(ctx context.Context, url string, client *http.Client) (*keySet, error) {
	k := &keySet{url: url, client: client, now: time.Now}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.fetch(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

// VerifySignature verifies a token's signature with the keys held, and
// with freshly fetched ones when none verifies it and RefreshEvery has
// passed since the last fetch.
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	k.mu.Lock()
	keys := k.keys
	k.mu.Unlock()
	payload, err := keys.VerifySignature(ctx, jwt)
	if err == nil {
		return payload, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == keys && k.now().Sub(k.fetched) >= RefreshEvery {
		if ferr := k.fetch(ctx); ferr != nil {
			return nil, fmt.Errorf("%w (fetching the issuer's keys again: %v)", err, ferr)
		}
	}
	if k.keys == keys {
		return nil, err
	}
	return k.keys.VerifySignature(ctx, jwt)
}

// fetch reads the key set; k.mu is held.
func (k *keySet) fetch(ctx context.Context) error {
	k.fetched = k.now()
	k.fetches++
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("oidc: %s answered %s", k.url, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("oidc: the keys at %s: %w", k.url, err)
	}
	static := &oidc.StaticKeySet{}
	for _, key := range set.Keys {
		if key.Use == "" || key.Use == "sig" {
			static.PublicKeys = append(static.PublicKeys, key.Key)
		}
	}
	if len(static.PublicKeys) == 0 {
		return fmt.Errorf("oidc: %s holds no signing keys", k.url)
	}
	k.keys = static
	return nil
}
