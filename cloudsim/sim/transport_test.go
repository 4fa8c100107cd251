package sim

import (
	"net/http"
	"testing"
	"time"
)

// TestTransportTimeouts: a client of the emulators cannot be held for
// ever by an endpoint that accepts and never answers, whether it never
// finishes the TLS handshake or never sends a response header, even with
// no deadline on the request.
func TestTransportTimeouts(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	ep, err := ca.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Close() })
	t.Cleanup(func() { close(done) })

	tp, err := NewTarpit()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Close() })

	short := Timeouts{Dial: time.Second, Handshake: 100 * time.Millisecond, Header: 100 * time.Millisecond, Idle: time.Second}
	for name, url := range map[string]string{"no response header": ep.URL + "/", "no handshake": "https://" + tp.Addr() + "/"} {
		t.Run(name, func(t *testing.T) {
			client := &http.Client{Transport: transport(ca.Pool, short)}
			start := time.Now()
			resp, err := client.Get(url)
			if err == nil {
				resp.Body.Close()
				t.Fatal("the tarpit answered")
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("took %v: %v", took, err)
			}
		})
	}

	tr := Transport(ca.Pool)
	if tr.TLSHandshakeTimeout != DefaultTimeouts.Handshake || tr.ResponseHeaderTimeout != DefaultTimeouts.Header ||
		tr.TLSHandshakeTimeout <= 0 || tr.ResponseHeaderTimeout <= 0 || tr.DialContext == nil {
		t.Fatalf("Transport has no timeouts: handshake %v, header %v", tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout)
	}
	if ep.Transport().ResponseHeaderTimeout != DefaultTimeouts.Header {
		t.Fatal("TLSEndpoint.Transport does not use Transport")
	}
}
