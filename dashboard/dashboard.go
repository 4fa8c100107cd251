// Package dashboard is kpool's web dashboard: server-rendered pages
// (html/template) of the fleet, a cluster and a pool, kept live by
// server-sent events from the store's change feed, with a little
// JavaScript that makes every change through the JSON API (a dry run first,
// showing the plan, then the write with the resource_version the page was
// rendered at). Everything is embedded: no CDN, nothing fetched from
// elsewhere at run time.
//
// A browser signs in with an API token, kept in an HttpOnly, SameSite=Strict
// cookie (kpool.SessionCookie) and never shown again; each page is rendered
// with the token's identity, as the API would answer it.
package dashboard

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the dashboard.
type Options struct {
	Service  *kpool.Service
	Access   *kpool.Access
	Profiles *provider.Registry
	Log      *slog.Logger
	// Poll is how often the live feed reads the store's change feed
	// (default 500ms).
	Poll time.Duration
}

// Handler serves the dashboard. Run its live feed with Run.
type Handler struct {
	o    Options
	mux  *http.ServeMux
	tmpl *template.Template
	live *broadcaster
}

// New returns the dashboard's handler.
func New(o Options) *Handler {
	if o.Poll == 0 {
		o.Poll = 500 * time.Millisecond
	}
	h := &Handler{o: o, mux: http.NewServeMux(), live: newBroadcaster()}
	h.tmpl = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))
	static, _ := fs.Sub(staticFS, "static")
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	h.mux.HandleFunc("GET /login", h.loginForm)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.logout)
	h.mux.HandleFunc("GET /{$}", h.authed(h.fleet))
	h.mux.HandleFunc("GET /clusters/{id}", h.authed(h.cluster))
	h.mux.HandleFunc("GET /clusters/{id}/new", h.authed(h.newPool))
	h.mux.HandleFunc("GET /clusters/{id}/place", h.authed(h.place))
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

type ctxKey struct{}

// authed renders a page only for a signed-in caller: the session cookie's
// token, checked as the API checks it. No identity, no data: the login page.
func (h *Handler) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if authz := r.Header.Get("Authorization"); authz != "" && r.URL.Path == "/live" {
			// The CLI's watch: the live feed with an API token, as the API
			// takes it.
			email, err := kpool.UserHeader(r.Header.Values("X-User-Email"))
			var id *kpool.Identity
			if err == nil {
				id, err = h.o.Access.Authenticate(r.Context(), authz, email)
			}
			if err != nil {
				http.Error(w, "sign in first", http.StatusUnauthorized)
				return
			}
			next(w, r.WithContext(context.WithValue(kpool.WithIdentity(r.Context(), id), ctxKey{}, id)))
			return
		}
		if email := r.Header.Get("X-User-Email"); email != "" && h.o.Access.Mode() == kpool.AuthHeader {
			if _, err := kpool.UserHeader(r.Header.Values("X-User-Email")); err != nil {
				http.Error(w, "sign in first: X-User-Email sent more than once", http.StatusUnauthorized)
				return
			}
			// Behind a gateway that signs users in (header mode): its
			// header is the identity, as for the API.
			if id, err := h.o.Access.Authenticate(r.Context(), "", email); err == nil {
				next(w, r.WithContext(context.WithValue(kpool.WithIdentity(r.Context(), id), ctxKey{}, id)))
				return
			}
		}
		c, err := r.Cookie(kpool.SessionCookie)
		if err != nil || c.Value == "" {
			h.toLogin(w, r)
			return
		}
		id, err := h.o.Access.Authenticate(r.Context(), "Bearer "+c.Value, "")
		if err != nil {
			h.clearSession(w, r)
			h.toLogin(w, r)
			return
		}
		next(w, r.WithContext(context.WithValue(kpool.WithIdentity(r.Context(), id), ctxKey{}, id)))
	}
}

func (h *Handler) toLogin(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/live" || r.Header.Get(kpool.SessionHeader) != "" {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, "/login?next="+safeNext(r.URL.RequestURI()), http.StatusSeeOther)
}

// safeNext keeps a redirect target on this site.
func safeNext(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	return p
}

func identity(r *http.Request) *kpool.Identity {
	id, _ := r.Context().Value(ctxKey{}).(*kpool.Identity)
	return id
}

func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, "login", map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

// login checks the token pasted in the form and keeps it in the session
// cookie; a wrong token shows the form again, saying so.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	next := safeNext(r.PostForm.Get("next"))
	if _, err := h.o.Access.Authenticate(r.Context(), "Bearer "+token, ""); err != nil || token == "" {
		w.WriteHeader(http.StatusUnauthorized)
		h.render(w, r, "login", map[string]any{"Next": next, "Error": "That token is not valid (wrong, expired or revoked). Make one with kpool token create."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: kpool.SessionCookie, Value: token, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int((12 * time.Hour).Seconds())})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	h.clearSession(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (h *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: kpool.SessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
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
	if r.URL.Query().Get("fragment") == "main" {
		name = page + "-main"
	}
	if err := h.tmpl.ExecuteTemplate(w, name, data); err != nil {
		h.o.Log.Error("dashboard: rendering", "page", page, "err", err)
	}
}

// fail shows an error page with the API's code and message.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := kpool.ErrorCode(err)
	status := http.StatusInternalServerError
	switch code {
	case kpool.CodeNotFound:
		status = http.StatusNotFound
	case kpool.CodeForbidden:
		status = http.StatusForbidden
	case kpool.CodeValidation:
		status = http.StatusBadRequest
	}
	msg := err.Error()
	if status == http.StatusInternalServerError {
		h.o.Log.Error("dashboard", "path", r.URL.Path, "err", err)
		msg = "something went wrong on the server; its log says what"
	}
	w.WriteHeader(status)
	h.render(w, r, "error", map[string]any{"Code": code, "Message": msg})
}
