package oidc

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"slices"
	"testing"
	"time"

	"github.com/kpool/kpool/oidc/oidctest"
)

// TestKeyFetchesBounded: tokens signed with keys the issuer does not have
// cost at most one fetch of its keys per RefreshEvery, however many come.
func TestKeyFetchesBounded(t *testing.T) {
	is := oidctest.New(t)
	v, err := New(context.Background(), Config{Issuer: is.URL, Audience: "kpool"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	v.keys.now = func() time.Time { return now }
	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	bad := is.Sign(t, map[string]any{"iss": is.URL, "aud": "kpool", "email": "x@example.com", "exp": now.Add(time.Hour).Unix()}, stranger)
	flood := func() {
		for range 200 {
			if _, err := v.Identify(context.Background(), bad); err == nil {
				t.Fatal("a token of an unknown key was taken")
			}
		}
	}
	flood()
	if n := is.KeyFetches.Load(); n != 1 {
		t.Fatalf("%d key fetches for 200 tokens of an unknown key right after start, want 1 (the one at start)", n)
	}
	now = now.Add(RefreshEvery)
	flood()
	if n := is.KeyFetches.Load(); n != 2 {
		t.Fatalf("%d key fetches after another 200 a while later, want 2", n)
	}
	if _, err := v.Identify(context.Background(), is.Token(t, "kpool", "alice@example.com")); err != nil {
		t.Fatalf("a good token after the flood: %v", err)
	}
}

// TestIssuerOverHTTP: an issuer is reached over https, or plain http on
// loopback only.
func TestIssuerOverHTTP(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://login.example.com":      true,
		"http://127.0.0.1:5556":          true,
		"http://localhost:5556/realms/x": true,
		"http://[::1]:5556":              true,
		"http://login.example.com":       false,
		"http://10.0.0.5:5556":           false,
		"ftp://login.example.com":        false,
		"login.example.com":              false,
	} {
		if err := checkIssuer(raw); (err == nil) != ok {
			t.Errorf("%s: %v, want ok=%v", raw, err, ok)
		}
	}
}

// TestTeamRoles: team roles come from the operator's mapping of the
// issuer's groups only; a group that reads TEAM:ROLE grants nothing.
func TestTeamRoles(t *testing.T) {
	is := oidctest.New(t)
	roles, err := ParseTeamRoles([]string{"platform-devs=platform:operator", "Platform-Leads=platform:ADMIN"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(context.Background(), Config{Issuer: is.URL, Audience: "kpool", TeamRoles: roles})
	if err != nil {
		t.Fatal(err)
	}
	id, err := v.Identify(context.Background(), is.Token(t, "kpool", "a@example.com", "platform-devs", "data:admin"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(id.Groups, "platform:operator") || slices.Contains(id.Groups, "data:admin") || id.Role("data") != "" {
		t.Fatalf("groups %v", id.Groups)
	}
	for _, bad := range []string{"platform-devs", "=platform:admin", "g=platform:owner", "g=Not A Team:viewer"} {
		if _, err := ParseTeamRoles([]string{bad}); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}
