package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
)

// listenerProcess starts what kpool serve and kpool controller run on an
// SQLite file, without the controllers.
func listenerProcess(t *testing.T) *process {
	t.Helper()
	f := serveFlags{listen: "127.0.0.1:0", database: "sqlite:" + filepath.Join(t.TempDir(), "kpool.db"), logFormat: "text", auth: auth.AuthToken,
		resyncFast: time.Second, resyncSlow: time.Minute, driftInterval: time.Minute, callTimeout: time.Second, logOut: io.Discard}
	p, err := start(context.Background(), &f, catalog.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p
}

// TestListeners: kpool controller's listener serves /metrics, /healthz and
// /readyz and nothing else (the dashboard and /live were served there
// too); kpool serve's puts the dashboard behind the API's limiter.
func TestListeners(t *testing.T) {
	p := listenerProcess(t)
	ctl := httptest.NewServer(p.controllerHandler())
	t.Cleanup(ctl.Close)
	srv := httptest.NewServer(p.handler(api.NewServer(p.svc, p.access, p.log).Limit(api.NewLimiter(0.001, 2))))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		base, path string
		status     int
	}{
		{ctl.URL, "/metrics", http.StatusOK},
		{ctl.URL, "/healthz", http.StatusOK},
		{ctl.URL, "/readyz", http.StatusOK},
		{ctl.URL, "/", http.StatusNotFound},
		{ctl.URL, "/login", http.StatusNotFound},
		{ctl.URL, "/live", http.StatusNotFound},
		{ctl.URL, "/static/app.js", http.StatusNotFound},
		{ctl.URL, "/api/v1/clusters", http.StatusNotFound},
		{srv.URL, "/login", http.StatusOK},
		{srv.URL, "/login", http.StatusOK},
		{srv.URL, "/login", http.StatusTooManyRequests}, // the address's bucket of 2
		{srv.URL, "/healthz", http.StatusOK},
	} {
		resp, err := http.Get(tc.base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s%s: %d, want %d", map[bool]string{true: "controller ", false: "serve "}[tc.base == ctl.URL], tc.path, resp.StatusCode, tc.status)
		}
	}
}
