// Package api is kpool's REST API: the HTTP handlers and middleware (identity,
// request ids, body limits, access logs), the OpenAPI document, and the Go
// client that the CLI and the tests use.
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/service"
)

// RetryUnavailable is the Retry-After (seconds) of a 503 UNAVAILABLE answer:
// long enough for a database restart or failover to be under way.
const RetryUnavailable = "2"

// MaxBodyBytes is the largest request body accepted; larger ones get 413.
const MaxBodyBytes = 1 << 20

// Server serves the kpool API.
type Server struct {
	svc    *service.Service
	access *auth.Access
	log    *slog.Logger
	mux    *http.ServeMux
	// limiter, when set, caps each caller's request rate (see Limit).
	limiter *Limiter
	// placing holds a slot per placement being worked out: their memory
	// grows with their input, so only so many run at once.
	placing chan struct{}
	// tracer, when set, gives each request a span (see Trace).
	tracer trace.Tracer
	// metrics, when set, counts and times each request (see Instrument).
	metrics *HTTPMetrics
	// kubeCA is the CA (PEM) served kubeconfigs tell kubectl to trust for
	// this server (see KubeconfigCA).
	kubeCA []byte
	// emulated holds, by cluster id, the kubeconfigs of kpool dev's
	// emulated clusters (EmulatedKubeconfigs).
	emulated map[string][]byte
}

// NewServer returns the API server for svc. access authenticates callers
// (tokens, or the trusted header) and decides who is an admin or a controller; log receives access logs and internal errors.
func NewServer(svc *service.Service, access *auth.Access, log *slog.Logger) *Server {
	s := &Server{svc: svc, access: access, log: log, mux: http.NewServeMux(), placing: make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))}
	s.routes()
	// Requests no route takes land here; the mux without this catch-all
	// tells a wrong method (405, with Allow) from an unknown path (404).
	probe := s.mux
	s.mux = http.NewServeMux()
	s.mux.Handle("/", s.unrouted(probe))
	s.routes()
	return s
}

// unrouted answers a request no route takes, in the API's error shape: 405
// with the Allow header where the path exists with other methods, else 404.
func (s *Server) unrouted(probe *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _ := probe.Handler(r)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if allow := rec.Header().Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		if rec.Code == http.StatusMethodNotAllowed {
			s.writeError(w, r, kpool.Errorf(kpool.CodeMethodNotAllowed, "Method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		s.writeError(w, r, &kpool.Error{Code: kpool.CodeNotFound, Message: "No such endpoint", Details: r.Method + " " + r.URL.Path})
	})
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /version", s.version)
	s.mux.HandleFunc("GET /api/v1/openapi.json", serveOpenAPI)

	s.mux.HandleFunc("GET /api/v1/clusters", s.authed(s.listClusters))
	s.mux.HandleFunc("POST /api/v1/clusters", s.authed(s.createCluster))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}", s.authed(s.getCluster))
	s.mux.HandleFunc("PUT /api/v1/clusters/{id}", s.authed(s.updateCluster))
	s.mux.HandleFunc("PATCH /api/v1/clusters/{id}", s.authed(s.updateCluster))
	s.mux.HandleFunc("DELETE /api/v1/clusters/{id}", s.authed(s.deleteCluster))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}/facts", s.authed(s.getClusterFacts))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}/nodepools", s.authed(s.listClusterNodePools))
	s.mux.HandleFunc("POST /api/v1/clusters/{id}/nodepools", s.authed(s.createNodePool))
	s.mux.HandleFunc("POST /api/v1/clusters/{id}/placements", s.authed(s.createPlacement))
	s.mux.HandleFunc("POST /api/v1/clusters/{id}/zonal-nodepools", s.authed(s.createZonalNodePools))
	s.mux.HandleFunc("POST /api/v1/clusters/{id}/imports", s.authed(s.importPool))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}/nodes", s.authed(s.listClusterNodes))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}/nodepools/{pool}/nodes", s.authed(s.listPoolNodes))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}/kubeconfig", s.authed(s.getKubeconfig))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}/logicalpools", s.authed(s.listLogicalPools))
	s.mux.HandleFunc("POST /api/v1/clusters/{id}/logicalpools", s.authed(s.createLogicalPool))
	s.mux.HandleFunc("GET /api/v1/clusters/{id}/logicalpools/{name}", s.authed(s.getLogicalPool))
	s.mux.HandleFunc("PUT /api/v1/clusters/{id}/logicalpools/{name}", s.authed(s.updateLogicalPool))
	s.mux.HandleFunc("PATCH /api/v1/clusters/{id}/logicalpools/{name}", s.authed(s.updateLogicalPool))
	s.mux.HandleFunc("DELETE /api/v1/clusters/{id}/logicalpools/{name}", s.authed(s.deleteLogicalPool))
	// The read-only proxy takes every method, to answer all but GET with
	// its own 405 (not in openapi.yaml: the paths are the cluster's).
	s.mux.Handle("/api/v1/clusters/{id}/kube/", s.authed(s.kubeProxy))

	s.mux.HandleFunc("GET /api/v1/nodepools", s.authed(s.listNodePools))
	s.mux.HandleFunc("POST /api/v1/nodepools", s.authed(s.createNodePool))
	s.mux.HandleFunc("GET /api/v1/nodepools/{id}", s.authed(s.getNodePool))
	s.mux.HandleFunc("PUT /api/v1/nodepools/{id}", s.authed(s.updateNodePool))
	s.mux.HandleFunc("PATCH /api/v1/nodepools/{id}", s.authed(s.updateNodePool))
	s.mux.HandleFunc("DELETE /api/v1/nodepools/{id}", s.authed(s.deleteNodePool))
	s.mux.HandleFunc("POST /api/v1/nodepools/{id}/rollback", s.authed(s.rollbackNodePool))
	s.mux.HandleFunc("GET /api/v1/nodepools/{id}/status", s.authed(s.getNodePoolStatus))
	s.mux.HandleFunc("PUT /api/v1/nodepools/{id}/status", s.authed(s.putNodePoolStatus))
	s.mux.HandleFunc("GET /api/v1/events", s.authed(s.listEvents))
}

