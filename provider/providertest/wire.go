package providertest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/internal/scrub"
	"github.com/kpool/kpool/provider"
)

// WireHarness makes the driver under test for RunWire: its Driver, whose
// credential may be sent to endpoint (and the cloud's public endpoints)
// only, sending over client; its Cluster, at endpoint; and its Spec. client
// trusts the test's servers and, like the clients kpool dev and the tests
// give drivers, follows redirects unless the driver stops it.
type WireHarness func(t *testing.T, endpoint string, client *http.Client) *Harness

// RunWire checks what a driver sends to an allowed endpoint that
// misbehaves (issue 27, N2 and N8):
//
//   - Redirects: an endpoint that answers 307 to another origin (the same
//     host on another port, another host name) or to itself; the driver
//     follows none: the target gets no request at all, so no credential,
//     and each operation fails at once (one request, no retry) with a
//     validation error on spec.endpoint.
//   - Echo: an endpoint that answers with the request's credentials in its
//     error; the driver's error may quote them, but once scrubbed (as the
//     service scrubs a report before storing it) it holds none of them.
func RunWire(t *testing.T, newHarness WireHarness) {
	t.Run("Redirects", func(t *testing.T) { testRedirects(t, newHarness) })
	t.Run("Echo", func(t *testing.T) { testEcho(t, newHarness) })
}

// NewClient returns a client that trusts ca and, as an http.Client does,
// follows redirects.
func NewClient(ca *sim.CA) *http.Client { return &http.Client{Transport: sim.Transport(ca.Pool)} }

func testRedirects(t *testing.T, newHarness WireHarness) {
	ca := NewCA(t)
	target := Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	})
	for _, tc := range []struct {
		name, to string // to: the redirect's origin; "" is the endpoint's own
	}{
		{"same host, another port", target.URL},
		{"another host name", "https://localhost:" + target.Port},
		{"same origin", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(target.Requests())
			var ep *Listener
			ep = Listen(t, ca, func(w http.ResponseWriter, r *http.Request) {
				to := tc.to
				if to == "" {
					to = ep.URL + "/moved"
				}
				Redirect(to)(w, r)
			})
			h := newHarness(t, ep.URL, NewClient(ca))
			errs := operations(h)
			for op, err := range errs {
				var pe *provider.Error
				if !asError(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.endpoint" || provider.Retryable(err) {
					t.Errorf("%s after a redirect: %v; want a validation error on spec.endpoint, never retried", op, err)
				}
			}
			got := target.Requests()[before:]
			if len(got) != 0 {
				n := 0
				for _, r := range got {
					if len(r.Credentials) > 0 {
						n++
					}
				}
				t.Errorf("the redirect's target got %d requests, %d of them with a credential (%v); want none", len(got), n, got[0])
			}
			if n := len(ep.Requests()); n != len(errs) {
				t.Errorf("the endpoint got %d requests for %d operations; want one each: a redirect is neither followed nor retried", n, len(errs))
			}
		})
	}
}

// operations runs each operation of the driver once on its cluster.
func operations(h *Harness) map[string]error {
	s := h.Spec("web", zones(h, "1")...)
	_, list := h.Driver.NodePoolList(ctx, h.Cluster)
	_, create := h.Driver.NodePoolCreate(ctx, h.Cluster, s)
	_, update := h.Driver.NodePoolUpdate(ctx, h.Cluster, s)
	del := h.Driver.NodePoolDelete(ctx, h.Cluster, s.ProviderName)
	return map[string]error{"list": list, "create": create, "update": update, "delete": del}
}

func testEcho(t *testing.T, newHarness WireHarness) {
	ca := NewCA(t)
	echo := Listen(t, ca, Echo)
	h := newHarness(t, echo.URL, NewClient(ca))
	_, err := h.Driver.NodePoolList(ctx, h.Cluster)
	if err == nil {
		t.Fatal("an endpoint that answers 400: no error")
	}
	secrets := echo.Secrets()
	if len(secrets) == 0 {
		t.Fatalf("the endpoint got no credential (%v): nothing to check", echo.Requests())
	}
	// The driver keeps the provider's words: the echo, credentials and
	// all, is in its error (else this test proves nothing of the scrub).
	if !strings.Contains(err.Error(), EchoMarker) || len(Leaked(err.Error(), secrets)) == 0 {
		t.Fatalf("the driver's error does not quote the echo: %v", err)
	}
	if leaked := Leaked(scrub.String(err.Error()), secrets); len(leaked) > 0 {
		t.Fatalf("the scrubbed error still holds %d credentials: %s", len(leaked), scrub.String(err.Error()))
	}
}
