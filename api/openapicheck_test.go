package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
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

// clip is b for a message: cut to its first 600 bytes when longer, saying
// how long it was.
func clip(b []byte) string {
	const max = 600
	if len(b) > max {
		return string(b[:max]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return string(b)
}
