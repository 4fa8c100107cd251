package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/placement"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/sqlite"
)

// ---- the document, loaded once ----

var openAPI struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

var (
	canonicalUUID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	bareEmail     = regexp.MustCompile(`^[^@\s<>",]+@[^@\s<>",]+$`)
)

// loadOpenAPI parses and validates openapi.yaml (once per test binary) and
// builds its router.
func loadOpenAPI(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	openAPI.once.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(OpenAPIYAML)
		if err != nil {
			openAPI.err = fmt.Errorf("api/openapi.yaml does not load: %w", err)
			return
		}
		// kin-openapi checks no uuid or email format by default; these are
		// the forms the server accepts and writes.
		doc.SetStringFormatValidators(map[string]openapi3.StringFormatValidator{
			"uuid": openapi3.NewCallbackValidator(func(s string) error {
				if !canonicalUUID.MatchString(s) {
					return errors.New("not a UUID (8-4-4-4-12 hex digits)")
				}
				return nil
			}),
			"email": openapi3.NewCallbackValidator(func(s string) error {
				if !bareEmail.MatchString(s) {
					return errors.New("not a bare e-mail address")
				}
				return nil
			}),
			"date-time": openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringDateTime),
		})
		if err := doc.Validate(loader.Context); err != nil {
			openAPI.err = fmt.Errorf("api/openapi.yaml is not a valid OpenAPI document: %w", err)
			return
		}
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			openAPI.err = fmt.Errorf("api/openapi.yaml: building a router: %w", err)
			return
		}
		openAPI.doc, openAPI.router = doc, router
	})
	if openAPI.err != nil {
		t.Fatal(openAPI.err)
	}
	return openAPI.doc, openAPI.router
}

// openAPIOptions are the validator's options: every response status must be
// documented, X-User-Email is the server's business (a missing one must
// still reach it, for the 401 tests), and errors are short.
func openAPIOptions(doc *openapi3.T) *openapi3filter.Options {
	o := &openapi3filter.Options{
		AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus:   true,
		MultiError:              true,
		SchemaValidationOptions: doc.GetSchemaValidationOptions(),
	}
	o.WithCustomSchemaErrorFunc(func(err *openapi3.SchemaError) string {
		at := strings.Join(err.JSONPointer(), "/")
		if err.Reason == "" {
			return "" // kin-openapi's own, longer message
		}
		if at == "" {
			return err.Reason
		}
		return "/" + at + ": " + err.Reason
	})
	return o
}

// ---- checking every exchange ----

// checkOpenAPI wraps h so that every request and response passing through it
// is checked against openapi.yaml; a mismatch fails t.
//
// Responses are checked strictly: the status must be documented for the
// operation, and the headers and body must match the document. Requests are
// checked only when the server accepted them (2xx): tests send invalid
// requests on purpose, but one the server takes must be one the document
// allows. A request for an operation the document does not have must get
// the document's NotFound or MethodNotAllowed answer.
func checkOpenAPI(t testing.TB, h http.Handler) http.Handler {
	return checkOpenAPIWith(t, h, nil)
}

// checkOpenAPIWith is checkOpenAPI that also tells seen about each exchange:
// the operation ("GET /api/v1/clusters", or "" for none) and the status.
func checkOpenAPIWith(t testing.TB, h http.Handler, seen func(op string, status int)) http.Handler {
	doc, router := loadOpenAPI(t)
	opts := openAPIOptions(doc)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("%s %s: reading the request body: %v", r.Method, r.URL.RequestURI(), err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		req := r.Clone(context.Background())
		req.Body = io.NopCloser(bytes.NewReader(body))

		cw := &captureWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		if cw.status == 0 {
			cw.status, cw.header = http.StatusOK, w.Header().Clone()
		}
		op := checkExchange(t, doc, router, opts, req, body, cw.status, cw.header, cw.body.Bytes())
		if seen != nil {
			seen(op, cw.status)
		}
	})
}

// captureWriter passes a response through and keeps a copy of it.
type captureWriter struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status, c.header = code, c.ResponseWriter.Header().Clone()
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

// checkExchange checks one request and its response and returns the
// operation they matched ("" for none).
func checkExchange(t testing.TB, doc *openapi3.T, router routers.Router, opts *openapi3filter.Options,
	req *http.Request, reqBody []byte, status int, header http.Header, body []byte) string {
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.RequestURI(), status)
	fail := func(format string, args ...any) {
		t.Errorf("openapi.yaml: %s: %s\nresponse body: %s", what, fmt.Sprintf(format, args...), clip(body))
	}
	ctx := context.Background()

	if req.Method == http.MethodHead {
		// Go's mux serves HEAD wherever it serves GET, without a body; the
		// document lists GET only (as the routes do).
		return ""
	}
	// The server reads a body without a Content-Type as JSON.
	if len(reqBody) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}

	route, params, err := router.FindRoute(req)
	if err != nil {
		// Not an operation of the document: the server must say so in the
		// shape the document gives for that.
		name, want := "NotFound", http.StatusNotFound
		if errors.Is(err, routers.ErrMethodNotAllowed) {
			name, want = "MethodNotAllowed", http.StatusMethodNotAllowed
		} else if !errors.Is(err, routers.ErrPathNotFound) {
			fail("finding the route: %v", err)
			return ""
		}
		if status != want {
			fail("the document has no such operation (%v), so the answer should be %d", err, want)
			return ""
		}
		resp := doc.Components.Responses[name]
		if resp == nil {
			fail("components.responses.%s is missing", name)
			return ""
		}
		op := openapi3.NewOperation()
		op.Responses = openapi3.NewResponses(openapi3.WithStatus(want, resp))
		route = &routers.Route{Spec: doc, Path: req.URL.Path, PathItem: &openapi3.PathItem{}, Method: req.Method, Operation: op}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route, Options: opts},
			Status:                 status, Header: header, Options: opts,
		}
		in.SetBodyBytes(body)
		if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
			fail("not the document's %s response: %v", name, err)
		}
		return ""
	}
	op := route.Method + " " + route.Path

	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			fail("the server accepted a request that the document does not allow: %v\nrequest body: %s", err, clip(reqBody))
		}
	}

	rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	rin.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, rin); err != nil {
		fail("the response does not match the document: %v", err)
		return op
	}
	// kin-openapi does not check that a response documented without a body
	// (204) has none.
	if ref := route.Operation.Responses.Status(status); ref != nil && ref.Value != nil && len(ref.Value.Content) == 0 && len(bytes.TrimSpace(body)) > 0 {
		fail("the document gives this response no body, but it has one")
	}
	return op
}

func clip(b []byte) string {
	const max = 600
	if len(b) > max {
		return string(b[:max]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return string(b)
}

// ---- the document itself ----

func TestOpenAPIDocumentValid(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q, want 3.0.3", doc.OpenAPI)
	}
	// Every operation has an id, and every /api/v1 operation but the
	// document itself requires a bearer token or (header mode) X-User-Email.
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", name)
			} else if prev, dup := ids[op.OperationID]; dup {
				t.Errorf("%s and %s share the operationId %s", prev, name, op.OperationID)
			}
			ids[op.OperationID] = name
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			public := path == "/healthz" || path == "/readyz" || path == "/version" || path == "/api/v1/openapi.json"
			authed := len(security) == 2 && len(security[0]) == 1 && security[0]["bearerAuth"] != nil &&
				len(security[1]) == 1 && security[1]["userEmail"] != nil
			if public == authed {
				t.Errorf("%s: security %v; want a bearer token or X-User-Email on every /api/v1 operation but the document", name, security)
			}
		}
	}
}

