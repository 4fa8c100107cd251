package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/reconcile"
)

// The controllers' settings: how many clusters at once, each provider's
// concurrency and request rate, and each cloud account's call budget by
// platform. They are not the API's own --rate and --burst, which cap what
// callers send to kpool.

// limitFlags are the controllers' settings as given.
type limitFlags struct {
	workers        int
	writesPerPass  int
	providerLimits string
	accountBudgets string
	driftShare     float64
	maxStretch     float64
}

func (f *limitFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	intFlag(fs, &f.workers, "workers", 8, 1, 1000, "", "clusters the controllers reconcile at once (KPOOL_WORKERS)")
	intFlag(fs, &f.writesPerPass, "writes-per-pass", 10, 1, 10000, "",
		"creates, updates and deletes one pass over a cluster sends before it gives its worker to the clusters queued behind it and is queued again (KPOOL_WRITES_PER_PASS)")
	fs.StringVar(&f.providerLimits, "provider-limits", "",
		"calls to each provider: PLATFORM=concurrency:N,rate:R,burst:B, ';' between platforms, such as aws=concurrency:8,rate:40,burst:80; "+
			"every HTTP request a call sends counts against the rate; default concurrency:4,rate:20,burst:40 (KPOOL_PROVIDER_LIMITS)")
	fs.StringVar(&f.accountBudgets, "account-budget", "",
		"each cloud account's share of its documented request quotas, by platform: PLATFORM=reads:R,writes:W[,read-burst:B][,write-burst:B] (requests a second), "+
			"';' between platforms, such as aws=reads:20,writes:5; unset fields keep the cloud's default (README: Call budgets) (KPOOL_ACCOUNT_BUDGET)")
	fs.Float64Var(&f.driftShare, "drift-share", 0.5,
		"share of an account's read budget its clusters' drift passes may spend before their drift interval stretches (KPOOL_DRIFT_SHARE)")
	fs.Float64Var(&f.maxStretch, "drift-max-stretch", 10, "the most times --drift-interval a stretched drift interval may be (KPOOL_DRIFT_MAX_STRETCH)")
	bindEnv(fs, map[string]string{"workers": "KPOOL_WORKERS", "writes-per-pass": "KPOOL_WRITES_PER_PASS", "provider-limits": "KPOOL_PROVIDER_LIMITS", "account-budget": "KPOOL_ACCOUNT_BUDGET",
		"drift-share": "KPOOL_DRIFT_SHARE", "drift-max-stretch": "KPOOL_DRIFT_MAX_STRETCH"})
}

// apply checks the settings and sets them in cfg.
func (f *limitFlags) apply(cfg *reconcile.Config) error {
	// A zero value (settings made in code, not by the flags) takes the
	// controllers' default.
	switch {
	case f.workers < 0 || f.workers > 1000:
		return fmt.Errorf("--workers %d: give 1 to 1000", f.workers)
	case f.writesPerPass < 0 || f.writesPerPass > 10000:
		return fmt.Errorf("--writes-per-pass %d: give 1 to 10000", f.writesPerPass)
	case f.driftShare != 0 && !(f.driftShare > 0 && f.driftShare <= 1):
		return fmt.Errorf("--drift-share %v: give a share above 0, at most 1", f.driftShare)
	case f.maxStretch != 0 && !(f.maxStretch >= 1 && f.maxStretch <= 1000):
		return fmt.Errorf("--drift-max-stretch %v: give 1 (never stretch) to 1000", f.maxStretch)
	}
	limits, err := parseProviderLimits(f.providerLimits)
	if err != nil {
		return err
	}
	budgets, err := parseAccountBudgets(f.accountBudgets)
	if err != nil {
		return err
	}
	cfg.Workers, cfg.WritesPerPass = f.workers, f.writesPerPass
	cfg.Limits, cfg.Budgets, cfg.DriftShare, cfg.MaxStretch = limits, budgets, f.driftShare, f.maxStretch
	return nil
}

