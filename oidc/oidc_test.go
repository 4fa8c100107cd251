package oidc_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/oidc"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

// issuer is a small OpenID Connect issuer on loopback: discovery, its
// keys, and tokens signed with them.
type issuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/keys", "authorization_endpoint": is.srv.URL + "/auth",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// token signs claims with key (the issuer's unless another is given).
func (is *issuer) token(t *testing.T, claims map[string]any, key *rsa.PrivateKey) string {
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

func TestIdentify(t *testing.T) {
	is := newIssuer(t)
	v, err := oidc.New(context.Background(), oidc.Config{Issuer: is.srv.URL, Audience: "kpool", AdminGroups: []string{"platform-admins"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	base := func(extra map[string]any) map[string]any {
		c := map[string]any{"iss": is.srv.URL, "aud": "kpool", "sub": "u1", "email": "Alice@Example.com", "email_verified": true,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	tests := []struct {
		name   string
		claims map[string]any
		key    *rsa.PrivateKey
		email  string // "" for a refusal
		admin  bool
	}{
		{"a user", base(nil), nil, "alice@example.com", false},
		{"an admin by group", base(map[string]any{"groups": []string{"dev", "platform-admins"}}), nil, "alice@example.com", true},
		{"another group", base(map[string]any{"groups": "dev"}), nil, "alice@example.com", false},
		{"signed by another key", base(nil), other, "", false},
		{"for another audience", base(map[string]any{"aud": "someone-else"}), nil, "", false},
		{"from another issuer", base(map[string]any{"iss": "https://evil.example"}), nil, "", false},
		{"expired", base(map[string]any{"exp": now.Add(-time.Minute).Unix()}), nil, "", false},
		{"no email", base(map[string]any{"email": nil}), nil, "", false},
		{"email not verified", base(map[string]any{"email_verified": false}), nil, "", false},
		{"email with a name", base(map[string]any{"email": "Alice <alice@example.com>"}), nil, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := is.token(t, tc.claims, tc.key)
			if !oidc.IsJWT(raw) {
				t.Fatalf("%q is not taken for a JWT", raw)
			}
			id, err := v.Identify(context.Background(), raw)
			switch {
			case tc.email == "" && !errors.Is(err, oidc.ErrInvalid):
				t.Fatalf("accepted (%+v, %v), want a refusal", id, err)
			case tc.email != "" && err != nil:
				t.Fatal(err)
			case tc.email != "" && (id.Email != tc.email || id.Admin != tc.admin || id.Controller):
				t.Fatalf("identity %+v, want %s admin=%v", id, tc.email, tc.admin)
			}
		})
	}
	if oidc.IsJWT("kpool_abc.def.ghi") || oidc.IsJWT("not-a-jwt") {
		t.Fatal("kpool tokens and garbage are not JWTs")
	}
}

// TestIssuerRequired: a verifier needs an issuer that answers; one that
// does not is an error at start, not at the first request.
func TestIssuerRequired(t *testing.T) {
	if _, err := oidc.New(context.Background(), oidc.Config{Issuer: "", Audience: "kpool"}); err == nil {
		t.Fatal("no issuer accepted")
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // a closed port on loopback
	if _, err := oidc.New(context.Background(), oidc.Config{Issuer: srv.URL, Audience: "kpool"}); err == nil {
		t.Fatal("an issuer that does not answer accepted")
	}
}

// TestAPIWithIssuer: kpool's API in token mode, with the issuer's people
// beside API tokens: an ID token is the user it names, an admin by group
// sees everything, a token of another issuer is 401.
func TestAPIWithIssuer(t *testing.T) {
	is := newIssuer(t)
	v, err := oidc.New(context.Background(), oidc.Config{Issuer: is.srv.URL, Audience: "kpool", AdminGroups: []string{"platform-admins"}})
	if err != nil {
		t.Fatal(err)
	}
	st := testdb.SQLite(t)
	access := kpool.NewTokenAccess(st.(kpool.TokenStore)).WithPeople(v)
	srv := httptest.NewServer(api.NewServer(kpool.NewService(st, catalog.Registry()), access, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	call := func(method, path, body, bearer string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	now := time.Now()
	claims := func(email string, groups ...string) map[string]any {
		return map[string]any{"iss": is.srv.URL, "aud": "kpool", "sub": email, "email": email, "groups": groups,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	}
	alice, bob := is.token(t, claims("alice@example.com"), nil), is.token(t, claims("bob@example.com", "platform-admins"), nil)
	if code, body := call("POST", "/api/v1/clusters", `{"name":"prod","spec":{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}}}}`, alice); code != http.StatusCreated || !strings.Contains(body, `"created_by":"alice@example.com"`) {
		t.Fatalf("create as alice: %d %s", code, body)
	}
	if code, body := call("GET", "/api/v1/clusters", "", bob); code != http.StatusOK || !strings.Contains(body, `"name":"prod"`) {
		t.Fatalf("list as bob, an admin by group: %d %s", code, body)
	}
	forged, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := call("GET", "/api/v1/clusters", "", is.token(t, claims("alice@example.com"), forged)); code != http.StatusUnauthorized {
		t.Fatalf("a token signed by another key: %d, want 401", code)
	}
}
