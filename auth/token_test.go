package auth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/store/testdb"
)

func TestCheckToken(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		in    auth.TokenRequest
		field string // "" for valid
	}{
		{"user", auth.TokenRequest{User: "A@x.io", Role: kpool.RoleUser}, ""},
		{"admin expiring", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleAdmin, Expires: time.Hour}, ""},
		{"controller", auth.TokenRequest{User: "c@x.io", Role: kpool.RoleController, Scope: gcpOnly, ControllerNames: []string{"gcp-nodepool-controller"}}, ""},
		{"bad user", auth.TokenRequest{User: "Bob <b@x.io>", Role: kpool.RoleUser}, "user"},
		{"bad role", auth.TokenRequest{User: "a@x.io", Role: "root"}, "role"},
		{"controller without names", auth.TokenRequest{User: "c@x.io", Role: kpool.RoleController}, "controller_names"},
		{"user with names", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, ControllerNames: []string{"x"}}, "controller_names"},
		{"bad name", auth.TokenRequest{User: "c@x.io", Role: kpool.RoleController, Scope: gcpOnly, ControllerNames: []string{"Bad Name"}}, "controller_names"},
		{"twice", auth.TokenRequest{User: "c@x.io", Role: kpool.RoleController, Scope: gcpOnly, ControllerNames: []string{"x", "x"}}, "controller_names"},
		{"negative expiry", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, Expires: -time.Hour}, "expires"},
		{"user in groups", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, Groups: []string{"Team-A", " cn=ops,ou=groups ", "team-a"}}, ""},
		{"admin in a group", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleAdmin, Groups: []string{"platform"}}, ""},
		{"controller without platforms", auth.TokenRequest{User: "c@x.io", Role: kpool.RoleController, ControllerNames: []string{"x"}}, "scope.platforms"},
		{"user with a scope", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, Scope: gcpOnly}, "scope"},
		{"controller in a group", auth.TokenRequest{User: "c@x.io", Role: kpool.RoleController, Scope: gcpOnly, ControllerNames: []string{"x"}, Groups: []string{"g"}}, "groups"},
		{"empty group", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, Groups: []string{" "}}, "groups"},
		{"group with a newline", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, Groups: []string{"a\nb"}}, "groups"},
		{"group too long", auth.TokenRequest{User: "a@x.io", Role: kpool.RoleUser, Groups: []string{strings.Repeat("g", kpool.MaxGroupLen+1)}}, "groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := auth.CheckToken(tc.in, now)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tok.User != strings.ToLower(tc.in.User) || !strings.HasPrefix(tok.ID, "tok_") || (tc.in.Expires > 0) != (tok.ExpiresAt != nil) {
					t.Fatalf("token %+v", tok)
				}
				// Groups are kept lower-cased and trimmed, once each, and
				// are the identity's.
				want, _ := kpool.ParseGroups(tc.in.Groups)
				if strings.Join(tok.Groups, "|") != strings.Join(want, "|") || strings.Join(tok.Identity().Groups, "|") != strings.Join(want, "|") {
					t.Fatalf("groups %q, identity's %q, want %q", tok.Groups, tok.Identity().Groups, want)
				}
				if tc.name == "user in groups" && strings.Join(want, "|") != "team-a|cn=ops,ou=groups" {
					t.Fatalf("ParseGroups: %q", want)
				}
				return
			}
			var e *kpool.Error
			if err == nil || !asError(err, &e) || len(e.Fields) == 0 || e.Fields[0].Field != tc.field {
				t.Fatalf("want an error on %s, got %v", tc.field, err)
			}
		})
	}
}

// scopeOf is gcpOnly for a controller, none for anyone else.
func scopeOf(r kpool.Role) kpool.ControllerScope {
	if r == kpool.RoleController {
		return gcpOnly
	}
	return kpool.ControllerScope{}
}

func asError(err error, e **kpool.Error) bool {
	x, ok := err.(*kpool.Error)
	*e = x
	return ok
}

