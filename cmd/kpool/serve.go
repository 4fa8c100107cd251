package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/kpool/kpool/audit"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/internal/scrub"
	"github.com/kpool/kpool/store/postgres"
	"github.com/kpool/kpool/store/sqlite"
)

// serveFlags are the settings of kpool serve (and dev and controller).
type serveFlags struct {
	listen      string
	database    string
	admins      string
	controllers string
	logFormat   string
	reconcile   bool
	resyncFast  time.Duration
	resyncSlow  time.Duration
	// driftInterval is how often a settled cluster is listed to find
	// changes made behind kpool's back; callTimeout the deadline of every
	// provider call.
	driftInterval time.Duration
	callTimeout   time.Duration
	// shards is how many shards the controllers spread the clusters over
	// (every process on a database the same); leaseTTL how long a
	// process's leases last unrenewed.
	shards   int
	leaseTTL time.Duration
	pprof    string
	// eventRetention is how long the events outbox keeps an event (0: for
	// ever).
	eventRetention time.Duration
	// tokenCache is how long a looked-up API token is trusted (0: every
	// request reads the store).
	tokenCache time.Duration
	// auth is auth.AuthToken or auth.AuthHeader; behindGateway lets
	// header mode listen beyond loopback; tlsCert and tlsKey serve HTTPS.
	auth            string
	behindGateway   bool
	tlsCert, tlsKey string
	// oidc* configure an OpenID Connect issuer whose ID tokens identify
	// people in token mode.
	oidcIssuer, oidcAudience, oidcGroupsClaim, oidcAdminGroups string
	// oidcTeamRoles maps the issuer's groups to team memberships
	// (GROUP=TEAM:ROLE, comma-separated).
	oidcTeamRoles string
	// allowedEndpoints are the https origins any user may put in
	// spec.endpoint; credentials is the file of named cloud credentials.
	allowedEndpoints, credentials string
	// extraEndpoints are allowed besides --allowed-endpoints (kpool dev:
	// its emulators); emulators, when set (kpool dev), are the emulators'
	// identities by platform: the credentials of clusters at
	// extraEndpoints, and no cloud SDK's default chain for the others.
	// clouds is what cloud() made of it all.
	extraEndpoints []string
	emulators      map[kpool.PlatformType]any
	clouds         *cloudAccess
	// rate and burst cap each caller's API requests (0: no cap).
	rate  float64
	burst int
	// limits are the controllers' workers, provider limits and account
	// budgets (limits.go).
	limits limitFlags
	// otlpEndpoint, when set, is the OTLP/HTTP collector kpool's spans
	// are exported to; without it kpool traces nothing.
	otlpEndpoint string
	// logOut receives the log (nil: os.Stderr); the commands give their
	// stderr, so that tests read what a run logs.
	logOut io.Writer
	// emulated, when set, is given kpool dev's emulators once they run:
	// tests reach behind kpool's back through them (a fault, a delete).
	emulated func(*cloudsim.Running)
	// emu are serve's and controller's --emulators: kpool's emulators in
	// another process (emulators.go).
	emu emulatorFlags
}