// serverRoutes returns the routes that routes() registers, read from the
// source of server.go, and checks that the server's mux serves each.
func serverRoutes(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`HandleFunc\("([A-Z]+) (/[^"]*)"`)
	routes := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		routes[m[1]+" "+m[2]] = true
	}
	if len(routes) == 0 {
		t.Fatal("found no HandleFunc(\"METHOD /path\" in server.go")
	}
	access, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(service.New(nil, catalog.Registry()), access, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for route := range routes {
		method, path, _ := strings.Cut(route, " ")
		req := httptest.NewRequest(method, strings.ReplaceAll(path, "{id}", "550e8400-e29b-41d4-a716-446655440000"), nil)
		if _, pattern := s.mux.Handler(req); pattern != route {
			t.Errorf("server.go registers %q, but the server's mux answers %s %s with pattern %q", route, req.Method, req.URL.Path, pattern)
		}
	}
	return routes
}

func TestOpenAPICoversRoutes(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	served := serverRoutes(t)
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for _, r := range sortedSet(served) {
		if !documented[r] {
			t.Errorf("the server serves %s, which openapi.yaml does not document", r)
		}
	}
	for _, r := range sortedSet(documented) {
		if !served[r] {
			t.Errorf("openapi.yaml documents %s, which the server does not serve", r)
		}
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestOpenAPIServedAsJSON(t *testing.T) {
	access, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(service.New(nil, catalog.Registry()), access, slog.New(slog.NewTextHandler(io.Discard, nil)))
	rec := httptest.NewRecorder()
	checkOpenAPI(t, s).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/v1/openapi.json: %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	// Parse the YAML and the served JSON separately with kin-openapi's
	// loader and compare what they say.
	fromYAML, err := openapi3.NewLoader().LoadFromData(OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("the served document does not load: %v", err)
	}
	a, b := canonicalJSON(t, fromYAML), canonicalJSON(t, fromJSON)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the served JSON document differs from openapi.yaml")
	}
	// And the raw JSON is the YAML's content, not only something that
	// loads to the same document.
	var raw map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw["openapi"] != "3.0.3" || raw["paths"] == nil || raw["components"] == nil {
		t.Fatalf("served document: %s", clip(rec.Body.Bytes()))
	}
}

func canonicalJSON(t *testing.T, doc *openapi3.T) any {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOpenAPISchemasMatchGoTypes checks that each schema names exactly the
// JSON fields of the Go type it describes, so that a field added to a type
// (or removed from it) cannot go undocumented, even where no test sends or
// receives it.
func TestOpenAPISchemasMatchGoTypes(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	types := map[string]any{
		"ClusterBody":       ClusterBody{},
		"ClusterUpdate":     ClusterBody{},
		"NodePoolBody":      NodePoolBody{},
		"NodePoolUpdate":    NodePoolBody{},
		"StatusReport":      StatusReport{},
		"ClusterList":       ClusterList{},
		"NodePoolList":      NodePoolList{},
		"Error":             ErrorBody{},
		"ErrorDetail":       ErrorDetail{},
		"FieldError":        kpool.FieldError{},
		"Cluster":           kpool.Cluster{},
		"ClusterSpec":       kpool.ClusterSpec{},
		"ClusterPlatform":   kpool.ClusterPlatform{},
		"ClusterStatus":     kpool.ClusterStatus{},
		"ForeignPool":       kpool.ForeignPool{},
		"UnmarkedPool":      kpool.UnmarkedPool{},
		"ImportRequest":     service.PoolImport{},
		"AzureCluster":      kpool.AzureCluster{},
		"AWSCluster":        kpool.AWSCluster{},
		"GCPCluster":        kpool.GCPCluster{},
		"OCICluster":        kpool.OCICluster{},
		"CivoCluster":       kpool.CivoCluster{},
		"EmptyPlatform":     kpool.EmptyPlatform{},
		"NodePool":          kpool.NodePool{},
		"NodePoolSpec":      kpool.NodePoolSpec{},
		"Autoscaling":       kpool.Autoscaling{},
		"NodePoolPlatform":  kpool.NodePoolPlatform{},
		"GCPNodePool":       kpool.GCPNodePool{},
		"AWSNodePool":       kpool.AWSNodePool{},
		"AzureNodePool":     kpool.AzureNodePool{},
		"OCINodePool":       kpool.OCINodePool{},
		"CivoNodePool":      kpool.CivoNodePool{},
		"Accelerator":       kpool.Accelerator{},
		"Taint":             kpool.Taint{},
		"NodePoolStatus":    kpool.NodePoolStatus{},
		"Condition":         kpool.Condition{},
		"ReportedCondition": kpool.Condition{},
		"ControllerStatus":  kpool.ControllerStatus{},
		"StatusDocument":    service.StatusDocument{},
		"DryRun":            DryRun{},
		"Plan":              kpool.Plan{},
		"Change":            kpool.Change{},
		"PlacementRequest":  PlacementRequest{},
		"PlacementIntent":   placement.Intent{},
		"Placement":         placement.Result{},
		"PlacementWarning":  placement.Warning{},
	}
	// The partial specs of PUT and PATCH mirror the full ones.
	for _, name := range []string{"ClusterSpec", "ClusterPlatform", "AzureCluster", "AWSCluster", "GCPCluster", "OCICluster",
		"CivoCluster", "EmptyPlatform", "NodePoolSpec", "Autoscaling", "NodePoolPlatform", "GCPNodePool", "AWSNodePool",
		"AzureNodePool", "OCINodePool", "CivoNodePool"} {
		types[name+"Patch"] = types[name]
	}
	requestOnly := map[string]bool{"ClusterBody": true, "NodePoolBody": true, "StatusReport": true, "ReportedCondition": true,
		"PlacementRequest": true, "PlacementIntent": true}
	neverEmpty := map[string]bool{ // the machine types: validation requires them
		"GCPNodePool.machineType": true, "AWSNodePool.instanceType": true, "AzureNodePool.vmSize": true,
		"OCINodePool.shape": true, "CivoNodePool.size": true,
	}
	for name, v := range types {
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("components.schemas.%s is missing", name)
			continue
		}
		var props []string
		for p := range ref.Value.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		fields, required := goJSONFields(reflect.TypeOf(v))
		if !slices.Equal(props, fields) {
			t.Errorf("schema %s has properties %v; the Go type %T has JSON fields %v", name, props, v, fields)
		}
		// A property that a response schema requires must be one Go always
		// writes (no omitempty), or one validation never lets be empty.
		if requestOnly[name] {
			continue
		}
		for _, r := range ref.Value.Required {
			if !required[r] && !neverEmpty[name+"."+r] {
				t.Errorf("schema %s requires %q, which %T omits when empty", name, r, v)
			}
		}
	}
}

// goJSONFields returns the JSON names of t's fields, sorted, and which of them
// are always written.
func goJSONFields(t reflect.Type) ([]string, map[string]bool) {
	var names []string
	always := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			n, a := goJSONFields(f.Type)
			names = append(names, n...)
			for k := range a {
				always[k] = true
			}
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
		if !strings.Contains(","+opts+",", ",omitempty,") {
			always[name] = true
		}
	}
	sort.Strings(names)
	return names, always
}

