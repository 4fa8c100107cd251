package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kpool/kpool/service"
)

// testLeaseList: Leases lists the unexpired leases under a prefix with the
// time each has left, and RenewLeases renews a holder's unexpired leases
// under a prefix at once; both judge expiry on the database's clock.
func testLeaseList(t *testing.T, s *service.Service) {
	ctx := context.Background()
	st := s.Store
	for _, l := range []struct {
		name, holder string
		ttl          time.Duration
	}{
		{"ctl/member/a", "a", time.Minute},
		{"ctl/member/b", "b", time.Minute},
		{"ctl/shard/0", "a", time.Minute},
		{"ctl/shard/1", "b", time.Minute},
		{"ctl/shard/2", "a", -time.Second}, // expired
		{"ctl_x", "a", time.Minute},        // _ is no wildcard
		{"other", "a", time.Minute},
	} {
		if !ok(st.AcquireLease(ctx, l.name, l.holder, l.ttl))(t) {
			t.Fatalf("%s not taken", l.name)
		}
	}
	names := []string{}
	for _, l := range ok(st.Leases(ctx, "ctl/"))(t) {
		names = append(names, l.Name+"="+l.Holder)
		if l.Left <= 50*time.Second || l.Left > time.Minute {
			t.Errorf("%s has %v left, want about a minute", l.Name, l.Left)
		}
	}
	if want := "[ctl/member/a=a ctl/member/b=b ctl/shard/0=a ctl/shard/1=b]"; fmt.Sprint(names) != want {
		t.Fatalf("Leases(ctl/) = %v, want %s", names, want)
	}
	// A renewal touches only the holder's unexpired leases under the prefix.
	if n := ok(st.RenewLeases(ctx, "ctl/", "a", 2*time.Minute))(t); n != 2 {
		t.Fatalf("renewed %d of a's leases, want 2 (its member and shard 0)", n)
	}
	for _, l := range ok(st.Leases(ctx, "ctl/"))(t) {
		if long := l.Left > 110*time.Second; long != (l.Holder == "a") {
			t.Errorf("%s of %s has %v left after a's renewal", l.Name, l.Holder, l.Left)
		}
	}
	if !ok(st.AcquireLease(ctx, "ctl/shard/2", "b", time.Minute))(t) {
		t.Fatal("the expired shard a did not renew was not free")
	}
	// A released lease is listed no more; renewing into the past expires.
	if err := st.ReleaseLease(ctx, "ctl/member/b", "b"); err != nil {
		t.Fatal(err)
	}
	if n := ok(st.RenewLeases(ctx, "ctl/", "a", -time.Second))(t); n != 2 {
		t.Fatalf("expired %d of a's leases, want 2", n)
	}
	names = names[:0]
	for _, l := range ok(st.Leases(ctx, "ctl/"))(t) {
		names = append(names, l.Name+"="+l.Holder)
	}
	if want := "[ctl/shard/1=b ctl/shard/2=b]"; fmt.Sprint(names) != want {
		t.Fatalf("after the release and expiry: %v, want %s", names, want)
	}
}
