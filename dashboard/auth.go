package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
)

type ctxKey struct{}

// credKey holds the credential a request signed in with (a credential).
type credKey struct{}

// credential is what a request signs in with, kept so that a live stream
// can check it again while it runs.
type credential struct {
	authz string // an Authorization value: the caller's, or "Bearer " and the session cookie
	email string // X-User-Email, as the API takes it
}

// A refusal says how a request that did not sign in is answered.
type refusal int

const (
	toLogin      refusal = iota // no credential: the login page (401 for /live and the script)
	badSession                  // a session cookie no longer valid: cleared, then the login page
	unauthorized                // a credential refused outright: 401
)

// errDuplicateUser is a header-mode request with X-User-Email sent more
// than once: refused, whichever of them a gateway meant.
var errDuplicateUser = errors.New("sign in first: X-User-Email sent more than once")

// signIn finds the request's credential and checks it as the API would:
// an API token on /live (the CLI's watch), X-User-Email in header mode, or
// the session cookie. On failure it reports how to answer.
func (h *Handler) signIn(r *http.Request) (credential, *kpool.Identity, refusal, error) {
	if authz := r.Header.Get("Authorization"); authz != "" && r.URL.Path == "/live" {
		email, err := auth.UserHeader(r.Header.Values("X-User-Email"))
		cred := credential{authz: authz, email: email}
		if err != nil {
			return cred, nil, unauthorized, err
		}
		id, err := h.authenticate(r.Context(), cred)
		return cred, id, unauthorized, err
	}
	if email := r.Header.Get("X-User-Email"); email != "" && h.o.Access.Mode() == auth.AuthHeader {
		if _, err := auth.UserHeader(r.Header.Values("X-User-Email")); err != nil {
			return credential{}, nil, unauthorized, errDuplicateUser
		}
		// Behind a gateway that signs users in (header mode): its header
		// is the identity, as for the API.
		cred := credential{email: email}
		if id, err := h.authenticate(r.Context(), cred); err == nil {
			return cred, id, 0, nil
		}
	}
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil || c.Value == "" {
		return credential{}, nil, toLogin, errors.New("no session")
	}
	cred := credential{authz: "Bearer " + c.Value}
	id, err := h.authenticate(r.Context(), cred)
	return cred, id, badSession, err
}

func (h *Handler) authenticate(ctx context.Context, c credential) (*kpool.Identity, error) {
	return h.o.Access.Authenticate(ctx, c.authz, c.email)
}

// authed renders a page only for a signed-in caller, as the API checks
// one; no identity, no data: the login page. Every request is charged to
// its caller (its address when it has none) by the API's limiter.
func (h *Handler) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cred, id, how, err := h.signIn(r)
		if !h.admit(w, r, id) {
			return
		}
		if err != nil {
			switch how {
			case unauthorized:
				msg := "sign in first"
				if errors.Is(err, errDuplicateUser) {
					msg = err.Error()
				}
				http.Error(w, msg, http.StatusUnauthorized)
			case badSession:
				h.clearSession(w, r)
				h.toLogin(w, r)
			default:
				h.toLogin(w, r)
			}
			return
		}
		ctx := context.WithValue(kpool.WithIdentity(r.Context(), id), ctxKey{}, id)
		next(w, r.WithContext(context.WithValue(ctx, credKey{}, cred)))
	}
}

// admit charges the request to id, or to its address when id is nil,
// through Options.Admit; without one everything is admitted.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, id *kpool.Identity) bool {
	return h.o.Admit == nil || h.o.Admit(w, r, id)
}

// nextEscaper escapes what would end a query value early, so that the
// login page's next is the whole of the page asked for.
var nextEscaper = strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", "+", "%2B")

func (h *Handler) toLogin(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/live" || r.Header.Get(auth.SessionHeader) != "" {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, "/login?next="+nextEscaper.Replace(safeNext(r.URL.RequestURI())), http.StatusSeeOther)
}

// safeNext keeps a redirect target on this site: a path (with a query)
// that starts with a single slash. Anything a browser might read as
// another origin is "/": a scheme or host, "//" anywhere, a backslash
// (browsers take it for a slash), a control character (browsers drop tabs
// and newlines from URLs, so "/\t/evil.example" becomes "//evil.example"),
// in the value or in its decoded path.
func safeNext(p string) string {
	if !strings.HasPrefix(p, "/") || !plainPath(p) {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.Fragment != "" ||
		!strings.HasPrefix(u.Path, "/") || !plainPath(u.Path) {
		return "/"
	}
	return p
}

// plainPath reports whether s is valid UTF-8 without control characters,
// backslashes or "//".
func plainPath(s string) bool {
	if !utf8.ValidString(s) || strings.Contains(s, "//") || strings.ContainsRune(s, '\\') {
		return false
	}
	return strings.IndexFunc(s, unicode.IsControl) < 0
}

func identity(r *http.Request) *kpool.Identity {
	id, _ := r.Context().Value(ctxKey{}).(*kpool.Identity)
	return id
}

func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	if !h.admit(w, r, nil) {
		return
	}
	h.render(w, r, "login", map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

// sameOrigin refuses, with 403, a sign-in or sign-out another site's page
// sent (login and logout CSRF). The dashboard's forms are posted by its
// own pages, so the browser says so: Sec-Fetch-Site: same-origin (every
// current browser), or, without it, an Origin whose host is the request's.
// A request with neither header is no browser's and is let through.
func (h *Handler) sameOrigin(w http.ResponseWriter, r *http.Request) bool {
	if err := h.origins.Check(r); err != nil {
		http.Error(w, "refused: this form may only be sent from kpool's own pages", http.StatusForbidden)
		return false
	}
	return true
}

// login checks the token pasted in the form and keeps it in the session
// cookie; a wrong token shows the form again, saying so. Each attempt is
// charged to the caller's address.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !h.admit(w, r, nil) || !h.sameOrigin(w, r) {
		return
	}
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
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: token, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int((12 * time.Hour).Seconds())})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !h.admit(w, r, nil) || !h.sameOrigin(w, r) {
		return
	}
	h.clearSession(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (h *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}
