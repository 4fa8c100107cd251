package oidc_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/oidc"
	"github.com/kpool/kpool/oidc/oidctest"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

func TestIdentify(t *testing.T) {
	is := oidctest.New(t)
	v, err := oidc.New(context.Background(), oidc.Config{Issuer: is.URL, Audience: "kpool", AdminGroups: []string{"platform-admins"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	base := func(extra map[string]any) map[string]any {
		c := map[string]any{"iss": is.URL, "aud": "kpool", "sub": "u1", "email": "Alice@Example.com", "email_verified": true,
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
		groups []string
	}{
		{"a user", base(nil), nil, "alice@example.com", false, nil},
		{"an admin by group", base(map[string]any{"groups": []string{"dev", "platform-admins"}}), nil, "alice@example.com", true, []string{"dev", "platform-admins"}},
		{"another group", base(map[string]any{"groups": "dev"}), nil, "alice@example.com", false, []string{"dev"}},
		{"groups in kpool's form", base(map[string]any{"groups": []any{"Team-A", "team-a", " CN=Ops,OU=Groups ", "", "bad\x00name", 7}}), nil, "alice@example.com", false, []string{"team-a", "cn=ops,ou=groups"}},
		{"signed by another key", base(nil), other, "", false, nil},
		{"for another audience", base(map[string]any{"aud": "someone-else"}), nil, "", false, nil},
		{"from another issuer", base(map[string]any{"iss": "https://evil.example"}), nil, "", false, nil},
		{"expired", base(map[string]any{"exp": now.Add(-time.Minute).Unix()}), nil, "", false, nil},
		{"no email", base(map[string]any{"email": nil}), nil, "", false, nil},
		{"email not verified", base(map[string]any{"email_verified": false}), nil, "", false, nil},
		{"email with a name", base(map[string]any{"email": "Alice <alice@example.com>"}), nil, "", false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := is.Sign(t, tc.claims, tc.key)
			if !oidc.IsJWT(raw) {
				t.Fatalf("%q is not taken for a JWT", raw)
			}
			id, err := v.Identify(context.Background(), raw)
			switch {
			case tc.email == "" && !errors.Is(err, oidc.ErrInvalid):
				t.Fatalf("accepted (%+v, %v), want a refusal", id, err)
			case tc.email != "" && err != nil:
				t.Fatal(err)
			case tc.email != "" && (id.Email != tc.email || id.Admin != tc.admin || id.Controller || strings.Join(id.Groups, "|") != strings.Join(tc.groups, "|")):
				t.Fatalf("identity %+v, want %s admin=%v groups %q", id, tc.email, tc.admin, tc.groups)
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
	is := oidctest.New(t)
	v, err := oidc.New(context.Background(), oidc.Config{Issuer: is.URL, Audience: "kpool", AdminGroups: []string{"platform-admins"}})
	if err != nil {
		t.Fatal(err)
	}
	st := testdb.SQLite(t)
	access := auth.NewTokenAccess(st.(kpool.TokenStore)).WithPeople(v)
	srv := httptest.NewServer(api.NewServer(service.New(st, catalog.Registry()), access, slog.New(slog.NewTextHandler(io.Discard, nil))))
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
		return map[string]any{"iss": is.URL, "aud": "kpool", "sub": email, "email": email, "groups": groups,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	}
	alice, bob := is.Sign(t, claims("alice@example.com"), nil), is.Sign(t, claims("bob@example.com", "platform-admins"), nil)
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
	if code, _ := call("GET", "/api/v1/clusters", "", is.Sign(t, claims("alice@example.com"), forged)); code != http.StatusUnauthorized {
		t.Fatalf("a token signed by another key: %d, want 401", code)
	}
}
