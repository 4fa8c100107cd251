package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/store/postgres"
	"github.com/kpool/kpool/store/sqlite"
)

// serveFlags are the settings of kpool serve.
type serveFlags struct {
	listen      string
	database    string
	admins      string
	controllers string
	logFormat   string
}

func (f *serveFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.listen, "listen", env("KPOOL_LISTEN", "127.0.0.1:8080"), "address to listen on (KPOOL_LISTEN)")
	cmd.Flags().StringVar(&f.database, "database", env("KPOOL_DATABASE", defaultDatabase()), "sqlite:PATH or postgres://… (KPOOL_DATABASE)")
	cmd.Flags().StringVar(&f.admins, "admins", env("KPOOL_ADMINS", ""), "comma-separated e-mail addresses of admins (KPOOL_ADMINS)")
	cmd.Flags().StringVar(&f.controllers, "controllers", env("KPOOL_CONTROLLERS", ""), "comma-separated e-mail addresses of controllers (KPOOL_CONTROLLERS)")
	cmd.Flags().StringVar(&f.logFormat, "log-format", env("KPOOL_LOG_FORMAT", "text"), "text or json (KPOOL_LOG_FORMAT)")
}

func newServe() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the kpool API server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), &f)
		},
	}
	f.register(cmd)
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
	cmd.Flags().StringVar(&database, "database", env("KPOOL_DATABASE", defaultDatabase()), "sqlite:PATH or postgres://… (KPOOL_DATABASE)")
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

// redact hides a password in a database URL.
func redact(database string) string {
	if u, err := url.Parse(database); err == nil && u.User != nil {
		return u.Redacted()
	}
	return database
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func newLogger(format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

// serve runs the API until ctx ends, then drains requests for up to 10s.
func serve(ctx context.Context, f *serveFlags) error {
	log, err := newLogger(f.logFormat)
	if err != nil {
		return err
	}
	access, err := kpool.NewAccess(splitList(f.admins), splitList(f.controllers))
	if err != nil {
		return err
	}
	st, err := openStore(ctx, f.database)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := kpool.NewService(st)
	svc.Planner = provider.Planner{}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           api.NewServer(svc, access, log),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("kpool serving", "url", "http://"+ln.Addr().String(), "database", redact(f.database))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