func TestTokenSecret(t *testing.T) {
	s, h := auth.NewTokenSecret()
	s2, _ := auth.NewTokenSecret()
	if len(s) != len("kpool_")+43 || !auth.LooksLikeToken(s) || s == s2 || auth.HashToken(s) != h || len(h) != 64 {
		t.Fatalf("secret %q hash %q", s, h)
	}
	for _, bad := range []string{"", "kpool_", s[:len(s)-1], "xpool_" + s[6:], s[:10] + "!" + s[11:], s + "A"} {
		if auth.LooksLikeToken(bad) {
			t.Errorf("%q looks like a token", bad)
		}
	}
}

func TestParseExpiry(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", 0, false}, {"never", 0, false}, {"0", 0, false}, {"90d", 90 * 24 * time.Hour, false}, {"12h", 12 * time.Hour, false},
		{"Never", 0, true}, {"never ", 0, true},
		{"0d", 0, true}, {"-1h", 0, true}, {"1.5d", 0, true}, {"d", 0, true}, {"3x", 0, true}, {"01d", 0, true},
	} {
		got, err := auth.ParseExpiry(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%q: got %s, %v", tc.in, got, err)
		}
	}
}

func TestNewAccessControllers(t *testing.T) {
	a, err := auth.NewAccess([]string{"Boss@x.io"}, []string{"any@x.io", "gke@x.io=gcp-nodepool-controller|mine"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		email string
		want  kpool.Identity
	}{
		{"boss@x.io", kpool.Identity{Email: "boss@x.io", Admin: true}},
		{"any@x.io", kpool.Identity{Email: "any@x.io", Controller: true}},
		{"GKE@x.io", kpool.Identity{Email: "gke@x.io", Controller: true, ControllerNames: []string{"gcp-nodepool-controller", "mine"}}},
		{"u@x.io", kpool.Identity{Email: "u@x.io"}},
	} {
		id, err := a.Authenticate(context.Background(), "Bearer whatever", tc.email)
		if err != nil || id.Email != tc.want.Email || id.Admin != tc.want.Admin || id.Controller != tc.want.Controller ||
			strings.Join(id.ControllerNames, ",") != strings.Join(tc.want.ControllerNames, ",") {
			t.Errorf("%s: got %+v, %v", tc.email, id, err)
		}
	}
	for _, bad := range [][]string{{"x@x.io=Bad Name"}, {"x@x.io="}, {"x@x.io=a|"}, {"not-an-email=a"}} {
		if _, err := auth.NewAccess(nil, bad); err == nil || !strings.Contains(err.Error(), "controllers") {
			t.Errorf("%q: want an error naming controllers, got %v", bad, err)
		}
	}
}

// TestTokenAccess: only a known, current token authenticates; the header
// of header mode counts for nothing, and every refusal reads the same.
func TestTokenAccess(t *testing.T) {
	st := testdb.SQLite(t)
	ts := st.(kpool.TokenStore)
	ctx := context.Background()
	mk := func(req auth.TokenRequest, at time.Time) (string, *kpool.Token) {
		tok, err := auth.CheckToken(req, at)
		if err != nil {
			t.Fatal(err)
		}
		secret, hash := auth.NewTokenSecret()
		if err := ts.CreateToken(ctx, tok, hash); err != nil {
			t.Fatal(err)
		}
		return secret, tok
	}
	now := time.Now()
	good, goodTok := mk(auth.TokenRequest{User: "a@x.io", Role: kpool.RoleAdmin}, now)
	ctl, _ := mk(auth.TokenRequest{User: "c@x.io", Role: kpool.RoleController, Scope: gcpOnly, ControllerNames: []string{"mine"}}, now)
	expired, _ := mk(auth.TokenRequest{User: "a@x.io", Role: kpool.RoleAdmin, Expires: time.Hour}, now.Add(-2*time.Hour))
	revoked, revokedTok := mk(auth.TokenRequest{User: "a@x.io", Role: kpool.RoleAdmin}, now)
	if err := ts.RevokeToken(ctx, revokedTok.ID, now); err != nil {
		t.Fatal(err)
	}
	unknown, _ := auth.NewTokenSecret()
	a := auth.NewTokenAccess(ts)

	id, err := a.Authenticate(ctx, "Bearer "+good, "")
	if err != nil || id.Email != "a@x.io" || !id.Admin || id.Controller {
		t.Fatalf("good token: %+v, %v", id, err)
	}
	if id, err := a.Authenticate(ctx, "bearer "+ctl, ""); err != nil || !id.Controller || strings.Join(id.ControllerNames, ",") != "mine" {
		t.Fatalf("controller token: %+v, %v", id, err)
	}
	list, _ := ts.Tokens(ctx)
	for _, tok := range list {
		if tok.ID == goodTok.ID && tok.LastUsedAt == nil {
			t.Fatal("use of a token not recorded")
		}
	}
	var first *kpool.Error
	for _, tc := range []struct{ name, authz, email string }{
		{"anonymous", "", ""},
		{"forged header", "", "a@x.io"},
		{"basic", "Basic " + good, ""},
		{"no scheme", good, ""},
		{"unknown", "Bearer " + unknown, ""},
		{"expired", "Bearer " + expired, ""},
		{"revoked", "Bearer " + revoked, ""},
		{"garbage", "Bearer kpool_short", ""},
	} {
		_, err := a.Authenticate(ctx, tc.authz, tc.email)
		e, isErr := err.(*kpool.Error)
		if !isErr || e.Code != kpool.CodeUnauthorized {
			t.Fatalf("%s: want UNAUTHORIZED, got %v", tc.name, err)
		}
		if first == nil {
			first = e
		} else if e.Message != first.Message || e.Details != first.Details {
			t.Fatalf("%s: the refusal says more than the others: %+v", tc.name, e)
		}
	}
}

// TestDefaultLifetime: a person's token that its maker gave no lifetime is
// refused (UNAUTHORIZED) from the moment PersonTokenLifetime has passed; a
// controller's lasts until revoked.
func TestDefaultLifetime(t *testing.T) {
	ts := testdb.SQLite(t).(kpool.TokenStore)
	ctx := context.Background()
	created := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		role  kpool.Role
		names []string
		life  time.Duration // 0: until revoked
	}{
		{kpool.RoleUser, nil, 90 * 24 * time.Hour},
		{kpool.RoleAdmin, nil, 90 * 24 * time.Hour},
		{kpool.RoleController, []string{"mine"}, 0},
	} {
		t.Run(string(tc.role), func(t *testing.T) {
			if got := tc.role.DefaultLifetime(); got != tc.life {
				t.Fatalf("lifetime %s, want %s", got, tc.life)
			}
			expires := tc.life != 0
			tok, err := auth.CheckToken(auth.TokenRequest{User: "a@x.io", Role: tc.role, ControllerNames: tc.names, Expires: tc.life, Scope: scopeOf(tc.role)}, created)
			if err != nil {
				t.Fatal(err)
			}
			secret, hash := auth.NewTokenSecret()
			if err := ts.CreateToken(ctx, tok, hash); err != nil {
				t.Fatal(err)
			}
			a := auth.NewTokenAccess(ts)
			for _, at := range []struct {
				after time.Duration
				ok    bool
			}{
				{kpool.PersonTokenLifetime - time.Second, true},
				{kpool.PersonTokenLifetime, !expires},
				{100 * 365 * 24 * time.Hour, !expires},
			} {
				auth.SetAccessClock(a, func() time.Time { return created.Add(at.after) })
				_, err := a.Authenticate(ctx, "Bearer "+secret, "")
				if at.ok != (err == nil) || (err != nil && kpool.ErrorCode(err) != kpool.CodeUnauthorized) {
					t.Errorf("%s after it was made: %v", at.after, err)
				}
			}
		})
	}
}

// gcpOnly scopes a controller token to GKE's pools.
var gcpOnly = kpool.ControllerScope{Platforms: []kpool.PlatformType{kpool.PlatformGCP}}
