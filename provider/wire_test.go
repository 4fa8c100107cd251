package provider_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	"github.com/kpool/kpool/provider/providertest"
)

// credentialFor is a credential that may be sent to endpoints only.
func credentialFor(t *testing.T, endpoints ...string) *provider.Credential {
	t.Helper()
	set, err := provider.ParseCredentials([]byte(`
credentials:
  team:
    type: azure
    kind: default
    scopes: ["*"]
    endpoints: [`+strings.Join(endpoints, ", ")+`]
`), []provider.Profile{aks.Profile{}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Credential("team")
	return c
}

// counting is a transport that counts the requests it is given.
type counting struct {
	n    int
	next http.RoundTripper
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return c.next.RoundTrip(r)
}

// closing is a request body that says whether it was closed.
type closing struct {
	io.Reader
	closed bool
}

func (c *closing) Close() error { c.closed = true; return nil }

// TestWire: the wire sends a request to an origin its credential allows,
// compared on scheme, host and port, and refuses any other before the
// transport, closing the body; a token wire allows its authority alone.
func TestWire(t *testing.T) {
	ca := providertest.NewCA(t)
	api := providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {})
	other := providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {})
	cred := credentialFor(t, api.URL)
	base := &counting{next: providertest.NewClient(ca).Transport}
	send := func(rt http.RoundTripper, url string) error {
		body := &closing{Reader: strings.NewReader("{}")}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			if !body.closed {
				t.Errorf("%s: the refused request's body was left open", url)
			}
			return err
		}
		resp.Body.Close()
		return nil
	}
	wire := provider.Wire(cred, base)
	if err := send(wire, api.URL+"/x"); err != nil {
		t.Fatalf("allowed origin: %v", err)
	}
	for _, url := range []string{other.URL, "https://localhost:" + api.Port, "http://127.0.0.1:" + api.Port, "https://127.0.0.1"} {
		var rh *provider.RefusedHostError
		if err := send(wire, url+"/x"); !errors.As(err, &rh) || rh.Field() != "spec.endpoint" || rh.Credential != "team" {
			t.Errorf("%s: %v, want a refused host on spec.endpoint", url, err)
		}
	}
	token := provider.TokenWire(cred, other.URL+"/tenant/", base)
	if err := send(token, other.URL+"/tenant/oauth2/v2.0/token"); err != nil {
		t.Fatalf("the authority: %v", err)
	}
	var rh *provider.RefusedHostError
	if err := send(token, api.URL+"/token"); !errors.As(err, &rh) || rh.Field() != "spec.credential" || !rh.Token {
		t.Errorf("a token request to the API's origin: %v, want refused on spec.credential", err)
	}
	if base.n != 2 || len(api.Requests()) != 1 || len(other.Requests()) != 1 {
		t.Fatalf("the transport saw %d requests, the API %d, the authority %d; want 2, 1, 1", base.n, len(api.Requests()), len(other.Requests()))
	}
}

// TestGuardFollowsNoRedirect: a Guard over an *http.Client (as kpool dev
// and the tests give drivers, which would follow a redirect on its own)
// refuses a redirect to another origin, to an allowed one and to its own,
// sending nothing there and answering no response but the error.
func TestGuardFollowsNoRedirect(t *testing.T) {
	ca := providertest.NewCA(t)
	target := providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {})
	var self *providertest.Listener
	self = providertest.Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {
		to := map[string]string{"/other": target.URL, "/self": self.URL + "/moved"}[r.URL.Path]
		providertest.Redirect(to)(w, r)
	})
	for _, tc := range []struct{ name, path string }{
		{"to an allowed origin", "/other"},
		{"to its own origin", "/self"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(self.Requests())
			g := provider.NewGuard(credentialFor(t, self.URL, target.URL), 0, provider.RoundTripperOf(providertest.NewClient(ca)))
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, self.URL+tc.path, nil)
			req.Header.Set("Authorization", "Bearer secret-of-the-operator")
			resp, err := g.Do(req)
			var rh *provider.RefusedHostError
			if resp != nil || !errors.As(err, &rh) || rh.Status != http.StatusTemporaryRedirect || rh.From != self.URL || !provider.IsRefusedHost(err) {
				t.Fatalf("got %v, %v; want no response and a refused redirect", resp, err)
			}
			if n := len(self.Requests()) - before; n != 1 {
				t.Errorf("the endpoint got %d requests, want 1", n)
			}
		})
	}
	if got := target.Requests(); len(got) != 0 {
		t.Fatalf("the redirect's target got %v", got)
	}
}

// TestRoundTripperOf: an *http.Client gives its transport (the default
// one when it has none), nil stays nil, and another Doer is called as it
// is.
func TestRoundTripperOf(t *testing.T) {
	tr := &http.Transport{}
	if got := provider.RoundTripperOf(&http.Client{Transport: tr}); got != tr {
		t.Errorf("a client's: %v", got)
	}
	if got := provider.RoundTripperOf(&http.Client{}); got != http.DefaultTransport {
		t.Errorf("a client without a transport: %v", got)
	}
	if got := provider.RoundTripperOf(nil); got != nil {
		t.Errorf("nil: %v", got)
	}
	called := false
	rt := provider.RoundTripperOf(doer(func(*http.Request) (*http.Response, error) { called = true; return nil, errors.New("x") }))
	if _, err := rt.RoundTrip(&http.Request{}); err == nil || !called {
		t.Errorf("a Doer: %v, called %v", err, called)
	}
}

type doer func(*http.Request) (*http.Response, error)

func (d doer) Do(r *http.Request) (*http.Response, error) { return d(r) }
