package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/service"
)

func TestCheckExposure(t *testing.T) {
	for _, tc := range []struct {
		auth    string
		gateway bool
		addr    string
		ok      bool
	}{
		{auth.AuthHeader, false, "127.0.0.1:8080", true},
		{auth.AuthHeader, false, "[::1]:8080", true},
		{auth.AuthHeader, false, "0.0.0.0:8080", false},
		{auth.AuthHeader, false, "10.1.2.3:8080", false},
		{auth.AuthHeader, false, ":8080", false},
		{auth.AuthHeader, false, "localhost:8080", true},
		{auth.AuthHeader, false, "kpool.example.com:8080", false},
		{auth.AuthHeader, true, "0.0.0.0:8080", true},
		{auth.AuthToken, false, "0.0.0.0:8080", true},
	} {
		err := checkExposure(&serveFlags{auth: tc.auth, behindGateway: tc.gateway, listen: tc.addr})
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "--behind-gateway")) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

// TestServeAuthFlags: the settings that would leave kpool open or confused
// are refused before it listens.
func TestServeAuthFlags(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "kpool.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--auth", "header", "--listen", "0.0.0.0:0"}, "--behind-gateway"},
		{[]string{"serve", "--auth", "none"}, `--auth "none": use token or header`},
		{[]string{"serve", "--admins", "a@x.io"}, "--admins and --controllers apply to --auth header"},
		{[]string{"serve", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key: give both"},
		{[]string{"serve", "--auth", "header", "--controllers", "c@x.io=Bad"}, "controllers: c@x.io"},
		{[]string{"dev", "--listen", "0.0.0.0:0"}, "--behind-gateway"},
		{[]string{"serve", "--token-cache", "10m"}, "--token-cache 10m0s: give 0 (no cache) up to 1m"},
		{[]string{"serve", "--token-cache", "-1s"}, "--token-cache -1s"},
	} {
		_, _, err := execute("", append(tc.args, "--database", db)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestServeTokenTLS makes a token with kpool token create and uses it over
// HTTPS against a token-mode server; without it, or with X-User-Email, the
// server answers 401.
func TestServeTokenTLS(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "kpool.db")
	out, _, err := execute("", "token", "create", "--database", db, "--user", "alice@example.com", "--expires", "1d")
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(out)
	if !auth.LooksLikeToken(secret) {
		t.Fatalf("token create printed %q", out)
	}
	cert, key, pool := selfSigned(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	f := serveFlags{listen: "127.0.0.1:0", database: db, logFormat: "text", auth: auth.AuthToken, tlsCert: cert, tlsKey: key,
		resyncFast: time.Second, resyncSlow: time.Minute, driftInterval: time.Minute, callTimeout: time.Second}
	p, err := start(ctx, &f, catalog.Registry())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.run(ctx, ln, p.handler(api.NewServer(p.svc, p.access, p.log))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	url := p.scheme() + "://" + ln.Addr().String()
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("url %s", url)
	}
	client := func(user, token string) *api.Client {
		c := api.NewClient(url, user)
		c.Token = token
		c.HTTP.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		return c
	}
	if _, err := client("", secret).Clusters(ctx, service.ListOptions{}); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	for name, c := range map[string]*api.Client{"anonymous": client("", ""), "forged header": client("alice@example.com", "")} {
		if _, err := c.Clusters(ctx, service.ListOptions{}); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
			t.Errorf("%s: want UNAUTHORIZED, got %v", name, err)
		}
	}
	// /version is served beside /healthz, not by the dashboard, and takes
	// no token.
	if v, err := client("", "").Version(ctx); err != nil || *v != api.BuildVersion() {
		t.Errorf("GET /version without a token: %v %+v", err, v)
	}
	// Revoked on the database, the token is refused from the next call (no
	// --token-cache here: TestTokenCache has the cache's TTL).
	list, _, err := execute("", "token", "list", "--database", db)
	if err != nil || strings.Contains(list, secret) || !strings.Contains(list, "alice@example.com") {
		t.Fatalf("token list: %v\n%s", err, list)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	if _, _, err := execute("", "token", "revoke", id, "--database", db); err != nil {
		t.Fatal(err)
	}
	if _, err := client("", secret).Clusters(ctx, service.ListOptions{}); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Errorf("revoked: want UNAUTHORIZED, got %v", err)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (cert, key string, pool *x509.CertPool) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kpool test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return cert, key, pool
}
