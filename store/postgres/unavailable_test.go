package postgres

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// TestUnreachable checks that a store whose server refuses connections
// returns UNAVAILABLE (which the API answers 503) from reads, writes and
// Ping, not an unclassified error (500).
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig("postgres://kpool@127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/kpool?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pgxpool.NewWithConfig(ctx, cfg) // connects lazily
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(newPool(p), Dialect)
	defer st.Close()
	for name, op := range map[string]func() error{
		"Cluster": func() error { _, err := st.Cluster(ctx, "550e8400-e29b-41d4-a716-446655440000"); return err },
		"Clusters": func() error {
			_, _, err := st.Clusters(ctx, kpool.ClusterFilter{Page: kpool.Page{Limit: 10}})
			return err
		},
		"Write": func() error {
			return st.Write(ctx, func(tx kpool.Tx) error { _, err := tx.Cluster("550e8400-e29b-41d4-a716-446655440000"); return err })
		},
		"Insert": func() error {
			return st.Insert(ctx, func(tx kpool.Tx) error { return tx.DeleteCluster("550e8400-e29b-41d4-a716-446655440000") })
		},
		"Ping":         func() error { return st.Ping(ctx) },
		"AcquireLease": func() error { _, err := st.AcquireLease(ctx, "l", "h", 1e9); return err },
		// Every token-mode request whose token is not cached looks it up:
		// an outage there is 503 too, never 500.
		"TokenByHash": func() error { _, err := st.TokenByHash(ctx, "h"); return err },
		"Tokens":      func() error { _, err := st.Tokens(ctx); return err },
		"CreateToken": func() error {
			return st.CreateToken(ctx, &kpool.Token{ID: "tok_1", User: "a@example.com", Role: kpool.RoleUser}, "h")
		},
		"RevokeToken": func() error { return st.RevokeToken(ctx, "tok_1", time.Now()) },
		"TouchToken":  func() error { return st.TouchToken(ctx, "tok_1", time.Now()) },
	} {
		err := op()
		if !kpool.IsUnavailable(err) {
			t.Errorf("%s: %v (code %s), want %s", name, err, kpool.ErrorCode(err), kpool.CodeUnavailable)
		}
		var ce *pgconn.ConnectError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v does not keep the connect error as its cause", name, err)
		}
	}
}

func TestUnavailableClassifies(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "08006"}, true}, // connection failure
		{&pgconn.PgError{Code: "57P01"}, true}, // admin shutdown
		{&pgconn.PgError{Code: "53300"}, true}, // too many connections
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "40001"}, false}, // serialization: retried, not unavailable
		{pgconn.ErrConnClosed, true},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		{errors.New("closed pool"), true},
		{errors.New("cannot scan NULL"), false},
		{context.Canceled, false},
	} {
		if got := unavailable(c.err); got != c.want {
			t.Errorf("unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
