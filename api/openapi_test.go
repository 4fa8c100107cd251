package api

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/service"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/placement"
	"github.com/kpool/kpool/provider/catalog"
)

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
	types := schemaTypes()
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

// schemaTypes maps each schema of openapi.yaml to the Go type it describes.
func schemaTypes() map[string]any {
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
		"UpdateStrategy":    kpool.UpdateStrategy{},
		"Replacement":       kpool.Replacement{},
		"PlacementRequest":  PlacementRequest{},
		"PlacementIntent":   placement.Intent{},
		"Placement":         placement.Result{},
		"PlacementWarning":  placement.Warning{},
	}
	// The partial specs of PUT and PATCH mirror the full ones.
	for _, name := range []string{"ClusterSpec", "ClusterPlatform", "AzureCluster", "AWSCluster", "GCPCluster", "OCICluster",
		"CivoCluster", "EmptyPlatform", "NodePoolSpec", "Autoscaling", "NodePoolPlatform", "GCPNodePool", "AWSNodePool",
		"AzureNodePool", "OCINodePool", "CivoNodePool", "UpdateStrategy"} {
		types[name+"Patch"] = types[name]
	}
	return types
}

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
