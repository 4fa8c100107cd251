package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/service"
)

// testTokens stores tokens by the hash of their secret, lists them without
// it, revokes them once and records their use at most once a minute.
func testTokens(t *testing.T, s *service.Service) {
	ts, isTS := s.Store.(kpool.TokenStore)
	if !isTS {
		t.Fatalf("%T does not keep tokens", s.Store)
	}
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)
	ctl := ok(auth.CheckToken(auth.TokenRequest{User: Controller, Role: kpool.RoleController,
		ControllerNames: []string{"gcp-nodepool-controller", "x.y"}, CreatedBy: "kpool token create", Expires: 90 * 24 * time.Hour,
		Scope: kpool.ControllerScope{Platforms: []kpool.PlatformType{kpool.PlatformGCP}, Teams: []string{"platform"}}}, now))(t)
	user := ok(auth.CheckToken(auth.TokenRequest{User: Alice, Role: kpool.RoleUser, Groups: []string{"Team-A", "cn=ops,ou=groups"}}, now.Add(time.Second)))(t)
	secret, hash := auth.NewTokenSecret()
	_, hash2 := auth.NewTokenSecret()
	if err := ts.CreateToken(ctx, ctl, hash); err != nil {
		t.Fatal(err)
	}
	if err := ts.CreateToken(ctx, user, hash2); err != nil {
		t.Fatal(err)
	}
	if err := ts.CreateToken(ctx, &kpool.Token{ID: "tok_other", User: Bob, Role: kpool.RoleUser, CreatedAt: now}, hash); err == nil {
		t.Fatal("a second token with the same hash was stored")
	}

	got := ok(ts.TokenByHash(ctx, auth.HashToken(secret)))(t)
	if !reflect.DeepEqual(got, ctl) {
		t.Fatalf("by hash: got %+v, want %+v", got, ctl)
	}
	if _, err := ts.TokenByHash(ctx, auth.HashToken(secret+"x")); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Fatalf("unknown hash: want NOT_FOUND, got %v", err)
	}
	list := ok(ts.Tokens(ctx))(t)
	if len(list) != 2 || list[0].ID != ctl.ID || list[1].ID != user.ID || list[1].ExpiresAt != nil || len(list[1].ControllerNames) != 0 {
		t.Fatalf("list: %+v", list)
	}
	// Groups are kept as CheckToken made them (lower case), and a token
	// without any lists none, not null.
	if !reflect.DeepEqual(list[1], user) || !reflect.DeepEqual(list[1].Groups, []string{"team-a", "cn=ops,ou=groups"}) ||
		list[0].Groups == nil || len(list[0].Groups) != 0 {
		t.Fatalf("groups: %+v and %+v, want %+v", list[0], list[1], user)
	}
	if got := ok(ts.TokenByHash(ctx, hash2))(t); !reflect.DeepEqual(got.Identity().Groups, []string{"team-a", "cn=ops,ou=groups"}) {
		t.Fatalf("by hash: the identity's groups are %q", got.Identity().Groups)
	}

	// Use is recorded once a minute at most.
	for _, tc := range []struct {
		at   time.Time
		want time.Time
	}{
		{now.Add(time.Minute), now.Add(time.Minute)},
		{now.Add(time.Minute + 59*time.Second), now.Add(time.Minute)},
		{now.Add(2 * time.Minute), now.Add(2 * time.Minute)},
	} {
		if err := ts.TouchToken(ctx, ctl.ID, tc.at); err != nil {
			t.Fatal(err)
		}
		got := ok(ts.TokenByHash(ctx, hash))(t)
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(tc.want) {
			t.Fatalf("touched at %s: last used %v, want %s", tc.at, got.LastUsedAt, tc.want)
		}
	}

	if err := ts.RevokeToken(ctx, ctl.ID, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := ts.RevokeToken(ctx, ctl.ID, now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got = ok(ts.TokenByHash(ctx, hash))(t)
	if got.RevokedAt == nil || !got.RevokedAt.Equal(now.Add(time.Hour)) || got.Usable(now.Add(time.Hour)) != "revoked" {
		t.Fatalf("revoked: %+v", got)
	}
	if err := ts.RevokeToken(ctx, "tok_missing", now); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Fatalf("revoke of an unknown id: want NOT_FOUND, got %v", err)
	}
	if u := ok(ts.TokenByHash(ctx, hash2))(t); u.Usable(now.Add(100*365*24*time.Hour)) != "" {
		t.Fatalf("a token without expiry expired: %+v", u)
	}
}
