// Package kubeapi is kpool's use of client-go: a client of a cluster's
// Kubernetes API from the access its driver hands out (provider.KubeAccess),
// which sends the cluster's token to the cluster's API server only and asks
// the driver again before the token expires.
package kubeapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpool/kpool/provider"
)

// Source gets a cluster's access, as its driver's KubeAccess does.
type Source func(ctx context.Context) (*provider.KubeAccess, error)

// renewBefore is how long before its expiry a token is renewed.
const renewBefore = time.Minute

// Config returns the rest.Config of the cluster src reaches: its server
// and CA from a first access, and a transport that puts the current token
// on each request, renewing it before it expires, and refuses a request to
// any other origin (a redirect, a server moved) without sending it.
func Config(ctx context.Context, src Source) (*rest.Config, error) {
	a, err := src(ctx)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(a.Server)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
		return nil, fmt.Errorf("the cluster's API server %q is not an https URL", a.Server)
	}
	t := &tokens{src: src, cur: a, origin: strings.ToLower(u.Scheme + "://" + u.Host)}
	return &rest.Config{
		Host:            a.Server,
		TLSClientConfig: rest.TLSClientConfig{CAData: a.CA, CertData: a.ClientCert, KeyData: a.ClientKey},
		UserAgent:       "kpool",
		QPS:             20,
		Burst:           40,
		WrapTransport:   func(rt http.RoundTripper) http.RoundTripper { return &bearer{t: t, base: rt} },
	}, nil
}

// Clientset returns client-go's typed clients of the cluster src reaches.
func Clientset(ctx context.Context, src Source) (kubernetes.Interface, error) {
	cfg, err := Config(ctx, src)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// tokens holds a cluster's current access and renews it.
type tokens struct {
	src    Source
	origin string

	mu  sync.Mutex
	cur *provider.KubeAccess
}

// token returns a token valid for a while yet.
func (t *tokens) token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if exp := t.cur.Expires; !exp.IsZero() && time.Until(exp) < renewBefore {
		a, err := t.src(ctx)
		if err != nil {
			return "", err
		}
		t.cur = a
	}
	return t.cur.Token, nil
}

// bearer is the last round tripper before client-go's transport.
type bearer struct {
	t    *tokens
	base http.RoundTripper
}

// RefusedError is a request to another origin than the cluster's API
// server: it was not sent.
type RefusedError struct{ URL string }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("kpool sends a cluster's token to its API server only: %s was not sent", e.URL)
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if o := strings.ToLower(req.URL.Scheme + "://" + req.URL.Host); o != b.t.origin {
		return nil, &RefusedError{URL: req.URL.Scheme + "://" + req.URL.Host}
	}
	tok, err := b.t.token(req.Context())
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return b.base.RoundTrip(req)
}