func (f *serveFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.reconcile, "reconcile", true, "run the controllers in this process (KPOOL_RECONCILE); false for API-only replicas")
	cmd.Flags().DurationVar(&f.resyncFast, "resync-fast", 10*time.Second, "resync period of a cluster with a pool still changing")
	cmd.Flags().DurationVar(&f.resyncSlow, "resync-slow", 5*time.Minute, "how often a cluster its provider refuses as a whole (permission, missing cluster) is looked at again")
	cmd.Flags().DurationVar(&f.driftInterval, "drift-interval", time.Minute,
		"how often a settled cluster is listed at its provider to find changes made behind kpool's back: one list per cluster, whatever its pools (KPOOL_DRIFT_INTERVAL)")
	cmd.Flags().DurationVar(&f.callTimeout, "call-timeout", 30*time.Second,
		"deadline of every provider call; a cluster whose endpoint lets one run out is moved to its provider's slow lane (KPOOL_CALL_TIMEOUT)")
	intFlag(cmd.Flags(), &f.shards, "shards", 32, 1, 4096, ", the same in every process on the database",
		"shards the clusters are spread over among the controller processes sharing the database; every process needs the same (KPOOL_SHARDS)")
	cmd.Flags().DurationVar(&f.leaseTTL, "lease-ttl", 10*time.Second,
		"how long a controller process's leases last unrenewed: a dead process's shards move within it, at least 1s (KPOOL_LEASE_TTL)")
	cmd.Flags().DurationVar(&f.tokenCache, "token-cache", auth.TokenCacheTTL,
		"how long this process trusts an API token it looked up; a revocation holds within it; 0 looks every request up, at most 1m (KPOOL_TOKEN_CACHE)")
	cmd.Flags().DurationVar(&f.eventRetention, "event-retention", audit.DefaultRetention,
		"how long the events outbox, which is the audit trail, keeps an event before this process prunes it (720h is 30 days), at least 1m; 0 keeps every event (KPOOL_EVENT_RETENTION)")
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on (KPOOL_LISTEN)")
	cmd.Flags().StringVar(&f.database, "database", defaultDatabase(), "sqlite:PATH or postgres://… (KPOOL_DATABASE)")
	cmd.Flags().StringVar(&f.allowedEndpoints, "allowed-endpoints", "",
		"comma-separated https origins (https://host[:port]) any user may put in a cluster's spec.endpoint; only admins may set others (KPOOL_ALLOWED_ENDPOINTS)")
	cmd.Flags().StringVar(&f.credentials, "credentials", "",
		"YAML or JSON file of named cloud credentials: who may use each, for which subscriptions, sent to which endpoints; without it, the cloud SDK's default chain for everyone, sent only to the public endpoint and --allowed-endpoints (KPOOL_CREDENTIALS)")
	cmd.Flags().StringVar(&f.auth, "auth", auth.AuthToken, "token: every call carries Authorization: Bearer <API token> (kpool token create); header: trust X-User-Email as a gateway sets it, on loopback or with --behind-gateway (KPOOL_AUTH)")
	cmd.Flags().BoolVar(&f.behindGateway, "behind-gateway", false, "with --auth header, listen beyond loopback: only where a gateway that authenticates users sets X-User-Email and no one reaches kpool around it (KPOOL_BEHIND_GATEWAY)")
	cmd.Flags().StringVar(&f.oidcIssuer, "oidc-issuer", "", "with --auth token, also accept ID tokens of this OpenID Connect issuer for people; their email claim is the user (KPOOL_OIDC_ISSUER)")
	cmd.Flags().StringVar(&f.oidcAudience, "oidc-audience", "", "the client id the issuer's tokens must be for (KPOOL_OIDC_AUDIENCE)")
	cmd.Flags().StringVar(&f.oidcGroupsClaim, "oidc-groups-claim", "groups", "the claim that lists a user's groups (KPOOL_OIDC_GROUPS_CLAIM)")
	cmd.Flags().StringVar(&f.oidcAdminGroups, "oidc-admin-groups", "", "comma-separated groups whose members are admins (KPOOL_OIDC_ADMIN_GROUPS)")
	cmd.Flags().StringVar(&f.oidcTeamRoles, "oidc-team-roles", "",
		"comma-separated GROUP=TEAM:ROLE: members of the issuer's GROUP get ROLE (viewer, operator or admin) in TEAM, such as platform-devs=platform:operator (KPOOL_OIDC_TEAM_ROLES)")
	cmd.Flags().StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with, with --tls-key (KPOOL_TLS_CERT)")
	cmd.Flags().StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert (KPOOL_TLS_KEY)")
	cmd.Flags().StringVar(&f.admins, "admins", "", "with --auth header: comma-separated e-mail addresses of admins (KPOOL_ADMINS)")
	cmd.Flags().StringVar(&f.controllers, "controllers", "", "with --auth header: comma-separated e-mail addresses of controllers, each optionally with the controller names it may report as: ctl@example.com=gcp-nodepool-controller|other (KPOOL_CONTROLLERS)")
	cmd.Flags().StringVar(&f.logFormat, "log-format", "text", "text or json (KPOOL_LOG_FORMAT)")
	cmd.Flags().Float64Var(&f.rate, "rate", api.DefaultRate,
		"API requests a second per identity (an anonymous caller: per address); past it, 429 with Retry-After; 0 turns the limit off; the controllers' calls to clouds are --provider-limits (KPOOL_RATE)")
	cmd.Flags().IntVar(&f.burst, "burst", api.DefaultBurst,
		"API requests an identity may send at once above --rate (KPOOL_BURST)")
	cmd.Flags().StringVar(&f.otlpEndpoint, "otlp-endpoint", "",
		"export traces (OpenTelemetry, OTLP/HTTP protobuf) to this collector URL, such as http://127.0.0.1:4318 (spans go to /v1/traces unless the URL has a path); without it nothing is traced (KPOOL_OTLP_ENDPOINT)")
	cmd.Flags().StringVar(&f.pprof, "pprof", "", "serve Go's pprof profiles on this address, such as 127.0.0.1:6060 (KPOOL_PPROF); for debugging only: it exposes the process's internals, so bind it to loopback")
	f.limits.register(cmd)
	bindEnv(cmd.Flags(), map[string]string{"reconcile": "KPOOL_RECONCILE", "drift-interval": "KPOOL_DRIFT_INTERVAL", "call-timeout": "KPOOL_CALL_TIMEOUT",
		"token-cache": "KPOOL_TOKEN_CACHE", "event-retention": "KPOOL_EVENT_RETENTION", "listen": "KPOOL_LISTEN", "database": "KPOOL_DATABASE",
		"allowed-endpoints": "KPOOL_ALLOWED_ENDPOINTS", "credentials": "KPOOL_CREDENTIALS", "auth": "KPOOL_AUTH",
		"behind-gateway": "KPOOL_BEHIND_GATEWAY", "oidc-issuer": "KPOOL_OIDC_ISSUER", "oidc-audience": "KPOOL_OIDC_AUDIENCE",
		"oidc-groups-claim": "KPOOL_OIDC_GROUPS_CLAIM", "oidc-admin-groups": "KPOOL_OIDC_ADMIN_GROUPS", "oidc-team-roles": "KPOOL_OIDC_TEAM_ROLES", "tls-cert": "KPOOL_TLS_CERT",
		"tls-key": "KPOOL_TLS_KEY", "admins": "KPOOL_ADMINS", "controllers": "KPOOL_CONTROLLERS", "log-format": "KPOOL_LOG_FORMAT",
		"rate": "KPOOL_RATE", "burst": "KPOOL_BURST", "pprof": "KPOOL_PPROF", "otlp-endpoint": "KPOOL_OTLP_ENDPOINT"})
	bindEnv(cmd.Flags(), map[string]string{"shards": "KPOOL_SHARDS", "lease-ttl": "KPOOL_LEASE_TTL"})
}

