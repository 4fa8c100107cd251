package driver

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/provider"
)

// kubeClients caches each Civo cluster's Kubernetes client, built from the
// kubeconfig Civo returned for it; a new kubeconfig builds a new one.
type kubeClients struct {
	mu sync.Mutex
	by map[string]kubeClient // key: the Civo cluster id
}

type kubeClient struct {
	kubeconfig string
	apps       appsclient.AppsV1Interface
}

// get returns the client of a cluster's kubeconfig; check is the
// server's (provider.CheckKubeServer), made before a client is built.
func (k *kubeClients) get(cluster, kubeconfig string, check func(server string) error, timeout time.Duration) (appsclient.AppsV1Interface, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.by[cluster]; ok && c.kubeconfig == kubeconfig {
		return c.apps, nil
	}
	apps, err := newKubeClient(kubeconfig, check, timeout)
	if err != nil {
		return nil, err
	}
	if k.by == nil {
		k.by = map[string]kubeClient{}
	}
	k.by[cluster] = kubeClient{kubeconfig: kubeconfig, apps: apps}
	return apps, nil
}

// kubeconfigOf reads a kubeconfig Civo returned, as client-go does (its
// current context): the server, the CA and the credentials in it, a
// bearer token or a client certificate and key. Refused: a credential
// plugin (exec or auth-provider), which would run a command; a file named
// by path (CA, certificate, key, token file), which would read kpool's
// own disk; a user and password; a server that is not an https URL.
// Nothing of the kubeconfig's content is in an error.
func kubeconfigOf(kubeconfig string) (*rest.Config, error) {
	if strings.TrimSpace(kubeconfig) == "" {
		return nil, errors.New("Civo returned no kubeconfig for the cluster")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		return nil, errors.New("the kubeconfig Civo returned could not be read as one")
	}
	tls := cfg.TLSClientConfig
	switch {
	case cfg.ExecProvider != nil || cfg.AuthProvider != nil:
		return nil, errors.New("the kubeconfig Civo returned runs a credential plugin, which kpool does not run")
	case tls.CAFile != "" || tls.CertFile != "" || tls.KeyFile != "" || cfg.BearerTokenFile != "":
		return nil, errors.New("the kubeconfig Civo returned names files, which kpool does not read")
	case cfg.Username != "" || cfg.Password != "":
		return nil, errors.New("the kubeconfig Civo returned has a user and password, which kpool does not send")
	}
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the kubeconfig Civo returned names the server %q, not an https URL", cfg.Host)
	}
	return cfg, nil
}

// newKubeClient builds client-go's typed apps client from a kubeconfig
// Civo returned (kubeconfigOf) whose server check allows, that reaches
// no other host (no proxy; every request, a redirect's included, goes to
// the server's origin only); each request gives up after timeout (0: only
// when its context ends), as the driver's tries of Civo's API do.
func newKubeClient(kubeconfig string, check func(server string) error, timeout time.Duration) (appsclient.AppsV1Interface, error) {
	cfg, err := kubeconfigOf(kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := check(cfg.Host); err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.Host)
	origin := u.Scheme + "://" + u.Host
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return &serverOnly{origin: origin, base: rt} }
	cfg.UserAgent = "kpool-civo-driver"
	// client-go's own limit (5 a second, bursts of 10) would hold a
	// reconcile pass of many pools; each pool's change is two calls.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Timeout = timeout
	return appsclient.NewForConfig(cfg)
}

// serverOnly sends a request to the kubeconfig's server's origin only.
type serverOnly struct {
	origin string
	base   http.RoundTripper
}

func (s *serverOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if o := req.URL.Scheme + "://" + req.URL.Host; !strings.EqualFold(o, s.origin) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &kubeRefusedError{host: o, server: s.origin}
	}
	return s.base.RoundTrip(req)
}

// kubeRefusedError is a request to a cluster's Kubernetes API that was
// not sent: to another origin than the kubeconfig's server.
type kubeRefusedError struct{ host, server string }

func (e *kubeRefusedError) Error() string {
	return fmt.Sprintf("a request for %s was not sent: kpool reaches only the server of the kubeconfig Civo returned (%s)", e.host, e.server)
}

// classifyKube maps an error of a cluster's Kubernetes API to a provider
// error: a conflict left after the retries, a missing autoscaler
// Deployment (Civo installs the application after it answers), an
// overloaded or unreachable server are transient; a refused token is
// permission denied; a throttled one waits.
func classifyKube(err error) error {
	reason := "the cluster autoscaler's configuration (the cluster's Kubernetes API): " + provider.FirstLine(err.Error())
	e := &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: reason, Err: err}
	var refused *kubeRefusedError
	switch {
	case errors.As(err, &refused):
		e.Kind = provider.KindPermissionDenied
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		e.Kind = provider.KindPermissionDenied
	case apierrors.IsTooManyRequests(err):
		e.Kind = provider.KindThrottled
		e.RetryAfter = throttleWait
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	case apierrors.IsNotFound(err):
		e.Reason = "Civo's cluster autoscaler is installed but its Deployment kube-system/cluster-autoscaler is not there yet: " + provider.FirstLine(err.Error())
	}
	return e
}

// checkKube checks a cluster's Kubernetes API server as the client's
// kubeServer says; a client without one sends nothing there.
func (c *Client) checkKube(server string) error {
	if c.kubeServer == nil {
		return &provider.RefusedHostError{Host: server}
	}
	return c.kubeServer(server)
}