// ---- every operation and response, against a real store ----

const (
	oaOwner      = "owner@example.com"
	oaStranger   = "stranger@example.com"
	oaAdmin      = "admin@example.com"
	oaController = "ctl@example.com"
	// oaAKSController is granted the built-in AKS controller's name.
	oaAKSController = "aks-ctl@example.com"
)

type oaAPI struct {
	t   *testing.T
	url string
}

type oaReply struct {
	status int
	header http.Header
	body   []byte
}

// call sends a request; headers are "Name: value" strings, and a body goes
// with Content-Type application/json unless a header says otherwise.
func (a *oaAPI) call(who, method, path, body string, headers ...string) oaReply {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if who != "" {
		req.Header.Set("X-User-Email", who)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return oaReply{status: resp.StatusCode, header: resp.Header, body: b}
}

// expect sends a request and fails unless the answer has the given status
// (and, for an error, code).
func (a *oaAPI) expect(status int, who, method, path, body string, headers ...string) oaReply {
	a.t.Helper()
	r := a.call(who, method, path, body, headers...)
	if r.status != status {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, clip(r.body))
	}
	return r
}

func (r oaReply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", clip(r.body), err)
	}
}

// TestOpenAPIConformance drives every operation through checkOpenAPI against
// an SQLite store: each platform, each filter, each kind of update, the
// status protocol, both kinds of delete and every error status. It then
// checks that every operation answered each of its success statuses and that
// every documented error status was seen, so the document is proven on
// every response it describes.
func TestOpenAPIConformance(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kpool.db"))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			store.Close()
		}
	})
	access, err := auth.NewAccess([]string{oaAdmin}, []string{oaController, oaAKSController + "=aks-nodepool-controller"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]map[int]bool{}
	record := func(op string, status int) {
		mu.Lock()
		defer mu.Unlock()
		if seen[op] == nil {
			seen[op] = map[int]bool{}
		}
		seen[op][status] = true
	}
	broken := &brokenStore{Store: store}
	svc := service.New(broken, catalog.Registry())
	svc.Endpoints, _ = kpool.ParseOrigins([]string{"https://container.googleapis.com", "https://gke.example.com", "https://aks.example.com", "https://eks.example.com"})
	h := NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(checkOpenAPIWith(t, h, record))
	defer srv.Close()
	a := &oaAPI{t: t, url: srv.URL}

	// ---- server ----
	a.expect(200, "", "GET", "/healthz", "", "X-Request-ID: trace-123")
	a.expect(200, "", "GET", "/readyz", "")
	a.expect(200, "", "GET", "/version", "")
	a.expect(200, "", "GET", "/api/v1/openapi.json", "")

	// ---- clusters, one of each platform ----
	clusterSpecs := []struct{ name, spec string }{
		{"gke", `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}},"endpoint":"https://container.googleapis.com"}`},
		{"eks", `{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"prod","nodeRoleArn":"arn:aws:iam::123456789012:role/eks-nodes",
			"subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`},
		{"aks", `{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg-prod","clusterName":"prod","location":"westeurope"}}}`},
		{"oke", `{"platform":{"type":"oci","oci":{"region":"us-ashburn-1","compartmentId":"ocid1.compartment.oc1..aaaaexample",
			"clusterId":"ocid1.cluster.oc1.iad.aaaaexample","imageId":"ocid1.image.oc1.iad.aaaaexample",
			"subnets":{"Uocm:US-ASHBURN-AD-1":"ocid1.subnet.oc1.iad.aaaaexample"}}}}`},
		{"civo", `{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`},
		{"edge", `{"platform":{"type":"k3s","k3s":{}}}`},
		{"lab", `{"platform":{"type":"microvm"}}`},
	}
	clusters := map[string]kpool.Cluster{}
	for i, c := range clusterSpecs {
		body := fmt.Sprintf(`{"name":%q,"spec":%s}`, c.name, c.spec)
		if i == 0 {
			body = fmt.Sprintf(`{"id":"550e8400-e29b-41d4-a716-446655440000","name":%q,"spec":%s}`, c.name, c.spec)
		}
		r := a.expect(201, oaOwner, "POST", "/api/v1/clusters", body)
		var cl kpool.Cluster
		r.decode(t, &cl)
		clusters[c.name] = cl
	}
	gke := clusters["gke"]

	// ---- node pools, one on each platform that has them ----
	pools := map[string]kpool.NodePool{}
	pool := func(r oaReply, name string) {
		var p kpool.NodePool
		r.decode(t, &p)
		pools[name] = p
	}
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/nodepools", `{
		"id": "123e4567-e89b-12d3-a456-426614174000",
		"name": "gpu",
		"cluster_id": "`+gke.ID+`",
		"spec": {
			"nodeCount": 2,
			"autoscaling": {"enabled": true, "minNodes": 1, "maxNodes": 4, "targetCPUUtilization": 70,
				"targetMemoryUtilization": 80, "scaleDownDelay": "10m", "scaleUpDelay": "3m"},
			"platform": {"type": "gcp", "gcp": {"machineType": "n1-standard-4", "diskSize": 100, "diskType": "pd-ssd",
				"zones": ["us-central1-a", "us-central1-b"], "preemptible": true,
				"accelerators": [{"type": "nvidia-tesla-v100", "count": 1}],
				"labels": {"team": "platform"}, "taints": [{"key": "workload-type", "value": "gpu", "effect": "NoSchedule"}]}},
			"mode": "user",
			"kubernetesVersion": "1.30",
			"labels": {"environment": "production"},
			"taints": [{"key": "dedicated", "effect": "PreferNoSchedule"}],
			"tags": {"cost-center": "platform"}
		}}`), "gpu")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/nodepools",
		`{"name":"quiet","spec":{"platform":{"gcp":{"machineType":"e2-small"}}}}`), "quiet")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/nodepools", `{"name":"workers","cluster_id":"`+clusters["eks"].ID+`","spec":{
			"platform": {"type": "aws", "aws": {"instanceType": "m5.xlarge", "volumeSize": 100, "volumeType": "gp3",
				"availabilityZones": ["us-west-2a", "us-west-2b"], "spotInstances": true, "userData": "#!/bin/bash\necho 'Custom initialization'"}},
			"mode": "system", "nodeCount": 3}}`), "workers")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/nodepools", `{"name":"agents","cluster_id":"`+clusters["aks"].ID+`","spec":{
			"platform": {"type": "azure", "azure": {"vmSize": "Standard_D4s_v3", "osDiskSizeGB": 100, "osDiskType": "Premium_LRS",
				"availabilityZones": ["1", "2"], "spotInstances": false}}}}`), "agents")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+clusters["oke"].ID+"/nodepools", `{"name":"flex","spec":{
			"platform": {"oci": {"shape": "VM.Standard.E4.Flex", "ocpus": 2.5, "memoryInGBs": 32, "bootVolumeSizeInGBs": 100,
				"availabilityDomains": ["Uocm:US-ASHBURN-AD-1"], "imageId": "ocid1.image.oc1.iad.bbbbexample", "preemptible": true,
				"labels": {"tier": "batch"}}},
			"nodeCount": 2}}`), "flex")
	pool(a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+clusters["civo"].ID+"/nodepools", `{"name":"small","spec":{
			"platform": {"type": "civo", "civo": {"size": "g4s.kube.medium", "labels": {"tier": "web"},
				"taints": [{"key": "web", "value": "true", "effect": "NoExecute"}]}}, "nodeCount": 2}}`), "small")
	for _, name := range []string{"edge", "lab"} {
		a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters[name].ID+"/nodepools", `{"name":"x","spec":{"nodeCount":1}}`)
		a.expect(501, oaOwner, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"`+clusters[name].ID+`","spec":{"nodeCount":1}}`)
		a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters[name].ID+"/placements", `{"manifests":"kind: Pod\nmetadata: {name: p}\n"}`)
		a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters[name].ID+"/zonal-nodepools", `{"name":"z","spec":{"nodeCount":1,"zones":["1"]}}`)
	}

	// ---- lists, with every parameter ----
	r := a.expect(200, oaOwner, "GET", "/api/v1/clusters?limit=3", "")
	var cl ClusterList
	r.decode(t, &cl)
	if cl.Next == "" || len(cl.Clusters) != 3 || cl.Total != len(clusterSpecs) {
		t.Fatalf("first page of clusters: %s", clip(r.body))
	}
	a.expect(200, oaOwner, "GET", "/api/v1/clusters?limit=3&after="+cl.Next, "")
	a.expect(200, oaOwner, "GET", "/api/v1/clusters?offset=5&limit=100", "")
	a.expect(200, oaStranger, "GET", "/api/v1/clusters", "")
	a.expect(200, oaAdmin, "GET", "/api/v1/clusters", "")
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools?limit=2", "")
	var pl NodePoolList
	r.decode(t, &pl)
	if pl.Next == "" {
		t.Fatalf("first page of pools: %s", clip(r.body))
	}
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?limit=2&after="+pl.Next, "")
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?offset=1&limit=10&status=pending&health=UNKNOWN&cluster_id="+gke.ID+"&clusterId="+gke.ID, "")
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?clusterId="+gke.ID, "")
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?status=Ready&health=healthy", "")
	a.expect(200, oaController, "GET", "/api/v1/nodepools", "")
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/nodepools?limit=1&offset=1&status=Pending&health=unknown", "")
	r = a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/nodepools?limit=1", "")
	r.decode(t, &pl)
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID+"/nodepools?limit=1&after="+pl.Next, "")

	// ---- reads ----
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+gke.ID, "")
	a.expect(200, oaController, "GET", "/api/v1/clusters/"+gke.ID, "")
	gpu := pools["gpu"]
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	etag := r.header.Get("ETag")

	// ---- updates ----
	r = a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"nodeCount":4}}`, "If-Match: "+etag)
	stale := etag
	etag = r.header.Get("ETag")
	a.expect(409, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"nodeCount":4}}`, "If-Match: "+stale)
	a.expect(409, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID, `{"resource_version":"0000000000000000","spec":{"nodeCount":4}}`)
	a.expect(400, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"resource_version":"a","spec":{}}`, `If-Match: "b"`)
	// A merge patch that removes fields with null. (Not the accelerators:
	// GKE fixes them when the pool is created, so that change is a 400 once
	// a controller reports that the pool exists.)
	r = a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", `{"controller_name":"gcp-nodepool-controller","observed_generation":2,"metadata":{"exists":true}}`)
	etag = ""
	a.expect(400, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"platform":{"gcp":{"accelerators":null}}}}`,
		"Content-Type: application/merge-patch+json")
	r = a.expect(200, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID,
		`{"spec":{"autoscaling":null,"platform":{"gcp":{"diskType":null}},"labels":{"environment":null},"tags":null}}`,
		"Content-Type: application/merge-patch+json")
	var patched kpool.NodePool
	r.decode(t, &patched)
	if patched.Spec.Autoscaling != nil || patched.Spec.Platform.GCP.DiskType != "" || patched.Spec.Labels != nil || patched.Generation != 3 {
		t.Fatalf("merge patch: %s", clip(r.body))
	}
	// A PUT's null leaves a field alone; a whole GET output is a valid PUT.
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"mode":null,"nodeCount":4},"name":"gpu","cluster_id":"`+gke.ID+`"}`, "If-Match: *")
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID, string(r.body))
	a.expect(200, oaAdmin, "PATCH", "/api/v1/nodepools/"+pools["workers"].ID, `{"spec":{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":6}}}`)
	a.expect(200, oaOwner, "PATCH", "/api/v1/nodepools/"+pools["flex"].ID, `{"spec":{"platform":{"oci":{"ocpus":4}}}}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+pools["small"].ID, `{"spec":{"platform":{"civo":{"labels":{"tier":"edge"}}}}}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/nodepools/"+pools["agents"].ID, `{"spec":null}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/clusters/"+gke.ID, `{"spec":{"endpoint":"https://gke.example.com"}}`)
	r = a.expect(200, oaOwner, "PATCH", "/api/v1/clusters/"+gke.ID, `{"spec":{"endpoint":null}}`, "Content-Type: application/merge-patch+json")
	a.expect(200, oaOwner, "PUT", "/api/v1/clusters/"+gke.ID, string(r.body))
	a.expect(200, oaOwner, "PATCH", "/api/v1/clusters/"+clusters["eks"].ID, `{"spec":{"platform":{"aws":{"subnets":{"us-west-2c":"subnet-0123456789abcdef2"}}}}}`)
	a.expect(200, oaOwner, "PATCH", "/api/v1/clusters/"+clusters["oke"].ID, `{"spec":{"platform":{"oci":{"imageId":null}}}}`)
	a.expect(200, oaOwner, "PUT", "/api/v1/clusters/"+clusters["edge"].ID, `{"name":"edge"}`)
	a.expect(409, oaOwner, "PUT", "/api/v1/clusters/"+gke.ID, `{"spec":{}}`, `If-Match: "0000000000000000"`)

	// ---- dry runs, and what each provider can do ----
	dryRun := func(r oaReply) DryRun {
		t.Helper()
		var d DryRun
		r.decode(t, &d)
		if !d.DryRun || r.header.Get("ETag") != "" || r.header.Get("Location") != "" {
			t.Fatalf("dry run: ETag %q, Location %q: %s", r.header.Get("ETag"), r.header.Get("Location"), clip(r.body))
		}
		return d
	}
	aks := `{"name":"planned","spec":{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333",
		"resourceGroup":"rg","clusterName":"aks","location":"westeurope"}}}}`
	if d := dryRun(a.expect(200, oaOwner, "POST", "/api/v1/clusters?dry_run=true", aks)); d.Cluster == nil || d.Cluster.Name != "planned" || d.Plan != nil {
		t.Fatalf("dry-run cluster create: %+v", d)
	}
	r = a.expect(201, oaOwner, "POST", "/api/v1/clusters", aks) // the dry run stored nothing
	var planned kpool.Cluster
	r.decode(t, &planned)
	cp := "/api/v1/clusters/" + planned.ID
	if d := dryRun(a.expect(200, oaOwner, "PUT", cp+"?dry_run=true", `{"spec":{"endpoint":"https://aks.example.com"}}`)); d.Cluster == nil || d.Cluster.Spec.Endpoint != "https://aks.example.com" {
		t.Fatalf("dry-run cluster PUT: %+v", d)
	}
	dryRun(a.expect(200, oaOwner, "PATCH", cp+"?dry_run=1", `{"spec":{"endpoint":"https://aks.example.com"}}`, "Content-Type: application/merge-patch+json"))
	if d := dryRun(a.expect(200, oaOwner, "DELETE", cp+"?dry_run=true", "")); !d.Gone || d.Cluster == nil {
		t.Fatalf("dry-run delete of an empty cluster: %+v", d)
	}
	r = a.expect(200, oaOwner, "GET", cp, "")
	r.decode(t, &planned)
	if planned.Spec.Endpoint != "" || planned.Generation != 1 {
		t.Fatalf("dry runs changed the cluster: %s", clip(r.body))
	}
	a.expect(400, oaOwner, "PATCH", cp+"?dry_run=maybe", `{}`)

	gpuWorkers := `{"name":"gpu-workers","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"zones":["westeurope-1"],"nodeCount":2}}`
	d := dryRun(a.expect(200, oaOwner, "POST", cp+"/nodepools?dry_run=true", gpuWorkers))
	if d.NodePool == nil || d.NodePool.ProviderName != "gpuworkers" || strings.Join(d.NodePool.Spec.Zones, ",") != "1" ||
		d.Plan == nil || d.Plan.Provider != "azure" || d.Plan.ProviderName != "gpuworkers" || len(d.Plan.Changes) != 0 {
		t.Fatalf("dry-run pool create: %+v", d)
	}
	dryRun(a.expect(200, oaOwner, "POST", "/api/v1/nodepools?dry_run=true",
		`{"name":"more","cluster_id":"`+planned.ID+`","spec":{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}}}}`))
	r = a.expect(201, oaOwner, "POST", cp+"/nodepools", gpuWorkers)
	var gw kpool.NodePool
	r.decode(t, &gw)
	if gw.ProviderName != "gpuworkers" || strings.Join(gw.Spec.Zones, ",") != "1" {
		t.Fatalf("pool with logical zones: %s", clip(r.body))
	}
	gp := "/api/v1/nodepools/" + gw.ID
	if d := dryRun(a.expect(200, oaOwner, "DELETE", gp+"?dry_run=true", "")); !d.Gone || d.NodePool == nil || d.Plan != nil {
		t.Fatalf("dry-run delete of an unreported pool: %+v", d)
	}
	// A pool no controller reports as existing at AKS has no in-place
	// limits: a new vmSize is planned in place.
	d = dryRun(a.expect(200, oaOwner, "PATCH", gp+"?dry_run=true", `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`))
	if len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Class != kpool.UpdateInPlace || !strings.Contains(d.Plan.Changes[0].Reason, "does not exist at the provider") {
		t.Fatalf("vmSize of a pool not at the provider: %+v", d.Plan)
	}
	// Once a controller reports that it exists, AKS's own limits hold.
	a.expect(200, oaAKSController, "PUT", gp+"/status", `{"controller_name":"aks-nodepool-controller","observed_generation":1,"metadata":{"exists":true}}`)
	r = a.expect(200, oaOwner, "GET", gp, "")
	r.decode(t, &gw)
	d = dryRun(a.expect(200, oaOwner, "PATCH", gp+"?dry_run=true", `{"spec":{"nodeCount":5,"kubernetesVersion":"1.31"}}`))
	classes := map[string]kpool.UpdateClass{}
	for _, c := range d.Plan.Changes {
		classes[c.Field] = c.Class
	}
	if len(classes) != 2 || classes["spec.nodeCount"] != kpool.UpdateInPlace || classes["spec.kubernetesVersion"] != kpool.UpdateRollsNodes ||
		d.NodePool == nil || d.NodePool.Generation != 2 {
		t.Fatalf("dry-run PATCH: %+v", d)
	}
	// Changes from and to nothing (null), objects and lists.
	d = dryRun(a.expect(200, oaOwner, "PUT", gp+"?dry_run=true", `{"spec":{"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":4},
		"labels":{"tier":"gpu"},"taints":[{"key":"gpu","effect":"NoSchedule"}],"tags":{"team":"ml"},"mode":"system"}}`, "If-Match: "+`"`+gw.ResourceVersion+`"`))
	if len(d.Plan.Changes) != 5 {
		t.Fatalf("dry-run PUT: %+v", d.Plan)
	}
	dryRun(a.expect(200, oaOwner, "PUT", gp+"?dry_run=true", `{"spec":null}`))
	// A change AKS makes only with a new pool is a 400 naming the field;
	// its dry run is the plan with the replace row, and the refusal.
	r = a.expect(400, oaOwner, "PATCH", gp, `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`)
	var e ErrorBody
	r.decode(t, &e)
	if len(e.Error.Fields) != 1 || e.Error.Fields[0].Field != "spec.platform.azure.vmSize" {
		t.Fatalf("vmSize change: %s", clip(r.body))
	}
	d = dryRun(a.expect(200, oaOwner, "PATCH", gp+"?dry_run=true", `{"spec":{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}}`))
	if len(d.Plan.Changes) != 1 || d.Plan.Changes[0].Class != kpool.UpdateReplace || d.Refused == nil || d.Refused.Code != kpool.CodeValidation ||
		len(d.Refused.Fields) != 1 || d.Refused.Fields[0].Field != "spec.platform.azure.vmSize" {
		t.Fatalf("vmSize change, dry run: %+v", d)
	}
	a.expect(400, oaOwner, "PUT", gp, `{"spec":{"zones":["2"]}}`)
	r = a.expect(200, oaOwner, "GET", gp, "")
	var still kpool.NodePool
	r.decode(t, &still)
	if still.Generation != 1 || still.ResourceVersion != gw.ResourceVersion || still.Spec.Count() != 2 {
		t.Fatalf("dry runs changed the pool: %s", clip(r.body))
	}
	// What Civo cannot do at all is a 501; a new size needs a new pool.
	for _, c := range []struct{ method, query string }{{"PATCH", ""}, {"PUT", ""}, {"PATCH", "?dry_run=true"}} {
		r = a.expect(501, oaOwner, c.method, "/api/v1/nodepools/"+pools["small"].ID+c.query, `{"spec":{"kubernetesVersion":"1.31"}}`)
		if !strings.Contains(string(r.body), "spec.kubernetesVersion") {
			t.Fatalf("civo version change: %s", clip(r.body))
		}
	}
	// A report without metadata.exists says nothing of it: the pool may
	// exist, and a new size still needs a new pool.
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+pools["small"].ID+"/status", `{"controller_name":"inventory","observed_generation":1}`)
	a.expect(400, oaOwner, "PUT", "/api/v1/nodepools/"+pools["small"].ID, `{"spec":{"platform":{"civo":{"size":"g4s.kube.large"}}}}`)
	a.expect(501, oaOwner, "POST", "/api/v1/clusters/"+clusters["civo"].ID+"/nodepools?dry_run=true",
		`{"name":"zoned","spec":{"platform":{"civo":{"size":"g4s.kube.medium"}},"zones":["1"]}}`)

	// ---- status ----
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID+"/status", "")
	report := func(gen int, conditions string) string {
		return fmt.Sprintf(`{"controller_name":"gcp-nodepool-controller","observed_generation":%d,"conditions":%s,
			"metadata":{"platform":"gcp","region":"us-central1","active_nodes":3,"desired_nodes":3}}`, gen, conditions)
	}
	r = a.expect(200, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	var now kpool.NodePool
	r.decode(t, &now)
	ready := `[{"type":"Ready","status":"True","lastTransitionTime":"2025-10-17T10:30:00Z","reason":"NodesReady","message":"All nodes are ready"}]`
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(int(now.Generation), ready))
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", `{"controller_name":"drift-watcher","observed_generation":1}`)
	r = a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(1, "[]"))
	if !strings.Contains(r.header.Get("Warning"), "ignored") {
		t.Fatalf("a stale report has no Warning: %v", r.header)
	}
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+pools["workers"].ID+"/status",
		`{"controller_name":"aws-nodegroup-controller","observed_generation":1,"conditions":[{"type":"Ready","status":"False","reason":"Provisioning"},{"type":"Progressing","status":"True"}],"metadata":null}`)
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+pools["small"].ID+"/status",
		`{"controller_name":"civo-controller","observed_generation":1,"conditions":[{"type":"Supported","status":"False","reason":"NoCapacity","message":"no capacity in LON1"}]}`)
	a.expect(200, oaController, "GET", "/api/v1/nodepools/"+gpu.ID+"/status", "")
	a.expect(400, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(99, "[]"))
	a.expect(403, oaOwner, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status", report(1, "[]"))

	// ---- placement ----
	r = a.expect(200, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/placements", `{
		"manifests": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\n  annotations: {kompox.dev/pool: gpu}\nspec:\n  replicas: 9\n  template:\n    spec:\n      containers: [{name: t, image: t:1}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: trainer}\n",
		"zone": "us-central1-b", "app": {"pool": "quiet"}, "default_pool": "", "no_tolerations": false}`)
	var placed placement.Result
	r.decode(t, &placed)
	if placed.Placed != 1 || !strings.Contains(placed.Manifests, "key: nvidia.com/gpu") ||
		!strings.Contains(placed.Manifests, "topology.kubernetes.io/zone: us-central1-b") ||
		!strings.HasSuffix(placed.Manifests, "---\napiVersion: v1\nkind: Service\nmetadata: {name: trainer}\n") || len(placed.Warnings) == 0 {
		t.Errorf("placement: %s", clip(r.body))
	}
	zr := a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+gke.ID+"/zonal-nodepools",
		`{"name":"zonal","spec":{"platform":{"gcp":{"machineType":"e2-small"}},"nodeCount":1,"zones":["1","2"]}}`)
	var zl NodePoolList
	zr.decode(t, &zl)
	if len(zl.NodePools) != 2 || zl.NodePools[0].Name != "zonal-1" || zl.NodePools[1].Spec.PlacementPool != "zonal" || len(zl.NodePools[1].Spec.Zones) != 1 {
		t.Errorf("zonal pools: %+v", zl.NodePools)
	}
	a.expect(200, oaAdmin, "POST", "/api/v1/clusters/"+gke.ID+"/placements", `{"manifests": "{\"kind\": \"ConfigMap\", \"apiVersion\": \"v1\"}", "pools": ["gpu", "quiet"], "zones": ["1"]}`)
	oaImports(t, a, svc, gke.ID)

	// ---- deletes ----
	a.expect(204, oaOwner, "DELETE", "/api/v1/nodepools/"+pools["quiet"].ID, "")
	a.expect(409, oaOwner, "DELETE", "/api/v1/nodepools/"+gpu.ID, "", `If-Match: "0000000000000000"`)
	if d := dryRun(a.expect(200, oaOwner, "DELETE", "/api/v1/nodepools/"+gpu.ID+"?dry_run=true", "")); d.Gone || d.NodePool == nil ||
		d.NodePool.DeletionTimestamp == nil || d.NodePool.Status.Phase != kpool.PhaseDeleting {
		t.Fatalf("dry-run delete of a reported pool: %+v", d)
	}
	r = a.expect(202, oaOwner, "DELETE", "/api/v1/nodepools/"+gpu.ID, "")
	var deleting kpool.NodePool
	r.decode(t, &deleting)
	if deleting.DeletionTimestamp == nil || deleting.Status.Phase != kpool.PhaseDeleting {
		t.Fatalf("deleting pool: %s", clip(r.body))
	}
	a.expect(409, oaOwner, "PATCH", "/api/v1/nodepools/"+gpu.ID, `{"spec":{"nodeCount":1}}`)
	a.expect(200, oaOwner, "GET", "/api/v1/nodepools?status=Deleting", "")
	deleted := `[{"type":"Deleted","status":"True","reason":"DeletedAtProvider"}]`
	a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status",
		`{"controller_name":"gcp-nodepool-controller","observed_generation":`+fmt.Sprint(now.Generation)+`,"conditions":`+deleted+`}`)
	r = a.expect(200, oaController, "PUT", "/api/v1/nodepools/"+gpu.ID+"/status",
		`{"controller_name":"drift-watcher","observed_generation":1,"conditions":`+deleted+`}`)
	var final service.StatusDocument
	r.decode(t, &final)
	if !final.Deleted {
		t.Fatalf("final report: %s", clip(r.body))
	}
	a.expect(404, oaOwner, "GET", "/api/v1/nodepools/"+gpu.ID, "")
	a.expect(409, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID, "")
	a.expect(409, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID+"?dry_run=true", "")
	if d := dryRun(a.expect(200, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID+"?force=true&dry_run=true", "")); d.Gone || d.Cluster == nil ||
		d.Cluster.Status.Phase != kpool.ClusterDeleting {
		t.Fatalf("dry-run forced delete: %+v", d)
	}
	r = a.expect(202, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["eks"].ID+"?force=true", "")
	var dc kpool.Cluster
	r.decode(t, &dc)
	if dc.DeletionTimestamp == nil || dc.Status.Phase != kpool.ClusterDeleting {
		t.Fatalf("deleting cluster: %s", clip(r.body))
	}
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+clusters["eks"].ID, "")
	a.expect(409, oaOwner, "PATCH", "/api/v1/clusters/"+clusters["eks"].ID, `{"spec":{"endpoint":"https://eks.example.com"}}`)
	a.expect(409, oaOwner, "POST", "/api/v1/nodepools", `{"name":"late","cluster_id":"`+clusters["eks"].ID+`","spec":{"platform":{"aws":{"instanceType":"m5.large"}}}}`)
	a.expect(204, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["aks"].ID+"?force=1", "")
	a.expect(204, oaOwner, "DELETE", "/api/v1/clusters/"+clusters["lab"].ID+"?force=false", "", "If-Match: *")

	// ---- the audit trail of all the above ----
	var events EventList
	r = a.expect(200, oaOwner, "GET", "/api/v1/events?limit=3&type=nodepool.", "")
	r.decode(t, &events)
	if len(events.Events) != 3 || events.Next == "" {
		t.Errorf("events: %s", r.body)
	}
	a.expect(200, oaOwner, "GET", "/api/v1/events?limit=3&type=nodepool.&after="+events.Next, "")

	// ---- errors ----
	for _, c := range []struct {
		status            int
		who, method, path string
		body              string
		headers           []string
	}{
		{400, oaOwner, "GET", "/api/v1/clusters?limit=0", "", nil},
		{400, oaOwner, "GET", "/api/v1/events?cluster_id=prod", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters?cursor=x", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "?verbose=1", "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools?status=Running", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools?limit=1&limit=2", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools?cluster_id=prod", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID + "?x=1", "", nil},
		{400, oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status?x=1", "", nil},
		{400, oaOwner, "POST", "/api/v1/clusters", `{"name":"Bad Name","spec":{"platform":{"type":"gcp"}}}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{"name":"x","spec":{"replicas":3}}`, nil},
		{400, oaOwner, "POST", "/api/v1/nodepools", `{"name":"x","spec":{"platform":{"gcp":{"machineType":"e2-small"}}}}`, nil},
		{400, oaOwner, "PUT", "/api/v1/clusters/" + gke.ID, `{"name":"renamed"}`, nil},
		{400, oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID, `{"spec":{"platform":{"type":"aws"}}}`, nil},
		{400, oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{"spec":{"nodeCount":"six"}}`, nil},
		{400, oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{"spec":{"nodeCount":0}}`, nil},
		{400, oaOwner, "DELETE", "/api/v1/clusters/" + gke.ID + "?force=maybe", "", nil},
		{400, oaOwner, "DELETE", "/api/v1/nodepools/" + pools["small"].ID + "?force=maybe", "", nil},
		{403, oaOwner, "DELETE", "/api/v1/nodepools/" + pools["small"].ID + "?force=true", "", nil},
		{400, oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{"controller_name":"Bad_Name"}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {containers: []}", "pool": "nope"}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": ""}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"nozones","spec":{"platform":{"gcp":{"machineType":"e2-small"}}}}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "x", "tolerate": true}`, nil},
		{401, "", "GET", "/api/v1/clusters", "", nil},
		{401, "", "GET", "/api/v1/events", "", nil},
		{401, "Joe <joe@example.com>", "POST", "/api/v1/clusters", `{}`, nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID, "", nil},
		{401, "", "PUT", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{401, "", "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{401, "", "DELETE", "/api/v1/clusters/" + gke.ID, "", nil},
		{401, "", "GET", "/api/v1/clusters/" + gke.ID + "/nodepools", "", nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{}`, nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{}`, nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{}`, nil},
		{401, "", "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{}`, nil},
		{401, "", "GET", "/api/v1/nodepools", "", nil},
		{401, "nobody", "POST", "/api/v1/nodepools", `{}`, nil},
		{401, "", "GET", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{401, "", "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{401, "", "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{401, "", "DELETE", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{401, "", "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status", "", nil},
		{401, "", "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{}`, nil},
		{403, oaController, "POST", "/api/v1/clusters", `{"name":"x","spec":{"platform":{"type":"k3s"}}}`, nil},
		{403, oaController, "PUT", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{403, oaController, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{403, oaController, "DELETE", "/api/v1/clusters/" + gke.ID, "", nil},
		{403, oaController, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{"name":"x","spec":{}}`, nil},
		{403, oaController, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"x","spec":{"zones":["1"]}}`, nil},
		{403, oaController, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"legacy"}`, nil},
		{403, oaController, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + gke.ID + `","spec":{}}`, nil},
		{403, oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{403, oaController, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{403, oaController, "DELETE", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{403, oaAdmin, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{"controller_name":"x"}`, nil},
		{404, oaStranger, "GET", "/api/v1/clusters/" + gke.ID, "", nil},
		{400, oaOwner, "GET", "/api/v1/clusters/prod", "", nil},
		{404, oaStranger, "PUT", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{404, oaStranger, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, nil},
		{404, oaStranger, "DELETE", "/api/v1/clusters/" + gke.ID, "", nil},
		{404, oaStranger, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools", "", nil},
		{400, oaOwner, "POST", "/api/v1/clusters/prod/nodepools", `{"name":"x","spec":{}}`, nil},
		{404, oaOwner, "POST", "/api/v1/clusters/7c9e6679-7425-40de-944b-e07fc1f90ae7/nodepools", `{"name":"x","spec":{}}`, nil},
		{404, oaStranger, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "kind: Pod"}`, nil},
		{404, oaStranger, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"x","spec":{"platform":{"gcp":{"machineType":"e2-small"}},"zones":["1"]}}`, nil},
		{404, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"ghost"}`, nil},
		{400, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"legacy","name":"Not A Name"}`, nil},
		{404, oaStranger, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + gke.ID + `","spec":{}}`, nil},
		{404, oaOwner, "GET", "/api/v1/nodepools/" + gpu.ID, "", nil},
		{404, oaStranger, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{404, oaStranger, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{404, oaStranger, "DELETE", "/api/v1/nodepools/" + pools["small"].ID, "", nil},
		{404, oaStranger, "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status", "", nil},
		{404, oaController, "PUT", "/api/v1/nodepools/" + gpu.ID + "/status", `{"controller_name":"x"}`, nil},
		{404, oaOwner, "GET", "/api/v2/nodepools", "", nil},
		{404, oaOwner, "GET", "/api/v1/clusters/", "", nil},
		{404, "", "GET", "/", "", nil},
		{405, oaOwner, "PATCH", "/api/v1/nodepools", `{}`, nil},
		{405, oaOwner, "DELETE", "/api/v1/clusters", "", nil},
		{405, oaOwner, "POST", "/api/v1/nodepools/" + pools["small"].ID, `{}`, nil},
		{405, oaController, "DELETE", "/api/v1/nodepools/" + pools["small"].ID + "/status", "", nil},
		{405, "", "POST", "/healthz", "", nil},
		{409, oaOwner, "POST", "/api/v1/clusters", `{"name":"gke","spec":` + clusterSpecs[0].spec + `}`, nil},
		{409, oaOwner, "POST", "/api/v1/clusters/" + clusters["civo"].ID + "/nodepools", `{"name":"small","spec":{"platform":{"civo":{"size":"g4s.kube.small"}}}}`, nil},
		{409, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"zonal","spec":{"platform":{"gcp":{"machineType":"e2-small"}},"nodeCount":1,"zones":["1"],"placementPool":"again"}}`, nil},
		{409, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"theirs","force":true}`, nil},
		{415, oaOwner, "POST", "/api/v1/clusters", `name=x`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PUT", "/api/v1/clusters/" + gke.ID, `{}`, []string{"Content-Type: application/xml"}},
		{415, oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/nodepools", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `kind: Pod`, []string{"Content-Type: application/yaml"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`, []string{"Content-Type: text/plain"}},
		{415, oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`, []string{"Content-Type: text/plain"}},
		{415, oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{}`, []string{"Content-Type: text/plain"}},
	} {
		r := a.expect(c.status, c.who, c.method, c.path, c.body, c.headers...)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code == "" || Status(e.Error.Code) != c.status {
			t.Errorf("%s %s: code %q for status %d", c.method, c.path, e.Error.Code, c.status)
		}
	}
	big := `{"name":"x","spec":{"tags":{"k":"` + strings.Repeat("v", MaxBodyBytes) + `"}}}`
	for _, c := range []struct{ who, method, path string }{
		{oaOwner, "POST", "/api/v1/clusters"},
		{oaOwner, "PUT", "/api/v1/clusters/" + gke.ID},
		{oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools"},
		{oaOwner, "POST", "/api/v1/nodepools"},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements"},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools"},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports"},
		{oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID},
		{oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID},
		{oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status"},
	} {
		a.expect(413, c.who, c.method, c.path, big)
	}
	if r := a.call(oaOwner, "HEAD", "/api/v1/clusters", ""); r.status != 200 || len(r.body) != 0 {
		t.Errorf("HEAD /api/v1/clusters: %d %q", r.status, r.body)
	}

	// ---- a store that fails (500), then a database that has gone away (503) ----
	failing := []struct{ who, method, path, body string }{
		{oaOwner, "GET", "/api/v1/clusters", ""},
		{oaOwner, "POST", "/api/v1/clusters", `{"name":"x","spec":{"platform":{"type":"k3s"}}}`},
		{oaOwner, "GET", "/api/v1/clusters/" + gke.ID, ""},
		{oaOwner, "PUT", "/api/v1/clusters/" + gke.ID, `{}`},
		{oaOwner, "PATCH", "/api/v1/clusters/" + gke.ID, `{}`},
		{oaOwner, "DELETE", "/api/v1/clusters/" + gke.ID, ""},
		{oaOwner, "GET", "/api/v1/clusters/" + gke.ID + "/nodepools", ""},
		// Valid pools: a create checks its spec against the cluster as cached,
		// so only a valid one reaches the database.
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/nodepools", `{"name":"x","spec":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":1}}`},
		{oaOwner, "GET", "/api/v1/nodepools", ""},
		{oaOwner, "POST", "/api/v1/nodepools", `{"name":"x","cluster_id":"` + gke.ID + `","spec":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":1}}`},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/placements", `{"manifests": "kind: Pod"}`},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/zonal-nodepools", `{"name":"failing","spec":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":1,"zones":["1"]}}`},
		{oaOwner, "POST", "/api/v1/clusters/" + gke.ID + "/imports", `{"providerName":"legacy","name":"failing"}`},
		{oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID, ""},
		{oaOwner, "PUT", "/api/v1/nodepools/" + pools["small"].ID, `{}`},
		{oaOwner, "PATCH", "/api/v1/nodepools/" + pools["small"].ID, `{}`},
		{oaOwner, "DELETE", "/api/v1/nodepools/" + pools["small"].ID, ""},
		{oaOwner, "GET", "/api/v1/nodepools/" + pools["small"].ID + "/status", ""},
		{oaController, "PUT", "/api/v1/nodepools/" + pools["small"].ID + "/status", `{"controller_name":"x"}`},
		{oaOwner, "GET", "/api/v1/events", ""},
	}
	// A caller past its rate (429): a second server on the same service,
	// whose limiter's clock stands still, takes one request a caller.
	lim := NewLimiter(1, 1)
	frozen := time.Now()
	lim.now = func() time.Time { return frozen }
	lsrv := httptest.NewServer(checkOpenAPIWith(t, NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil))).Limit(lim), record))
	defer lsrv.Close()
	la := &oaAPI{t: t, url: lsrv.URL}
	la.expect(200, oaOwner, "GET", "/api/v1/clusters", "")
	la.expect(200, oaController, "GET", "/api/v1/nodepools", "")
	for _, c := range failing {
		r := la.expect(429, c.who, c.method, c.path, c.body)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code != kpool.CodeRateLimited || r.header.Get("Retry-After") != "1" {
			t.Errorf("%s %s: %s (Retry-After %q)", c.method, c.path, r.body, r.header.Get("Retry-After"))
		}
	}

	broken.failing.Store(true)
	for _, c := range failing {
		r := a.expect(500, c.who, c.method, c.path, c.body)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code != kpool.CodeInternal || !strings.HasPrefix(e.Error.Details, "request id ") {
			t.Errorf("%s %s: %s", c.method, c.path, r.body)
		}
	}
	broken.failing.Store(false)
	store.Close()
	closed = true
	a.expect(503, "", "GET", "/readyz", "")
	for _, c := range failing {
		r := a.expect(503, c.who, c.method, c.path, c.body)
		var e ErrorBody
		r.decode(t, &e)
		if e.Error.Code != kpool.CodeUnavailable || r.header.Get("Retry-After") != RetryUnavailable {
			t.Errorf("%s %s: %s (Retry-After %q)", c.method, c.path, r.body, r.header.Get("Retry-After"))
		}
	}

	// ---- every documented response was seen ----
	doc, _ := loadOpenAPI(t)
	mu.Lock()
	defer mu.Unlock()
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			for code := range op.Responses.Map() {
				var status int
				if _, err := fmt.Sscan(code, &status); err != nil {
					t.Errorf("%s: response %q is not a status code", name, code)
					continue
				}
				if !seen[name][status] {
					t.Errorf("%s: the document's %d response was never exercised", name, status)
				}
			}
		}
	}
	if !seen[""][404] || !seen[""][405] {
		t.Errorf("the unknown-endpoint answers were not exercised: %v", seen[""])
	}
}

// errBroken is a store failure that is not a kpool error (a bug, a corrupt
// row): the API answers 500 INTERNAL.
var errBroken = errors.New("store broken for the test")

// brokenStore fails every read and write with errBroken while failing is set.
type brokenStore struct {
	kpool.Store
	failing atomic.Bool
}

func (b *brokenStore) Cluster(ctx context.Context, id string) (*kpool.Cluster, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.Cluster(ctx, id)
}

func (b *brokenStore) AuditEvents(ctx context.Context, f kpool.EventFilter) ([]kpool.Event, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.AuditEvents(ctx, f)
}

func (b *brokenStore) Clusters(ctx context.Context, f kpool.ClusterFilter) ([]*kpool.Cluster, int, error) {
	if b.failing.Load() {
		return nil, 0, errBroken
	}
	return b.Store.Clusters(ctx, f)
}

func (b *brokenStore) NodePool(ctx context.Context, id string) (*kpool.NodePool, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.NodePool(ctx, id)
}

func (b *brokenStore) NodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.NodePool, int, error) {
	if b.failing.Load() {
		return nil, 0, errBroken
	}
	return b.Store.NodePools(ctx, f)
}

func (b *brokenStore) RawNodePool(ctx context.Context, id string) (*kpool.RawNodePool, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.RawNodePool(ctx, id)
}

func (b *brokenStore) RawNodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.RawNodePool, int, error) {
	if b.failing.Load() {
		return nil, 0, errBroken
	}
	return b.Store.RawNodePools(ctx, f)
}

func (b *brokenStore) ControllerStatuses(ctx context.Context, poolID string) ([]kpool.ControllerStatus, error) {
	if b.failing.Load() {
		return nil, errBroken
	}
	return b.Store.ControllerStatuses(ctx, poolID)
}

func (b *brokenStore) Write(ctx context.Context, fn func(kpool.Tx) error) error {
	if b.failing.Load() {
		return errBroken
	}
	return b.Store.Write(ctx, fn)
}

func (b *brokenStore) Insert(ctx context.Context, fn func(kpool.Tx) error) error {
	if b.failing.Load() {
		return errBroken
	}
	return b.Store.Insert(ctx, fn)
}