func newServe() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the kpool API server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.logOut = cmd.ErrOrStderr()
			return serve(cmd.Context(), &f)
		},
	}
	f.register(cmd)
	f.emu.register(cmd.Flags())
	return cmd
}

func newMigrate() *cobra.Command {
	var database string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the database schema up to date and exit (serve does this too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := openStore(cmd.Context(), database)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "database %s is up to date\n", redact(database))
			return st.Close()
		},
	}
	cmd.Flags().StringVar(&database, "database", defaultDatabase(), "sqlite:PATH or postgres://… (KPOOL_DATABASE)")
	bindEnv(cmd.Flags(), map[string]string{"database": "KPOOL_DATABASE"})
	return cmd
}

// defaultDatabase is an SQLite file in the user's data directory.
func defaultDatabase() string {
	return "sqlite:" + filepath.Join(dataDir(), "kpool", "kpool.db")
}

func dataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "."
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support")
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d
		}
	}
	return filepath.Join(home, ".local", "share")
}

// openStore opens the store a --database value names.
func openStore(ctx context.Context, database string) (kpool.Store, error) {
	switch {
	case strings.HasPrefix(database, "sqlite:"):
		path := strings.TrimPrefix(database, "sqlite:")
		if path == "" {
			return nil, fmt.Errorf("--database sqlite: needs a path, such as sqlite:./kpool.db")
		}
		return sqlite.Open(ctx, path)
	case strings.HasPrefix(database, "postgres://"), strings.HasPrefix(database, "postgresql://"):
		return postgres.Open(ctx, database)
	}
	return nil, fmt.Errorf("--database %q: use sqlite:PATH or a postgres:// URL", redact(database))
}

