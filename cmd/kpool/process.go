package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/dashboard"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
)

// process is what a kpool process runs: the store, the service, the API and
// the controllers.
type process struct {
	log     *slog.Logger
	logs    *logSink // what log writes into; flushed when run ends
	store   kpool.Store
	svc     *service.Service
	access  *auth.Access
	metrics *prometheus.Registry
	// httpMetrics count the requests of the API (and dashboard) the
	// process serves, in metrics.
	httpMetrics *api.HTTPMetrics
	ctl         *reconcile.Controller
	// pprofAddr is where run serves pprof (--pprof); "" for nowhere.
	pprofAddr string
	// retention prunes the events outbox (--event-retention); nil keeps
	// every event. Every process runs it: pruning is idempotent.
	retention *audit.Retention
	// tlsCert and tlsKey, when set, make run serve HTTPS.
	tlsCert, tlsKey string
	// dash is the dashboard handler makes; run feeds it live changes.
	dash *dashboard.Handler
	// tp exports spans (--otlp-endpoint); nil traces nothing.
	tp *sdktrace.TracerProvider
}

// traces is the process's tracer provider, or nil (a nil interface, not
// a nil pointer in one) when nothing is traced.
func (p *process) traces() trace.TracerProvider {
	if p.tp == nil {
		return nil
	}
	return p.tp
}

// scheme is how the process's listener is reached: http or https.
func (p *process) scheme() string {
	if p.tlsCert != "" {
		return "https"
	}
	return "http"
}

// checkExposure refuses header mode on an address beyond loopback unless
// the operator says a gateway sits in front: anyone who reaches kpool there
// could send X-User-Email of an admin. It runs before kpool listens.
func checkExposure(f *serveFlags) error {
	if f.auth != auth.AuthHeader || f.behindGateway {
		return nil
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %v", f.listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("--listen %s: --auth header trusts X-User-Email, so anyone who reaches this address could claim to be an admin; listen on loopback (127.0.0.1), use --auth token, or add --behind-gateway if a gateway that authenticates users is the only way in", f.listen)
}

// handler serves the API with /metrics beside it, and the dashboard on
// every other path. The dashboard goes through the API's access log and
// per-caller limiter (a.Logged, a.Admit), like the API's own routes.
func (p *process) handler(a *api.Server) http.Handler {
	a.Instrument(p.httpMetrics)
	a.KubeconfigCA(selfSignedRoot(p.tlsCert))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(p.metrics, promhttp.HandlerOpts{}))
	a.Trace(p.traces())
	mux.Handle("/api/", a)
	mux.Handle("/healthz", a)
	mux.Handle("/readyz", a)
	mux.Handle("/version", a)
	p.dash = dashboard.New(dashboard.Options{Service: p.svc, Access: p.access, Profiles: profiles, Log: p.log.With("component", "dashboard"),
		Admit: a.Admit})
	mux.Handle("/", a.Logged(p.dash))
	return mux
}

// controllerHandler is kpool controller's listener: /metrics, and the
// API's /healthz and /readyz (the database answers), nothing else. The
// dashboard and its live stream are kpool serve's.
func (p *process) controllerHandler() http.Handler {
	a := api.NewServer(p.svc, p.access, p.log).Instrument(p.httpMetrics)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(p.metrics, promhttp.HandlerOpts{}))
	mux.Handle("GET /healthz", a)
	mux.Handle("GET /readyz", a)
	return mux
}

// run serves h on ln and runs the controllers until ctx ends, then drains
// requests for up to 10s.
func (p *process) run(ctx context.Context, ln net.Listener, h http.Handler) error {
	defer p.close()
	if p.pprofAddr != "" {
		debug, err := p.servePprof(p.pprofAddr)
		if err != nil {
			return err
		}
		defer debug.Close()
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() {
		if p.tlsCert != "" {
			errc <- srv.ServeTLS(ln, p.tlsCert, p.tlsKey)
			return
		}
		errc <- srv.Serve(ln)
	}()
	ctlDone := make(chan struct{})
	go func() {
		defer close(ctlDone)
		if p.ctl != nil {
			errc <- p.ctl.Run(ctx)
		}
	}()
	dashDone := make(chan struct{})
	go func() {
		defer close(dashDone)
		if p.dash != nil {
			if err := p.dash.Run(ctx); err != nil {
				p.log.Warn("dashboard: no live updates", "err", err)
			}
		}
	}()
	pruneDone := make(chan struct{})
	go func() {
		defer close(pruneDone)
		if p.retention != nil {
			p.retention.Run(ctx, p.log.With("component", "events"))
		}
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	p.log.Info("shutting down")
	cancel()
	shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if serr := srv.Shutdown(shutdown); serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	<-ctlDone
	<-pruneDone
	<-dashDone
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// close sends the spans not yet exported, closes the store and writes
// out the buffered log.
func (p *process) close() {
	if p.tp != nil {
		if err := shutdownTracing(p.tp); err != nil {
			p.log.Warn("tracing: spans not sent", "err", err)
		}
	}
	p.store.Close()
	_ = p.logs.Flush()
}

// servePprof serves net/http/pprof's handlers on addr until the returned
// server is closed. They get a mux of their own, so the API's listener never
// exposes them.
func (p *process) servePprof(addr string) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	p.log.Info("pprof serving", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return srv, nil
}
