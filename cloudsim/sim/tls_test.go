package sim_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
)

func hello(text string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, text) })
}

func TestTLSServer(t *testing.T) {
	ep, caPEM, err := sim.TLSServer(hello("hello"), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if !strings.HasPrefix(ep.URL, "https://127.0.0.1:") || !bytes.Equal(caPEM, ep.CAPEM) {
		t.Fatalf("url %s", ep.URL)
	}
	resp, err := ep.Client().Get(ep.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" || resp.ProtoMajor != 1 {
		t.Fatalf("%s over %s", b, resp.Proto)
	}
	// The certificate is for localhost too, and chains to the PEM returned.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA PEM does not parse")
	}
	conn, err := tls.Dial("tcp", ep.Addr.String(), &tls.Config{RootCAs: pool, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// An untrusting client is refused.
	if _, err := http.Get(ep.URL); err == nil {
		t.Fatal("a client without the CA connected")
	}
}

// One CA signs several endpoints: a client that trusts it reaches all,
// and another CA's client none.
func TestCAServesSeveral(t *testing.T) {
	ca, err := sim.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	var eps []*sim.TLSEndpoint
	for _, text := range []string{"one", "two"} {
		ep, err := ca.Serve(hello(text), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ep.Close()
		eps = append(eps, ep)
	}
	other, _, err := sim.TLSServer(hello("other"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	client := eps[0].Client()
	for i, want := range []string{"one", "two"} {
		resp, err := client.Get(eps[i].URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Fatalf("endpoint %d said %q", i, b)
		}
	}
	if _, err := client.Get(other.URL); err == nil {
		t.Fatal("a client of one CA trusted another's endpoint")
	}
}