// redact hides the secrets of a database URL or key/value DSN for logs: the
// userinfo password, and any password parameter (password, sslpassword…) in
// a URL's query or a DSN, as xxxxx. A value it cannot parse is hidden whole
// past its scheme, since it may hold anything.
func redact(database string) string {
	if strings.HasPrefix(database, "sqlite:") {
		return database
	}
	if !strings.Contains(database, "://") {
		return dsnPassword.ReplaceAllString(database, "${1}xxxxx")
	}
	u, err := url.Parse(database)
	if err != nil {
		scheme, _, _ := strings.Cut(database, "://")
		return scheme + "://(unparsable, hidden)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q[k] = []string{"xxxxx"}
		}
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// dsnPassword matches a password in a key/value DSN (password=x,
// password='x y', sslpassword=…), up to its end.
var dsnPassword = regexp.MustCompile(`(?i)(\b\w*password\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// newLogger returns the process's logger, writing to out (os.Stderr when
// nil) through a logSink. Every string it writes is scrubbed of secrets
// (package scrub): kpool logs none on purpose, and a token a caller put
// where it does not belong, or an error quoting a request, is caught here.
func newLogger(format string, out io.Writer) (*slog.Logger, *logSink, error) {
	if out == nil {
		out = os.Stderr
	}
	sink := newLogSink(out)
	opts := &slog.HandlerOptions{ReplaceAttr: scrub.Attr}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(sink, opts)
	case "json":
		h = slog.NewJSONHandler(sink, opts)
	default:
		return nil, nil, fmt.Errorf("--log-format %q: use text or json", format)
	}
	return slog.New(flushHandler{h, sink, slog.LevelWarn}), sink, nil
}

// serve runs the API (and, unless --reconcile=false, the controllers) until
// ctx ends.
func serve(ctx context.Context, f *serveFlags) error {
	if err := checkExposure(f); err != nil {
		return err
	}
	reg, err := drivers(f)
	if err != nil {
		return err
	}
	p, err := start(ctx, f, reg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		p.close()
		return err
	}
	p.log.Info("kpool serving", "url", p.scheme()+"://"+ln.Addr().String(), "database", redact(f.database), "controllers", p.ctl != nil, "auth", f.auth)
	settle(ctx, p.log)
	return p.run(ctx, ln, p.handler(api.NewServer(p.svc, p.access, p.log).Limit(api.NewLimiter(f.rate, f.burst))))
}

func newController() *cobra.Command {
	f := serveFlags{reconcile: true}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run only the controllers, against a database shared with kpool serve --reconcile=false",
		Long: `controller runs kpool's controllers without the API. Several may run on one
PostgreSQL database: they spread the clusters over them by shard (--shards, a
lease per shard in the database), and take over a stopped or dead one's shards
within a lease period (--lease-ttl). --listen serves /metrics, /healthz and
/readyz, and nothing else.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.reconcile = true
			f.logOut = cmd.ErrOrStderr()
			reg, err := drivers(&f)
			if err != nil {
				return err
			}
			p, err := start(cmd.Context(), &f, reg)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", f.listen)
			if err != nil {
				p.close()
				return err
			}
			p.log.Info("kpool controllers", "metrics", "http://"+ln.Addr().String()+"/metrics", "database", redact(f.database))
			settle(cmd.Context(), p.log)
			return p.run(cmd.Context(), ln, p.controllerHandler())
		},
	}
	f.register(cmd)
	f.emu.register(cmd.Flags())
	setDefault(cmd.Flags(), "listen", "127.0.0.1:9091")
	cmd.Flags().Lookup("listen").Usage = "address to serve /metrics, /healthz and /readyz on (KPOOL_CONTROLLER_LISTEN)"
	bindEnv(cmd.Flags(), map[string]string{"listen": "KPOOL_CONTROLLER_LISTEN"})
	_ = cmd.Flags().MarkHidden("reconcile")
	return cmd
}
