package providertest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Listener is a TLS server on 127.0.0.1 that records every request it
// gets, the headers that carry a credential apart: where a credential
// must not arrive (a redirect's target), or an endpoint that answers with
// what it was sent (an echo). Its certificate is signed by the CA it was
// made with, for 127.0.0.1, ::1 and localhost.
type Listener struct {
	// URL is https://127.0.0.1:PORT.
	URL string
	// Port is PORT.
	Port string

	mu   sync.Mutex
	seen []Request
}

// Request is one request a Listener got.
type Request struct {
	Method, Path string
	// Credentials are its headers that carry a credential, as NAME: VALUE
	// (see CredentialHeaders).
	Credentials []string
}

// NewCA returns a certificate authority for a test's listeners; a client
// that trusts its Pool reaches all of them.
func NewCA(t testing.TB) *sim.CA {
	t.Helper()
	ca, err := sim.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Listen serves answer on a loopback port of its own, with a certificate
// of ca's, recording each request before answer sees it, until the test
// ends.
func Listen(t testing.TB, ca *sim.CA, answer http.HandlerFunc) *Listener {
	t.Helper()
	l := &Listener{}
	ep, err := ca.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, Request{Method: r.Method, Path: r.URL.Path, Credentials: CredentialHeaders(r.Header)})
		l.mu.Unlock()
		answer(w, r)
	}), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Close() })
	l.URL = ep.URL
	l.Port = l.URL[strings.LastIndexByte(l.URL, ':')+1:]
	return l
}

// Requests returns the requests received so far.
func (l *Listener) Requests() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// WithCredentials counts the requests received that carried a credential.
func (l *Listener) WithCredentials() int {
	n := 0
	for _, r := range l.Requests() {
		if len(r.Credentials) > 0 {
			n++
		}
	}
	return n
}

// Secrets returns the secret parts of every credential received (see
// SecretsOf).
func (l *Listener) Secrets() []string {
	var out []string
	for _, r := range l.Requests() {
		for _, h := range r.Credentials {
			_, v, _ := strings.Cut(h, ": ")
			for _, s := range SecretsOf(v) {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// CredentialHeaders returns, as NAME: VALUE, the headers of h that carry
// a credential in any of the five clouds' ways: Authorization (a bearer
// token, an API key, a SigV4 or OCI signature), and any header whose name
// says token, key, signature, credential or cookie (X-Amz-Security-Token,
// X-Api-Key, opc-obo-token…).
func CredentialHeaders(h http.Header) []string {
	var out []string
	for name, vs := range h {
		n := strings.ToLower(name)
		if n == "authorization" || n == "proxy-authorization" || n == "cookie" || strings.Contains(n, "token") ||
			strings.Contains(n, "key") || strings.Contains(n, "signature") || strings.Contains(n, "credential") {
			for _, v := range vs {
				out = append(out, name+": "+v)
			}
		}
	}
	slices.Sort(out)
	return out
}

// signed finds the secret parts of a signature: the access key id of
// SigV4's Credential=ID/…, its Signature=HEX, OCI's signature="BASE64".
var signed = regexp.MustCompile(`(?i)\bcredential=([^/,\s]+)|\bsignature="?([^",\s]+)`)

// SecretsOf returns the secret parts of a credential header's value: a
// bearer or basic credential; the signature (and access key id) of a
// signed request; else the whole value.
func SecretsOf(v string) []string {
	if scheme, rest, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "basic")) {
		return []string{strings.TrimSpace(rest)}
	}
	var out []string
	for _, m := range signed.FindAllStringSubmatch(v, -1) {
		out = append(out, m[1]+m[2]) // one of them is empty
	}
	if len(out) == 0 {
		out = []string{v}
	}
	return out
}

// Leaked returns the secrets any 12 characters of which appear in text.
func Leaked(text string, secrets []string) []string {
	var out []string
	for _, s := range secrets {
		for i := 0; i+12 <= len(s); i++ {
			if strings.Contains(text, s[i:i+12]) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// Redirect answers every request 307 to the same path and query at to
// (an origin, or an origin and a path prefix).
func Redirect(to string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", to+r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
	}
}

// EchoMarker starts the message of Echo's answers.
const EchoMarker = "the request carried "

// Echo answers every request 400 with an error in its cloud's own shape
// (told by the path), whose message quotes the request's credential
// headers: an endpoint that reflects what it was sent, as a misbehaving
// proxy or a hostile allowed endpoint does.
func Echo(w http.ResponseWriter, r *http.Request) {
	msg := EchoMarker + strings.Join(CredentialHeaders(r.Header), "; ")
	var body any
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/subscriptions/"): // ARM
		body = map[string]any{"error": map[string]any{"code": "InvalidParameter", "message": msg}}
	case strings.HasPrefix(p, "/v1/projects/"), strings.HasPrefix(p, "/compute/"): // Google
		body = map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}
	case strings.HasPrefix(p, "/v2/"): // Civo
		body = map[string]any{"code": "parameter_invalid", "reason": msg}
	case strings.HasPrefix(p, "/clusters"): // EKS
		w.Header().Set("X-Amzn-Errortype", "InvalidParameterException")
		body = map[string]any{"message": msg}
	default: // OCI
		body = map[string]any{"code": "InvalidParameter", "message": msg}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(body)
}
