package providertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
)

// Tarpit returns the URL of a TLS endpoint on loopback that accepts
// requests and never answers them, and a client that trusts it: what a
// driver's per-try timeout and its caller's deadline must cut short.
func Tarpit(t *testing.T) (string, *http.Client) {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
		panic(http.ErrAbortHandler)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })
	return srv.URL, srv.Client()
}

// TarpitDriver makes the driver under test and a cluster of it at
// endpoint, sending over client; short asks for retries of a 50ms try
// timeout and a 1ms backoff (else the driver's defaults).
type TarpitDriver func(t *testing.T, endpoint string, client *http.Client, short bool) (provider.Driver, *kpool.Cluster)

// RunTarpit checks that an endpoint that accepts and never answers, or
// never completes the TLS handshake, cannot hold a call for ever: the
// caller's deadline ends it, or, without one, the per-try timeout does;
// either way the error is transient (and passes also, when given).
func RunTarpit(t *testing.T, newDriver TarpitDriver, also ...func(error) bool) {
	answerless, client := Tarpit(t)
	tp, err := sim.NewTarpit()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Close() })
	for _, tc := range []struct {
		name     string
		endpoint string
		short    bool
		deadline time.Duration // 0: none
	}{
		{"no answer, caller's deadline", answerless, false, 200 * time.Millisecond},
		{"no answer, try timeout", answerless, true, 0},
		{"no handshake, caller's deadline", "https://" + tp.Addr(), false, 200 * time.Millisecond},
		{"no handshake, try timeout", "https://" + tp.Addr(), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, c := newDriver(t, tc.endpoint, client, tc.short)
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			start := time.Now()
			_, err := d.NodePoolList(ctx, c)
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("took %v", took)
			}
			if !provider.IsTransient(err) {
				t.Fatalf("got %v, want transient", err)
			}
			for _, ok := range also {
				if !ok(err) {
					t.Fatalf("got %v", err)
				}
			}
		})
	}
}
