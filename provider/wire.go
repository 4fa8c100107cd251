package provider

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/kpool/kpool"
)

// The wire: every HTTP request a driver sends with a credential, to its
// cloud's API or for the credential's tokens, passes Wire just before the
// transport, the first request and every one a client makes after it; and
// the clients the drivers send with follow no redirect (Client). An API
// request is charged there to the budget its context carries (Charge).
//
// A redirect is refused whatever its target, its own origin included.
// None of the five APIs answers with one, so an endpoint that does is a
// proxy or something worse; following one to another origin would carry
// the credential there (Go keeps Authorization on a redirect to the same
// host name whatever the port, and re-sends a 307's body, a token
// request's secret, to any host); a signed request (SigV4, OCI) could not
// be followed anyway, its signature covering the host and path; and a
// same-origin redirect refused costs one clear error where one followed
// could loop ten times per try.

// RefusedHostError is a request the wire did not send: to an origin its
// credential may not go to, or to where an answer redirected. It fails
// before anything is sent there, and is never retried. Drivers answer it
// as a validation error on Field.
type RefusedHostError struct {
	// Credential is the credential's name ("" for a client with none).
	Credential string
	// Host is the origin the request was for.
	Host string
	// Token is set for a request for the credential's tokens, which may go
	// to its authority only.
	Token bool
	// From and Status are set when Host is where an answer redirected:
	// the origin that gave that answer, and its status.
	From   string
	Status int
}

func (e *RefusedHostError) Error() string {
	switch {
	case e.From != "" && e.Token:
		return fmt.Sprintf("%s answered %d, a redirect to %s, which kpool does not follow: %s was not sent there; its authority must be the token endpoint's own origin",
			e.From, e.Status, e.Host, e.what())
	case e.From != "":
		return fmt.Sprintf("%s answered %d, a redirect to %s, which kpool does not follow: %s was not sent there; point spec.endpoint at the API itself",
			e.From, e.Status, e.Host, e.what())
	case e.Token:
		return fmt.Sprintf("credential %q may not be sent to %s for tokens: only to its authority", e.Credential, e.Host)
	}
	return fmt.Sprintf("credential %q may not be sent to %s: the operator has not allowed that endpoint for it", e.Credential, e.Host)
}

func (e *RefusedHostError) what() string {
	if e.Credential == "" {
		return "the request"
	}
	return fmt.Sprintf("credential %q", e.Credential)
}

// Field is the spec field at fault: the credential's authority for a
// token request, else the cluster's endpoint.
func (e *RefusedHostError) Field() string {
	if e.Token {
		return "spec.credential"
	}
	return "spec.endpoint"
}

// NonRetriable tells azcore's retry policy that trying again cannot help.
func (e *RefusedHostError) NonRetriable() {}

// IsRefusedHost reports whether err is a RefusedHostError.
func IsRefusedHost(err error) bool {
	var rh *RefusedHostError
	return errors.As(err, &rh)
}

// CheckOrigin returns a *RefusedHostError unless cred may be sent to u's
// origin.
func CheckOrigin(cred *Credential, u *url.URL) error {
	host := u.Scheme + "://" + u.Host
	if o, err := kpool.Origin(host); err != nil || !cred.AllowsOrigin(o) {
		return &RefusedHostError{Credential: cred.Name, Host: host}
	}
	return nil
}

// wire is the last round tripper before the transport: it sends a
// request only to an origin allowed.
type wire struct {
	cred *Credential
	// authority, for a token wire, is the one origin allowed (as
	// kpool.Origin has it; "" when it did not parse: none is).
	authority string
	token     bool
	base      http.RoundTripper
	refusals  *Refusals // nil: none kept
}

// Wire returns the round tripper that sends cred's API requests over base
// (nil: http.DefaultTransport): each only to an origin cred may be sent to
// (Credential.AllowsOrigin), any other failing with a *RefusedHostError,
// nothing sent. It sees every request a client sends, redirects included,
// with its credential attached.
func Wire(cred *Credential, base http.RoundTripper) http.RoundTripper {
	return &wire{cred: cred, base: base}
}

// TokenWire is Wire for the requests that get cred's access tokens: they go
// to authority's origin only (Entra ID's authority host, a service account
// key's token endpoint), and no API request may use this wire.
func TokenWire(cred *Credential, authority string, base http.RoundTripper) http.RoundTripper {
	return tokenWire(cred, authority, base, nil)
}