// controllers makes the controllers of cfg with these settings.
func (f *limitFlags) controllers(cfg reconcile.Config) (*reconcile.Controller, error) {
	if err := f.apply(&cfg); err != nil {
		return nil, err
	}
	return reconcile.New(cfg), nil
}

// parseProviderLimits reads --provider-limits: each platform's limits, the
// fields it does not give from reconcile.DefaultLimits.
func parseProviderLimits(s string) (map[kpool.PlatformType]reconcile.Limits, error) {
	out := map[kpool.PlatformType]reconcile.Limits{}
	err := eachPlatform("--provider-limits", s, func(t kpool.PlatformType, fields map[string]string) error {
		l := reconcile.DefaultLimits
		for k, v := range fields {
			var err error
			switch k {
			case "concurrency":
				l.Concurrency, err = whole(v, 1, 1000)
			case "rate":
				l.RequestsPerSecond, err = rate(v)
			case "burst":
				l.Burst, err = whole(v, 1, 100000)
			default:
				return fmt.Errorf("%q: not a field; give concurrency, rate or burst", k)
			}
			if err != nil {
				return fmt.Errorf("%s %q: %v", k, v, err)
			}
		}
		out[t] = l
		return nil
	})
	return out, err
}

// parseAccountBudgets reads --account-budget: each platform's overrides of
// its accounts' default quota (a field not given keeps the default).
func parseAccountBudgets(s string) (map[kpool.PlatformType]provider.Quota, error) {
	out := map[kpool.PlatformType]provider.Quota{}
	err := eachPlatform("--account-budget", s, func(t kpool.PlatformType, fields map[string]string) error {
		var q provider.Quota
		for k, v := range fields {
			var err error
			switch k {
			case "reads":
				q.Reads, err = rate(v)
			case "writes":
				q.Writes, err = rate(v)
			case "read-burst":
				q.ReadBurst, err = whole(v, 1, 100000)
			case "write-burst":
				q.WriteBurst, err = whole(v, 1, 100000)
			default:
				return fmt.Errorf("%q: not a field; give reads, writes, read-burst or write-burst", k)
			}
			if err != nil {
				return fmt.Errorf("%s %q: %v", k, v, err)
			}
		}
		out[t] = q
		return nil
	})
	return out, err
}

// eachPlatform splits PLATFORM=k:v,k:v;PLATFORM=… and calls do with each
// platform's fields; an error names the flag, the platform and the field.
func eachPlatform(flag, s string, do func(kpool.PlatformType, map[string]string) error) error {
	known := map[kpool.PlatformType]bool{}
	var names []string
	for _, p := range catalog.Profiles() {
		known[p.Type()] = true
		names = append(names, string(p.Type()))
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, rest, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || rest == "" {
			return fmt.Errorf("%s %q: give PLATFORM=field:value,…", flag, part)
		}
		if !known[kpool.PlatformType(name)] {
			return fmt.Errorf("%s %s: not a platform; give one of %s", flag, name, strings.Join(names, ", "))
		}
		if seen[name] {
			return fmt.Errorf("%s %s: given twice", flag, name)
		}
		seen[name] = true
		fields := map[string]string{}
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
			if !ok || k == "" || v == "" {
				return fmt.Errorf("%s %s: %q: give field:value", flag, name, kv)
			}
			if _, dup := fields[k]; dup {
				return fmt.Errorf("%s %s: %s given twice", flag, name, k)
			}
			fields[k] = v
		}
		if err := do(kpool.PlatformType(name), fields); err != nil {
			return fmt.Errorf("%s %s: %v", flag, name, err)
		}
	}
	return nil
}

func whole(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("give a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

// rate is requests a second: above 0 and finite.
func rate(v string) (float64, error) {
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) || r > 1e6 {
		return 0, fmt.Errorf("give requests a second above 0, such as 20 or 0.5")
	}
	return r, nil
}
