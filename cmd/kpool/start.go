package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/kpool/kpool/service"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/oidc"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/traced"
)

// start opens what a kpool process runs on its flags: the store (migrated),
// who callers are, the service with the operator's cloud settings, and the
// controllers unless --reconcile=false.
func start(ctx context.Context, f *serveFlags, reg *provider.Registry) (*process, error) {
	if os.Getenv("GOGC") == "" {
		// kpool's live heap is a few MB, so at Go's default (100) a busy
		// API collects many times a second; 400 trades a heap a few times
		// larger for a quarter of the collections. GOGC in the environment
		// still decides.
		debug.SetGCPercent(400)
	}
	log, sink, err := newLogger(f.logFormat, f.logOut)
	if err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	c, err := f.cloud()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, f.database)
	if err != nil {
		return nil, err
	}
	access, err := f.access(ctx, st)
	if err != nil {
		st.Close()
		return nil, err
	}
	svc := service.New(st, reg)
	svc.Endpoints, svc.Credentials = c.endpoints, c.creds
	dups, err := svc.BackfillCloudIDs(ctx)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("giving clusters their cloud identity: %w", err)
	}
	for _, d := range dups {
		log.Warn("a cloud cluster registered twice: delete one of the registrations (kpool would manage its pools twice)", "duplicate", d)
	}
	installation, err := st.InstallationID(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	var tp *sdktrace.TracerProvider
	if f.otlpEndpoint != "" {
		if tp, err = newTracing(ctx, f.otlpEndpoint); err != nil {
			st.Close()
			return nil, err
		}
		// Traced from here on: the setup's own reads above are no request's.
		svc.Store = traced.New(st, tp, dbSystem(f.database))
		log.Info("tracing", "otlp_endpoint", f.otlpEndpoint)
	}
	m, httpMetrics := newMetrics(st, reg.Types(), log.With("component", "metrics"))
	p := &process{log: log, logs: sink, store: st, svc: svc, access: access, metrics: m, httpMetrics: httpMetrics,
		pprofAddr: f.pprof, tlsCert: f.tlsCert, tlsKey: f.tlsKey, tp: tp}
	if f.eventRetention > 0 {
		p.retention = &audit.Retention{Store: st, Retention: f.eventRetention}
	}
	var kubeconfigs provider.Kubeconfigs
	if c.creds != nil {
		kubeconfigs = c.creds
	}
	if f.reconcile {
		if p.ctl, err = f.newControllers(p, reg, kubeconfigs, installation); err != nil {
			st.Close()
			return nil, err
		}
	}
	// Nodes come from the controllers' watches where this process leads,
	// else from the clusters' APIs; the proxy reaches them with kpool's
	// own access.
	live := &kubeapi.Clusters{Drivers: reg, Kubeconfigs: kubeconfigs}
	svc.Nodes, svc.Kube = live, live
	if p.ctl != nil {
		svc.Nodes = reconcile.NodeSource{Controller: p.ctl, Live: live}
	}
	return p, nil
}

// newControllers makes the process's controllers from the flags.
func (f *serveFlags) newControllers(p *process, reg *provider.Registry, kubeconfigs provider.Kubeconfigs, installation string) (*reconcile.Controller, error) {
	return f.limits.controllers(reconcile.Config{Service: p.svc, Drivers: reg, Kubeconfigs: kubeconfigs, Log: p.log.With("component", "controllers"),
		Metrics: reconcile.NewMetrics(p.metrics), ResyncFast: f.resyncFast, ResyncSlow: f.resyncSlow,
		DriftInterval: f.driftInterval, CallTimeout: f.callTimeout, Installation: installation, Traces: p.traces(),
		Shards: f.shards, LeaseTTL: f.leaseTTL})
}

// check refuses flags (and their environment variables) out of bounds.
func (f *serveFlags) check() error {
	if f.otlpEndpoint != "" {
		if _, err := otlpURL(f.otlpEndpoint); err != nil {
			return err
		}
	}
	if err := f.limits.apply(&reconcile.Config{}); err != nil {
		return err
	}
	switch {
	case f.driftInterval < time.Second:
		return fmt.Errorf("--drift-interval %s: give at least 1s (each interval lists every cluster once)", f.driftInterval)
	case f.callTimeout < 100*time.Millisecond:
		return fmt.Errorf("--call-timeout %s: give at least 100ms", f.callTimeout)
	case f.shards < 0 || f.shards > 4096: // 0: the default, never from the flag (intFlag)
		return fmt.Errorf("--shards %d: give 1 to 4096", f.shards)
	case f.leaseTTL != 0 && f.leaseTTL < time.Second:
		return fmt.Errorf("--lease-ttl %s: give at least 1s (leases are renewed every third of it)", f.leaseTTL)
	case f.tokenCache < 0 || f.tokenCache > time.Minute:
		return fmt.Errorf("--token-cache %s: give 0 (no cache) up to 1m: a revoked token is trusted that long", f.tokenCache)
	case f.eventRetention != 0 && f.eventRetention < time.Minute:
		return fmt.Errorf("--event-retention %s: give 0 (keep every event) or at least 1m, well above how far the controllers' feed may fall behind", f.eventRetention)
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return fmt.Errorf("--tls-cert and --tls-key: give both, or neither")
	case f.auth == auth.AuthToken && (f.admins != "" || f.controllers != ""):
		return fmt.Errorf("--admins and --controllers apply to --auth header; with --auth token a token's role says who is an admin or a controller (kpool token create --role)")
	case f.auth != auth.AuthToken && f.auth != auth.AuthHeader:
		return fmt.Errorf("--auth %q: use token or header", f.auth)
	case (f.oidcIssuer != "" || f.oidcTeamRoles != "") && f.auth != auth.AuthToken:
		return fmt.Errorf("--oidc-issuer and --oidc-team-roles work with --auth token: in header mode the gateway says who the caller is")
	}
	return nil
}

// access decides who callers are: API tokens (kept in st), X-User-Email in
// header mode, and an OpenID Connect issuer's ID tokens for people.
func (f *serveFlags) access(ctx context.Context, st kpool.Store) (*auth.Access, error) {
	var access *auth.Access
	if f.auth == auth.AuthHeader {
		a, err := auth.NewAccess(splitList(f.admins), splitList(f.controllers))
		if err != nil {
			return nil, err
		}
		access = a
	}
	ts, hasTokens := st.(kpool.TokenStore)
	if hasTokens && f.tokenCache > 0 {
		c := auth.NewTokenCache(ts) // a request costs no token lookup; a revocation holds within --token-cache
		c.TTL = f.tokenCache
		ts = c
	}
	switch {
	case access == nil && !hasTokens:
		return nil, fmt.Errorf("--auth token: the store %s keeps no tokens", redact(f.database))
	case access == nil:
		access = auth.NewTokenAccess(ts)
	case hasTokens:
		access.WithTokens(ts) // kpool tokens work in header mode too
	}
	if f.oidcIssuer == "" {
		return access, nil
	}
	roles, err := oidc.ParseTeamRoles(splitList(f.oidcTeamRoles))
	if err != nil {
		return nil, fmt.Errorf("--oidc-team-roles: %w", err)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	people, err := oidc.New(dctx, oidc.Config{Issuer: f.oidcIssuer, Audience: f.oidcAudience,
		GroupsClaim: f.oidcGroupsClaim, AdminGroups: splitList(f.oidcAdminGroups), TeamRoles: roles})
	if err != nil {
		return nil, fmt.Errorf("--oidc-issuer: %w", err)
	}
	return access.WithPeople(people), nil
}
