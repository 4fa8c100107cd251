package sim

import (
	"net/http"
	"strings"
)

// Router routes requests to Handlers by http.ServeMux's patterns
// ("GET /v1/clusters/{cluster}/pools/{pool}"; Request.HTTP.PathValue gives
// the wildcards), for a Protocol's Routes. ServeMux matches the path; the
// router then picks the handler by the exact method, so that unlike
// ServeMux's GET patterns, a route does not take HEAD unless it says so.
// Each cloud answers what it does not serve in its own words: a path no
// pattern matches goes to NotFound, a method no pattern of the path names
// to the path's pattern without a method, else to MethodNotAllowed. Slashes
// at either end of a path are not matched ("/v1/pools/" is "/v1/pools"),
// as the emulators have always taken them.
type Router struct {
	// NotFound answers a path no pattern matches.
	NotFound Handler
	// MethodNotAllowed answers a method that no pattern of a path names,
	// when the path has no pattern without a method.
	MethodNotAllowed Handler

	mux     *http.ServeMux
	methods map[string]map[string]Handler // by path, then method ("": any other)
}

// NewRouter returns a router with no routes.
func NewRouter(notFound, methodNotAllowed Handler) *Router {
	return &Router{NotFound: notFound, MethodNotAllowed: methodNotAllowed,
		mux: http.NewServeMux(), methods: map[string]map[string]Handler{}}
}

// Handle routes the requests pattern matches to h. The pattern is
// ServeMux's without a host: "[METHOD ]/path"; without a method it takes
// the path's methods no other pattern names. It panics, as ServeMux does,
// on a pattern that conflicts with another or is registered twice.
func (rt *Router) Handle(pattern string, h Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	path = strings.TrimSpace(path)
	byMethod, known := rt.methods[path]
	if !known {
		byMethod = map[string]Handler{}
		rt.methods[path] = byMethod
		rt.mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := w.(*matched)
			for _, name := range wildcards(r.Pattern) {
				m.req.HTTP.SetPathValue(name, r.PathValue(name))
			}
			m.req.SetOperation(r.Method + " " + r.Pattern)
			m.reply = rt.byMethod(byMethod, r.Method)(m.req)
		}))
	}
	if _, dup := byMethod[method]; dup {
		panic("sim: pattern " + pattern + " is registered twice")
	}
	byMethod[method] = h
}

// byMethod is the handler of a method among a path's.
func (rt *Router) byMethod(byMethod map[string]Handler, method string) Handler {
	if h, ok := byMethod[method]; ok {
		return h
	}
	if h, ok := byMethod[""]; ok {
		return h
	}
	return rt.MethodNotAllowed
}

// Serve answers req with the handler of its route; it is a Handler, for
// Protocol.Routes.
func (rt *Router) Serve(req *Request) *Reply {
	m := &matched{req: req}
	rt.mux.ServeHTTP(m, trimmed(req.HTTP))
	if m.reply == nil {
		// No pattern matched, or ServeMux would redirect to a cleaner path,
		// which no cloud does.
		return rt.NotFound(req)
	}
	return m.reply
}

// trimmed is a shallow copy of r whose path has no slashes at its ends but
// the first, for ServeMux to match (the handlers get r, with the path's
// wildcards set).
func trimmed(r *http.Request) *http.Request {
	u := *r.URL
	u.Path = "/" + strings.Trim(u.Path, "/")
	if u.RawPath != "" {
		u.RawPath = "/" + strings.Trim(u.RawPath, "/")
	}
	out := *r
	out.URL = &u
	return &out
}

// wildcards are the names of a ServeMux pattern's wildcards.
func wildcards(pattern string) []string {
	var names []string
	for _, seg := range strings.Split(pattern, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(strings.TrimSuffix(name, "}"), "...")
			if name != "$" {
				names = append(names, name)
			}
		}
	}
	return names
}

// matched carries a request through ServeMux to the handler of its route,
// and the handler's reply back; whatever ServeMux writes itself (its 404,
// its redirects) is dropped.
type matched struct {
	req    *Request
	reply  *Reply
	header http.Header
}

func (m *matched) Header() http.Header {
	if m.header == nil {
		m.header = http.Header{}
	}
	return m.header
}

func (m *matched) Write(b []byte) (int, error) { return len(b), nil }
func (m *matched) WriteHeader(int)             {}
