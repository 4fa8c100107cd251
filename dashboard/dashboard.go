// Package dashboard is kpool's web dashboard: server-rendered pages
// (html/template) of the fleet, a cluster and a pool, kept live by
// server-sent events from the store's change feed, with a little
// JavaScript that makes every change through the JSON API (a dry run first,
// showing the plan, then the write with the resource_version the page was
// rendered at). Everything is embedded: no CDN, nothing fetched from
// elsewhere at run time.
//
// A browser signs in with an API token, kept in an HttpOnly, SameSite=Strict
// cookie (auth.SessionCookie) and never shown again; each page is rendered
// with the token's identity, as the API would answer it.
package dashboard

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/service"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the dashboard.
type Options struct {
	Service  *service.Service
	Access   *auth.Access
	Profiles *provider.Registry
	Log      *slog.Logger
	// Poll is how often the live feed reads the store's change feed
	// (default 500ms).
	Poll time.Duration
	// Admit charges a request to its caller (id, or the remote address
	// when id is nil) and answers 429 when the caller is past its rate:
	// kpool serve gives the API's (api.Server.Admit), so that pages,
	// sign-ins and live streams share the API's per-caller buckets. Nil
	// admits everything.
	Admit func(w http.ResponseWriter, r *http.Request, id *kpool.Identity) bool
	// Stream bounds the live streams; zero fields take their defaults.
	Stream StreamLimits
}

// StreamLimits bound the live streams (/live), so that no caller holds
// connections, goroutines and memory without end.
type StreamLimits struct {
	// PerIdentity is how many streams one identity may hold at once
	// (default DefaultStreamsPerIdentity); past it, 429 with Retry-After.
	PerIdentity int
	// Lifetime ends a stream (default 30m); the browser's EventSource
	// connects again by itself, after the stream's retry (2 s).
	Lifetime time.Duration
	// WriteTimeout bounds each write to a stream (default 10s): a reader
	// that stalls loses its stream rather than holding it.
	WriteTimeout time.Duration
	// Recheck is how often a stream's credential is authenticated again
	// (default 1s), so that a revoked or expired token's stream ends
	// within the token cache's time (--token-cache) and this.
	Recheck time.Duration
	// KeepAlive is how often an idle stream sends a comment (default 25s).
	KeepAlive time.Duration
}

// DefaultStreamsPerIdentity is how many live streams an identity may hold
// at once: a few browser tabs and a CLI watch or two.
const DefaultStreamsPerIdentity = 8

func (l StreamLimits) withDefaults() StreamLimits {
	if l.PerIdentity <= 0 {
		l.PerIdentity = DefaultStreamsPerIdentity
	}
	if l.Lifetime <= 0 {
		l.Lifetime = 30 * time.Minute
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = 10 * time.Second
	}
	if l.Recheck <= 0 {
		l.Recheck = time.Second
	}
	if l.KeepAlive <= 0 {
		l.KeepAlive = 25 * time.Second
	}
	return l
}

// Handler serves the dashboard. Run its live feed with Run.
type Handler struct {
	o       Options
	mux     *http.ServeMux
	tmpl    *template.Template
	live    *broadcaster
	streams *slots
	// origins refuses sign-ins and sign-outs posted from other sites.
	origins *http.CrossOriginProtection
}

// New returns the dashboard's handler.
func New(o Options) *Handler {
	if o.Poll == 0 {
		o.Poll = 500 * time.Millisecond
	}
	o.Stream = o.Stream.withDefaults()
	h := &Handler{o: o, mux: http.NewServeMux(), live: newBroadcaster(), streams: newSlots(o.Stream.PerIdentity),
		origins: http.NewCrossOriginProtection()}
	h.tmpl = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))
	static, _ := fs.Sub(staticFS, "static")
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	h.mux.HandleFunc("GET /login", h.loginForm)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.logout)
	h.mux.HandleFunc("GET /{$}", h.authed(h.fleet))
	h.mux.HandleFunc("GET /clusters/new", h.authed(h.registerForm))
	h.mux.HandleFunc("POST /clusters", h.authed(h.register))
	h.mux.HandleFunc("GET /clusters/{id}", h.authed(h.cluster))
	h.mux.HandleFunc("GET /clusters/{id}/new", h.authed(h.newPool))
	h.mux.HandleFunc("GET /clusters/{id}/place", h.authed(h.place))
	h.mux.HandleFunc("GET /clusters/{id}/logicalpools/{name}", h.authed(h.logicalPool))
	h.mux.HandleFunc("GET /nodepools/{id}", h.authed(h.pool))
	h.mux.HandleFunc("GET /live", h.authed(h.stream))
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

// cacheStatic lets browsers keep the embedded assets for an hour.
func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// render writes a page; a page's fragment (?fragment=main) is its live
// part alone, which the script swaps in when something changes.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, page string, data map[string]any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if data == nil {
		data = map[string]any{}
	}
	data["Page"] = page
	if id := identity(r); id != nil {
		data["Me"] = id.Email
	}
	name := page
	if r.URL.Query().Get("fragment") == "main" && h.tmpl.Lookup(page+"-main") != nil {
		// A page without a live part (login, errors, forms) is sent whole.
		name = page + "-main"
	}
	if err := h.tmpl.ExecuteTemplate(w, name, data); err != nil {
		h.o.Log.Error("dashboard: rendering", "page", page, "err", err)
	}
}

// fail shows an error page with the API's code and message.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := kpool.ErrorCode(err)
	status := status(code)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		h.o.Log.Error("dashboard", "path", r.URL.Path, "err", err)
		msg = "something went wrong on the server; its log says what"
	}
	w.WriteHeader(status)
	h.render(w, r, "error", map[string]any{"Code": code, "Message": msg})
}

// status is the HTTP status of an error code the dashboard shows.
func status(code string) int {
	switch code {
	case kpool.CodeNotFound:
		return http.StatusNotFound
	case kpool.CodeForbidden:
		return http.StatusForbidden
	case kpool.CodeValidation:
		return http.StatusBadRequest
	case kpool.CodeConflict:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
