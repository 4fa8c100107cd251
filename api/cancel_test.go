package api

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

// TestClientGoneIsNoError checks that a request whose client has left is
// logged as 499, not as an internal error: under load, clients that time
// out must not fill the log with ERROR lines.
func TestClientGoneIsNoError(t *testing.T) {
	access, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h := NewServer(service.New(testdb.SQLite(t), catalog.Registry()), access, slog.New(slog.NewTextHandler(&log, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, "GET", "/api/v1/nodepools?limit=1", nil)
	r.Header.Set("X-User-Email", "alice@example.com")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "status=499") {
		t.Fatalf("log:\n%s", log.String())
	}
}
