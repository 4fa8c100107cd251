package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
)

// TestDevKeptToken checks, on a real SQLite store, when kpool dev uses the
// token its last run kept and, when it does not, the reason its banner
// gives.
func TestDevKeptToken(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openStore(ctx, "sqlite:"+filepath.Join(dir, "dev.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := st.(kpool.TokenStore)
	now := time.Now()
	made := func(req auth.TokenRequest, at time.Time) string {
		if req.Role == "" {
			req.Role = kpool.RoleUser
		}
		if req.CreatedBy == "" {
			req.CreatedBy = devCreatedBy
		}
		if req.User == "" {
			req.User = devUser
		}
		secret, _, err := createToken(ctx, ts, req, at)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	good := made(auth.TokenRequest{Expires: kpool.PersonTokenLifetime}, now)
	revoked := made(auth.TokenRequest{Expires: time.Hour}, now)
	rt, err := ts.TokenByHash(ctx, auth.HashToken(revoked))
	if err != nil || ts.RevokeToken(ctx, rt.ID, now) != nil {
		t.Fatal(err)
	}
	unknown, _ := auth.NewTokenSecret()
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode // 0: no file
		same          bool
		why           string
	}{
		{name: "no file", why: ""},
		{name: "the last run's, working", content: good, mode: 0o600, same: true},
		{name: "not a token", content: "hello", mode: 0o600, why: "the file held no kpool token"},
		{name: "readable by others", content: good, mode: 0o644, why: "the old one's file was readable by others (mode 0644)"},
		{name: "not in this database", content: unknown, mode: 0o600, why: "the old one is not in this database"},
		{name: "revoked", content: revoked, mode: 0o600, why: "the old one was revoked"},
		{name: "expired", content: made(auth.TokenRequest{Expires: time.Hour}, now.Add(-2*time.Hour)), mode: 0o600, why: "the old one was expired"},
		{name: "expires soon", content: made(auth.TokenRequest{Expires: 12 * time.Hour}, now), mode: 0o600, why: "the old one expires within a day"},
		{name: "another user's", content: made(auth.TokenRequest{User: "alice@example.com", Expires: time.Hour * 48}, now), mode: 0o600,
			why: "the old one was alice@example.com's, not dev@kpool.example's"},
		{name: "an admin token", content: made(auth.TokenRequest{Role: kpool.RoleAdmin, CreatedBy: "me", Expires: time.Hour * 48}, now), mode: 0o600,
			why: "the file held a token kpool dev did not make"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "dev.token")
			if tc.mode != 0 {
				if err := os.WriteFile(file, []byte(tc.content+"\n"), tc.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(file, tc.mode); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			use, err := keptToken(ctx, ts, devUser, file, now)
			if err != nil {
				t.Fatal(err)
			}
			if use.Same != tc.same || use.Why != tc.why || (use.Same && use.Secret != strings.TrimSpace(tc.content)) {
				t.Errorf("same %v, why %q; want same %v, why %q", use.Same, use.Why, tc.same, tc.why)
			}
		})
	}
}

// TestDevTokenKeepsOne checks that devToken reuses the kept token and
// leaves no other token of kpool dev unrevoked, and that a new one is
// written readable by the user only.
func TestDevTokenKeepsOne(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openStore(ctx, "sqlite:"+filepath.Join(dir, "dev.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	file := filepath.Join(dir, "dev.token")
	now := time.Now()
	first, err := devToken(ctx, st, devUser, file, now)
	if err != nil || first.Same || first.Why != "" {
		t.Fatalf("first: %+v, %v", first, err)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v, %v", info, err)
	}
	// A stray token of an older kpool dev is revoked; the kept one stays.
	if _, _, err := createToken(ctx, st.(kpool.TokenStore), auth.TokenRequest{User: devUser, Role: kpool.RoleUser, CreatedBy: devCreatedBy, Expires: time.Hour}, now); err != nil {
		t.Fatal(err)
	}
	second, err := devToken(ctx, st, devUser, file, now)
	if err != nil || !second.Same || second.Secret != first.Secret {
		t.Fatalf("second: same %v, %v", second.Same, err)
	}
	all, err := st.(kpool.TokenStore).Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range all {
		if live := tok.RevokedAt == nil; live != (tok.ID == first.Token.ID) {
			t.Errorf("token %s: unrevoked %v, the kept one is %s", tok.ID, live, first.Token.ID)
		}
	}
}

// TestDevFiles checks where kpool dev keeps its token and its emulators'
// record: beside an SQLite database, named after it; for another
// database, in kpool's data folder, named after its address.
func TestDevFiles(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	pgA, pgB := "postgres://kpool@db/a", "postgres://kpool@db/b"
	for _, tc := range []struct{ database, token, record string }{
		{"sqlite:/d/dev.db", "/d/dev.token", "/d/dev-emulators.json"},
		{"sqlite:/d/other.sqlite", "/d/other.token", "/d/other-emulators.json"},
		{"sqlite:rel/x.db", "rel/x.token", "rel/x-emulators.json"},
		{pgA, "/data/kpool/" + devStem(pgA) + ".token", "/data/kpool/" + devStem(pgA) + "-emulators.json"},
	} {
		if got, rec := devTokenFile(tc.database), devEmulatorsFile(tc.database); got != filepath.FromSlash(tc.token) || rec != filepath.FromSlash(tc.record) {
			t.Errorf("%s: %s and %s, want %s and %s", tc.database, got, rec, tc.token, tc.record)
		}
	}
	if a, b := devStem(pgA), devStem(pgB); a == b || !strings.HasPrefix(a, "dev-") || a == "dev" {
		t.Errorf("two PostgreSQL databases share %s and %s", a, b)
	}
}
