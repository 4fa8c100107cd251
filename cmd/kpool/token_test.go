package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
)

// TestTokenCreateExpires: kpool token create gives a person's token (user,
// admin) 90 days unless --expires says otherwise, and a controller's none;
// --expires never (or 0, as before) asks for none. What it made is said on
// stderr and shown by kpool token list.
func TestTokenCreateExpires(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "kpool.db")
	const never = time.Duration(-1)
	for _, tc := range []struct {
		name    string
		args    []string
		life    time.Duration // never: no expiry
		wantErr string
	}{
		{"user", nil, 90 * 24 * time.Hour, ""},
		{"admin", []string{"--role", "admin"}, 90 * 24 * time.Hour, ""},
		{"controller", []string{"--role", "controller", "--controller-name", "mine", "--platform", "gcp"}, never, ""},
		{"controller for a day", []string{"--role", "controller", "--controller-name", "mine", "--platform", "gcp", "--expires", "1d"}, 24 * time.Hour, ""},
		{"user for 12h", []string{"--expires", "12h"}, 12 * time.Hour, ""},
		{"user, never", []string{"--expires", "never"}, never, ""},
		{"user, 0", []string{"--expires", "0"}, never, ""},
		{"empty --expires", []string{"--expires", ""}, 90 * 24 * time.Hour, ""},
		{"a bad lifetime", []string{"--expires", "soon"}, 0, `--expires: "soon" is not a lifetime such as 90d or 12h, or never`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := execute("", append([]string{"token", "create", "--database", db, "--user", "a@example.com"}, tc.args...)...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !auth.LooksLikeToken(strings.TrimSpace(out)) {
				t.Fatalf("%v %q", err, out)
			}
			id := strings.Fields(stderr)[1]
			row := tokenRow(t, db, id)
			created, expires := row[6], row[7]
			if tc.life == never {
				if expires != "never" || !strings.Contains(stderr, ", never expires: ") {
					t.Errorf("EXPIRES %q, stderr %q; want never", expires, stderr)
				}
				return
			}
			c, err1 := time.Parse(time.RFC3339, created)
			e, err2 := time.Parse(time.RFC3339, expires)
			if err1 != nil || err2 != nil || e.Sub(c) != tc.life {
				t.Errorf("created %s, expires %s: want a lifetime of %s", created, expires, tc.life)
			}
			if !strings.Contains(stderr, ", expires "+expires+": ") {
				t.Errorf("stderr %q does not say it expires %s", stderr, expires)
			}
		})
	}
}

// tokenRow is the row of kpool token list for token id, split in columns.
func tokenRow(t *testing.T, db, id string) []string {
	t.Helper()
	out, _, err := execute("", "token", "list", "--database", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == id {
			return f
		}
	}
	t.Fatalf("no token %s in\n%s", id, out)
	return nil
}

// TestPrintTokens: EXPIRES says never, the time, or the time marked
// (expired) once it is past.
func TestPrintTokens(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	for _, tc := range []struct {
		name    string
		expires *time.Time
		want    string
	}{
		{"no expiry", nil, "never"},
		{"later", at(time.Hour), "2026-11-23T13:00:00Z"},
		{"now", at(0), "2026-11-23T12:00:00Z (expired)"},
		{"past", at(-time.Hour), "2026-11-23T11:00:00Z (expired)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			tok := &kpool.Token{ID: "tok_1", User: "a@example.com", Role: kpool.RoleUser, CreatedAt: now.Add(-time.Hour), ExpiresAt: tc.expires}
			if err := printTokens(&out, []*kpool.Token{tok}, now); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(out.String(), "\n")
			col := strings.Index(lines[0], "EXPIRES")
			if got := lines[1][col:]; !strings.HasPrefix(got, tc.want+"  ") {
				t.Errorf("EXPIRES column: %q, want %q", got, tc.want)
			}
		})
	}
}