func tokenWire(cred *Credential, authority string, base http.RoundTripper, r *Refusals) *wire {
	o, _ := kpool.Origin(authority)
	return &wire{cred: cred, authority: o, token: true, base: base, refusals: r}
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Scheme + "://" + req.URL.Host
	o, err := kpool.Origin(host)
	allowed := err == nil && w.cred.AllowsOrigin(o)
	if w.token {
		allowed = err == nil && o == w.authority
	}
	if !allowed {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, w.refusals.note(&RefusedHostError{Credential: w.cred.Name, Host: host, Token: w.token})
	}
	if !w.token {
		// Charged to the account's budget (budget.go), retries included;
		// token requests go to the credential's authority, not to the
		// cloud's API quotas, and are exempt.
		if err := Charge(req.Context(), AccessOf(req.Method)); err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
	}
	base := w.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(req)
}

// Client returns the HTTP client a driver sends cred's API requests with:
// over rt (Wire, or a round tripper that adds the credential above it),
// following no redirect (see refuseRedirect).
func Client(cred *Credential, rt http.RoundTripper) *http.Client {
	return noRedirects(cred.Name, false, rt, nil)
}

// TokenClient returns the HTTP client of cred's token requests: over
// TokenWire(cred, authority, base), following no redirect; r (nil: none)
// records what it refuses.
func TokenClient(cred *Credential, authority string, base http.RoundTripper, r *Refusals) *http.Client {
	return noRedirects(cred.Name, true, tokenWire(cred, authority, base, r), r)
}

// NoRedirectClient is an HTTP client over transport (nil: the default)
// that follows no redirect, for requests with no credential of the
// operator's to check.
func NoRedirectClient(transport http.RoundTripper) *http.Client {
	return noRedirects("", false, transport, nil)
}

func noRedirects(cred string, token bool, rt http.RoundTripper, r *Refusals) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		return r.note(refuseRedirect(cred, token, req, via))
	}}
}

// refuseRedirect is the clients' CheckRedirect: http.Client calls it with
// the next request before sending it, so the redirect's target gets
// nothing. The client returns its error, the answer's body closed.
func refuseRedirect(cred string, token bool, req *http.Request, via []*http.Request) *RefusedHostError {
	last := via[len(via)-1].URL // http.Client calls it with one at least
	e := &RefusedHostError{Credential: cred, Host: req.URL.Scheme + "://" + req.URL.Host, Token: token, From: last.Scheme + "://" + last.Host}
	if req.Response != nil {
		e.Status = req.Response.StatusCode
	}
	return e
}

// Refusals records the requests a token client refused, for an SDK that
// keeps only the text of its transport's errors (azidentity, oauth2's JWT
// flow): the driver can still tell a refused request, never retried, from
// an outage. The zero value is ready; it is safe for concurrent use.
type Refusals struct {
	mu   sync.Mutex
	last *RefusedHostError
}

// Take returns the last refusal recorded since the last Take (nil: none,
// or r is nil).
func (r *Refusals) Take() *RefusedHostError {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.last
	r.last = nil
	return e
}

// note records e, when r is not nil, and returns it.
func (r *Refusals) note(e *RefusedHostError) *RefusedHostError {
	if r != nil {
		r.mu.Lock()
		r.last = e
		r.mu.Unlock()
	}
	return e
}

// Doer sends a request and returns its answer, as http.Client's Do does:
// azcore's policy.Transporter, the HTTP clients of the AWS and OCI SDKs.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// RoundTripperOf returns what sends a single request for d, to go under
// Wire: an *http.Client's Transport (nil: http.DefaultTransport), its
// redirect policy set aside, since the client made above the wire follows
// none; nil for nil; any other Doer called as it is, which must send the
// request it is given and no other (the wire cannot see past it).
func RoundTripperOf(d Doer) http.RoundTripper {
	switch c := d.(type) {
	case nil:
		return nil
	case *http.Client:
		if c == nil || c.Transport == nil {
			return http.DefaultTransport
		}
		return c.Transport
	}
	return doerTrip{d}
}

type doerTrip struct{ d Doer }

func (t doerTrip) RoundTrip(r *http.Request) (*http.Response, error) { return t.d.Do(r) }
