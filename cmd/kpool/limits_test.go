package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/reconcile"
)

// TestLimitFlags: --provider-limits and --account-budget set what they
// name and leave the rest to the defaults; a wrong platform, field or
// value is refused naming the flag, the platform and the field.
func TestLimitFlags(t *testing.T) {
	a, b := string(catalog.Profiles()[0].Type()), string(catalog.Profiles()[1].Type())
	f := limitFlags{workers: 16, driftShare: 0.25, maxStretch: 4,
		providerLimits: a + "=concurrency:8,rate:40,burst:80; " + b + "=rate:2.5",
		accountBudgets: a + "=reads:20,writes:5;" + b + "=read-burst:7"}
	var cfg reconcile.Config
	if err := f.apply(&cfg); err != nil {
		t.Fatal(err)
	}
	pa, pb := kpool.PlatformType(a), kpool.PlatformType(b)
	if got := cfg.Limits[pa]; got != (reconcile.Limits{Concurrency: 8, RequestsPerSecond: 40, Burst: 80}) {
		t.Fatalf("%s limits %+v", a, got)
	}
	if got := cfg.Limits[pb]; got != (reconcile.Limits{Concurrency: reconcile.DefaultLimits.Concurrency, RequestsPerSecond: 2.5, Burst: reconcile.DefaultLimits.Burst}) {
		t.Fatalf("%s limits %+v", b, got)
	}
	if got := cfg.Budgets[pa]; got != (provider.Quota{Reads: 20, Writes: 5}) {
		t.Fatalf("%s budget %+v", a, got)
	}
	if got := cfg.Budgets[pb]; got != (provider.Quota{ReadBurst: 7}) {
		t.Fatalf("%s budget %+v", b, got)
	}
	if cfg.Workers != 16 || cfg.DriftShare != 0.25 || cfg.MaxStretch != 4 {
		t.Fatalf("workers %d, drift share %v, max stretch %v", cfg.Workers, cfg.DriftShare, cfg.MaxStretch)
	}
	for _, c := range []struct {
		f    limitFlags
		want string
	}{
		{limitFlags{providerLimits: "nowhere=rate:1"}, "--provider-limits nowhere: not a platform"},
		{limitFlags{providerLimits: a + "=rate:0"}, "--provider-limits " + a + ": rate \"0\": give requests a second above 0"},
		{limitFlags{providerLimits: a + "=speed:3"}, "--provider-limits " + a + ": \"speed\": not a field"},
		{limitFlags{providerLimits: a + "=concurrency:x"}, "--provider-limits " + a + ": concurrency \"x\": give a whole number"},
		{limitFlags{providerLimits: a + "=rate:1;" + a + "=rate:2"}, "given twice"},
		{limitFlags{providerLimits: a}, "give PLATFORM=field:value"},
		{limitFlags{accountBudgets: a + "=writes:-1"}, "--account-budget " + a + ": writes \"-1\": give requests a second above 0"},
		{limitFlags{accountBudgets: a + "=reads"}, "--account-budget " + a + ": \"reads\": give field:value"},
		{limitFlags{workers: -1}, "--workers -1"},
		{limitFlags{driftShare: 1.5}, "--drift-share 1.5"},
		{limitFlags{maxStretch: 0.5}, "--drift-max-stretch 0.5"},
	} {
		err := c.f.apply(&reconcile.Config{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.f, err, c.want)
		}
	}
}

// TestBoundedFlags: --shards, --workers and --writes-per-pass take their
// range alone; an explicit 0 is refused, not taken for the default, and
// so is a variable out of range, with the flag's reason.
func TestBoundedFlags(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"1", 1}, {"32", 32}, {"4096", 4096}, {"0", -1}, {"-3", -1}, {"4097", -1}, {"many", -1}} {
		n := 32
		err := boundedInt{p: &n, lo: 1, hi: 4096}.Set(c.in)
		switch {
		case c.want < 0 && (err == nil || err.Error() != "give 1 to 4096"):
			t.Errorf("%s: %v, want refused", c.in, err)
		case c.want >= 0 && (err != nil || n != c.want):
			t.Errorf("%s: %v, %d", c.in, err, n)
		}
	}
	for _, c := range []struct{ env, value, want string }{
		{"KPOOL_SHARDS", "5000", `KPOOL_SHARDS "5000": give 1 to 4096, the same in every process on the database (as --shards takes)`},
		{"KPOOL_WORKERS", "0", `KPOOL_WORKERS "0": give 1 to 1000 (as --workers takes)`},
		{"KPOOL_WRITES_PER_PASS", "0", `KPOOL_WRITES_PER_PASS "0": give 1 to 10000 (as --writes-per-pass takes)`},
	} {
		t.Run(c.env, func(t *testing.T) {
			cmd := newServe()
			t.Setenv(c.env, c.value)
			if err := applyEnv(cmd); err == nil || err.Error() != c.want {
				t.Fatalf("%s=%s: %v", c.env, c.value, err)
			}
		})
	}
	cmd := newServe()
	if err := cmd.Flags().Set("writes-per-pass", "0"); err == nil {
		t.Fatal("--writes-per-pass 0 taken")
	}
	var f limitFlags
	f.register(&cobra.Command{})
	if f.workers != 8 || f.writesPerPass != 10 {
		t.Fatalf("defaults: --workers %d, --writes-per-pass %d", f.workers, f.writesPerPass)
	}
}
