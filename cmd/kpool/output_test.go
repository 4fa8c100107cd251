package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
)

// TestAge: ages as kubectl get shows them, measured against the time
// given; a time ahead of it (the server's clock ahead of this one) is 0s.
func TestAge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Hour, "0s"},
		{45 * time.Second, "45s"},
		{119 * time.Second, "119s"},
		{5*time.Minute + 30*time.Second, "5m30s"},
		{12 * time.Minute, "12m"},
		{3*time.Hour + 20*time.Minute, "3h20m"},
		{30 * time.Hour, "30h"},
		{3*24*time.Hour + 4*time.Hour, "3d4h"},
		{40 * 24 * time.Hour, "40d"},
		{3 * 365 * 24 * time.Hour, "3y"},
	} {
		if got := age(now.Add(-tt.ago), now); got != tt.want {
			t.Errorf("age %s: %q, want %q", tt.ago, got, tt.want)
		}
	}
	if got := age(time.Time{}, now); got != "-" {
		t.Errorf("no time: %q", got)
	}
	if got := when(now.Add(-90*time.Second), now); got != "2026-11-23T11:58:30Z (90s ago)" {
		t.Errorf("when: %q", got)
	}
}

// TestClockOfTheCommand: a command's tables measure ages on the clock the
// root command carries.
func TestClockOfTheCommand(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "clock", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "e2-small", "--count", "1")
	later := clock{now: func() time.Time { return p.CreatedAt.Add(26 * time.Hour) }}
	out, _, err := executeOn(later, "", "nodepool", "list", "--cluster", cluster, "--no-headers", "--server", srv, "--user", testUser)
	if f := strings.Fields(out); err != nil || len(f) == 0 || f[len(f)-1] != "26h" {
		t.Errorf("the pool's age a day and 2 hours later: %q, %v", out, err)
	}
}
