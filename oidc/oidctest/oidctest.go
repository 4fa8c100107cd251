// Package oidctest is an OpenID Connect issuer on loopback for tests:
// discovery, its signing keys, and ID tokens signed with them.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is an OpenID Connect issuer served on a loopback port until the
// test ends.
type Issuer struct {
	// URL is the issuer's URL, its tokens' iss.
	URL string
	key *rsa.PrivateKey
	// KeyFetches counts the requests for the issuer's keys.
	KeyFetches atomic.Int64
}

// New starts an issuer.
func New(t testing.TB) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.URL, "jwks_uri": is.URL + "/keys", "authorization_endpoint": is.URL + "/auth",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		is.KeyFetches.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// Sign signs claims with key (the issuer's when nil).
func (is *Issuer) Sign(t testing.TB, claims map[string]any, key *rsa.PrivateKey) string {
	t.Helper()
	if key == nil {
		key = is.key
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1").WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Token is an ID token for audience naming email (verified) in groups,
// valid for an hour.
func (is *Issuer) Token(t testing.TB, audience, email string, groups ...string) string {
	t.Helper()
	now := time.Now()
	return is.Sign(t, map[string]any{"iss": is.URL, "aud": audience, "sub": email, "email": email, "email_verified": true,
		"groups": groups, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}, nil)
}
