package sim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// CA is a certificate authority made at start. It signs the certificate
// of every endpoint it serves, so that one PEM is all a client of several
// emulators needs to trust.
type CA struct {
	// PEM is the certificate authority's certificate.
	PEM []byte
	// Pool holds it, for a client's tls.Config.RootCAs.
	Pool *x509.CertPool

	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes an ECDSA P-256 certificate authority valid for a year.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, certError(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{"kpool cloudsim"}, CommonName: "kpool cloudsim CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, certError(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, certError(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Pool: pool, cert: cert, key: key}, nil
}

// TLSEndpoint is an emulator served over TLS. Cloud SDKs refuse to send
// bearer tokens over plain HTTP, so the emulators are always served this way.
type TLSEndpoint struct {
	// URL is the base URL, https://host:port, with no trailing slash.
	URL string
	// Addr is the address the listener is bound to.
	Addr net.Addr
	// CAPEM is the PEM of the certificate authority that signed the
	// server's certificate; clients must trust it.
	CAPEM []byte
	// CertPool holds that certificate authority.
	CertPool *x509.CertPool

	srv  *http.Server
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// TLSServer serves h over TLS on addr with a certificate authority of its
// own, whose PEM it returns; see CA.Serve.
func TLSServer(h http.Handler, addr string) (*TLSEndpoint, []byte, error) {
	ca, err := NewCA()
	if err != nil {
		return nil, nil, err
	}
	e, err := ca.Serve(h, addr)
	if err != nil {
		return nil, nil, err
	}
	return e, ca.PEM, nil
}

// Serve serves h over TLS on addr ("127.0.0.1:0" picks a free loopback
// port). The certificate, signed by ca, is for 127.0.0.1, ::1 and
// localhost (and the listen host, or this machine's addresses when addr is
// unspecified). HTTP/2 is off, so that an emulator can drop a connection
// mid-request. A handler that hands out kubeconfigs of its clusters'
// emulated Kubernetes APIs (cloudsim/kube) has SetCA, and is told the CA
// they are to trust.
func (ca *CA) Serve(h http.Handler, addr string) (*TLSEndpoint, error) {
	if t, ok := h.(interface{ SetCA(pem []byte) }); ok {
		t.SetCA(ca.PEM)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("cloudsim: listen address %q: %w", addr, err)
	}
	cert, err := ca.sign(certHosts(host))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cloudsim: %w", err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		// An empty map turns HTTP/2 off.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	urlHost := host
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		urlHost = "127.0.0.1"
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	e := &TLSEndpoint{
		URL:      "https://" + net.JoinHostPort(urlHost, port),
		Addr:     ln.Addr(),
		CAPEM:    ca.PEM,
		CertPool: ca.Pool,
		srv:      srv,
		done:     make(chan struct{}),
	}
	go func() {
		err := srv.Serve(tls.NewListener(ln, cfg))
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		e.mu.Lock()
		e.err = err
		e.mu.Unlock()
		close(e.done)
	}()
	return e, nil
}

// Transport returns a new HTTP/1.1 transport that trusts the endpoint's
// certificate authority (see Transport).
func (e *TLSEndpoint) Transport() *http.Transport { return Transport(e.CertPool) }

// Timeouts bound each phase of a request a client of the emulators
// sends: an endpoint that accepts and never answers (a tarpit, a hung
// process) fails the request instead of holding it for ever. Header is
// above any latency an emulator is given to rehearse a bad day.
type Timeouts struct {
	Dial, Handshake, Header, Idle time.Duration
}

// DefaultTimeouts are the timeouts of Transport.
var DefaultTimeouts = Timeouts{Dial: 10 * time.Second, Handshake: 10 * time.Second, Header: 60 * time.Second, Idle: 90 * time.Second}

// Transport returns a new HTTP/1.1 transport that trusts roots, with
// DefaultTimeouts. It satisfies azcore's policy.Transporter as the
// Transport of an http.Client.
func Transport(roots *x509.CertPool) *http.Transport { return transport(roots, DefaultTimeouts) }

func transport(roots *x509.CertPool, t Timeouts) *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // the emulators are on loopback
		DialContext:           (&net.Dialer{Timeout: t.Dial, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   t.Handshake,
		ResponseHeaderTimeout: t.Header,
		ExpectContinueTimeout: time.Second,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       t.Idle,
	}
}

// Client returns a new HTTP client that trusts the endpoint's certificate
// authority. It satisfies azcore's policy.Transporter.
func (e *TLSEndpoint) Client() *http.Client { return &http.Client{Transport: e.Transport()} }

// Close stops serving at once, closing open connections.
func (e *TLSEndpoint) Close() error {
	err := e.srv.Close()
	<-e.done
	return err
}

// Shutdown stops serving gracefully, waiting for requests in flight until
// ctx ends.
func (e *TLSEndpoint) Shutdown(ctx context.Context) error {
	err := e.srv.Shutdown(ctx)
	if err != nil {
		_ = e.srv.Close()
	}
	<-e.done
	return err
}

// Done is closed when the server has stopped.
func (e *TLSEndpoint) Done() <-chan struct{} { return e.done }

// Err returns why the server stopped, nil after Close or Shutdown.
func (e *TLSEndpoint) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// certHosts returns the names and addresses the certificate covers.
func certHosts(listenHost string) []string {
	hosts := []string{"127.0.0.1", "::1", "localhost"}
	ip := net.ParseIP(listenHost)
	switch {
	case listenHost == "" || (ip != nil && ip.IsUnspecified()):
		// Listening everywhere: cover this machine's name and addresses.
		if name, err := os.Hostname(); err == nil && name != "" {
			hosts = append(hosts, name)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					hosts = append(hosts, n.IP.String())
				}
			}
		}
	default:
		hosts = append(hosts, listenHost)
	}
	return hosts
}

// sign makes a server certificate for hosts, ECDSA P-256, signed by ca.
func (ca *CA) sign(hosts []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, certError(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"kpool cloudsim"}, CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h] {
			continue
		}
		seen[h] = true
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, certError(err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}, nil
}

func certError(err error) error {
	return fmt.Errorf("cloudsim: making the TLS certificate: %w", err)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