type ctxKey int

const requestIDKey ctxKey = 0

// ServeHTTP adds a request id, recovers from panics, writes the access log
// and answers unknown paths and wrong methods in the API's error shape.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serve(s.mux, w, r) }

// Logged serves h as the API serves its own routes: with a request id, a
// panic recovered and one access-log line per request, in the API's
// format. kpool serve puts the dashboard behind it, so that its pages,
// sign-ins and live streams are logged like API calls (see Admit).
func (s *Server) Logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(h, w, r) })
}

// serve is ServeHTTP with h in place of the API's routes.
func (s *Server) serve(h http.Handler, w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-ID")
	if !validRequestID(id) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	w.Header().Set("X-Request-ID", id)
	r = r.WithContext(audit.WithRequestID(context.WithValue(r.Context(), requestIDKey, id), id))
	var span trace.Span
	if s.tracer != nil {
		r, span = s.startSpan(r, id)
	}
	rw := &recorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic", "request_id", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !rw.wrote {
				s.writeError(rw, r, fmt.Errorf("panic: %v", v))
			}
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("method", r.Method), slog.String("path", logURI(r.URL)),
			slog.Int("status", rw.status), slog.Int("bytes", rw.bytes), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("request_id", id), slog.String("user", rw.user))
		if span != nil {
			endSpan(span, r, rw.status)
		}
		s.metrics.observe(r, rw.status, time.Since(start))
	}()

	h.ServeHTTP(rw, r)
}

// loggedParams are the query parameters the API takes: the access log keeps
// their values. Any other parameter's value is hidden there, since a caller
// may put anything in one (a token in ?token= or ?access_token=, a
// password) and the API refuses it anyway; its name is kept, to say what
// was sent.
var loggedParams = map[string]bool{"limit": true, "offset": true, "after": true, "status": true, "health": true,
	"cluster_id": true, "clusterId": true, "name": true, "force": true, "dry_run": true, "nodepool_id": true, "type": true, "actor": true,
	"context": true, "label_selector": true}

// logURI is the request's path and query as the access log writes them:
// the values of parameters the API does not take hidden, and a parameter
// without a value that it does not take (?kpool_…) hidden whole.
func logURI(u *url.URL) string {
	p := u.EscapedPath()
	if u.RawQuery == "" {
		return p
	}
	parts := strings.Split(u.RawQuery, "&")
	for i, part := range parts {
		k, _, hasValue := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		switch {
		case err == nil && loggedParams[name]:
		case hasValue && err == nil:
			parts[i] = k + "=xxxxx"
		case part != "":
			parts[i] = "xxxxx"
		}
	}
	return p + "?" + strings.Join(parts, "&")
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// recorder remembers what a handler wrote, for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
	user   string
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// Flush sends what was written so far: the dashboard's live stream flushes
// every event.
func (r *recorder) Flush() {
	r.wrote = true
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection beneath, for
// the live stream's write deadlines.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// authed authenticates the caller (an API token, or X-User-Email in header
// mode) and puts its identity in the request context. Neither the token nor
// the Authorization header is ever logged.
func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		if authz == "" && r.Header.Get(auth.SessionHeader) != "" {
			// The dashboard's own calls: the session cookie is the token.
			if c, err := r.Cookie(auth.SessionCookie); err == nil && c.Value != "" {
				authz = "Bearer " + c.Value
			}
		}
		email, err := auth.UserHeader(r.Header.Values("X-User-Email"))
		var id *kpool.Identity
		if err == nil {
			id, err = s.access.Authenticate(r.Context(), authz, email)
		}
		// Charged to the caller, or to its address when it has none: a
		// failed login counts too.
		if !s.allow(w, r, callerKey(id)) {
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if rw, ok := w.(*recorder); ok {
			rw.user = id.Email
		}
		h(w, r.WithContext(kpool.WithIdentity(r.Context(), id)))
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.svc.Store.Ping(ctx); err != nil {
		s.writeError(w, r, kpool.Unavailable("Database unreachable", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"INTERNAL","message":"Internal server error","details":""}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// bodies recycles the buffers reads are written into.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// writeRaw answers with the JSON that appendBody appends to a buffer: for
// answers that carry stored JSON as it is (see kpool.RawNodePool).
func writeRaw(w http.ResponseWriter, status int, appendBody func([]byte) []byte) {
	buf := bodies.Get().(*[]byte)
	b := append(appendBody((*buf)[:0]), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	if cap(b) <= 1<<20 { // keep page-sized buffers, not a rare huge one
		*buf = b
		bodies.Put(buf)
	}
}

// readBody reads a JSON request body of at most MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && mt != "application/merge-patch+json") {
			return nil, kpool.Errorf(kpool.CodeUnsupportedMedia, "Content-Type %q is not supported: send application/json", ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &kpool.Error{Code: kpool.CodePayloadTooLarge, Message: "Request body too large", Details: fmt.Sprintf("the limit is %d bytes", MaxBodyBytes)}
	}
	if err != nil {
		return nil, kpool.Invalid("body", "could not read the request body: %v", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, kpool.Invalid("body", "required: a JSON object")
	}
	return body, nil
}
