package api

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/kube/kubetest"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// emulatedKube is a KubeProxy onto cloudsim/kube's API served on loopback
// TLS: each kpool cluster has an emulated API of its id, reached with that
// API's own kubeconfig (its CA and token), as kpool reaches a cluster with
// its own access. It records the headers each request arrived with.
type emulatedKube struct {
	api  *kube.API
	base string
	mu   sync.Mutex
	seen []http.Header
}

func newEmulatedKube(t *testing.T) *emulatedKube {
	t.Helper()
	k := &emulatedKube{}
	s := kubetest.Serve(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k.mu.Lock()
			k.seen = append(k.seen, r.Header.Clone())
			k.mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	k.api, k.base = s.API, s.URL
	return k
}

func (k *emulatedKube) KubeTransport(_ context.Context, c *kpool.Cluster) (*url.URL, http.RoundTripper, error) {
	k.api.AddCluster(c.ID)
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(k.api.Kubeconfig(k.base, c.ID, c.Name)))
	if err != nil {
		return nil, nil, err
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(cfg.Host)
	return u, rt, err
}

// requests returns the headers of the requests the API has had so far.
func (k *emulatedKube) requests() []http.Header {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]http.Header(nil), k.seen...)
}

// proxyWorld is a kpool server on loopback (not checked against the
// OpenAPI document: the proxy's paths are the cluster's) whose clusters'
// Kubernetes APIs are emulated, with a cluster of owner's whose API has
// two nodes; it returns tokens of owner and of a stranger.
type proxyWorld struct {
	url      string
	http     *http.Client // trusts the server's certificate
	kube     *emulatedKube
	cluster  kpool.Cluster
	owner    string // owner's token
	stranger string // a token of someone who cannot see the cluster
	svc      *service.Service
	// logged receives the server's log records (the access log).
	logged chan slog.Record
}

// recordsTo is a slog.Handler that passes each record to a channel (and
// drops it when nobody reads).
type recordsTo chan slog.Record

func (c recordsTo) Enabled(context.Context, slog.Level) bool { return true }
func (c recordsTo) Handle(_ context.Context, r slog.Record) error {
	select {
	case c <- r.Clone():
	default:
	}
	return nil
}
func (c recordsTo) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c recordsTo) WithGroup(string) slog.Handler      { return c }

func newProxyWorld(t *testing.T) *proxyWorld {
	t.Helper()
	access, err := auth.NewAccess([]string{admin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := testdb.SQLite(t)
	ts := st.(kpool.TokenStore)
	access.WithTokens(ts)
	svc := service.New(st, catalog.Registry())
	k := newEmulatedKube(t)
	svc.Nodes, svc.Kube = staticNodes{}, k
	logged := make(chan slog.Record, 64)
	h := NewServer(svc, access, slog.New(recordsTo(logged)))
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	h.KubeconfigCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	a := &testAPI{t: t, srv: srv, tokens: ts, svc: svc}
	w := &proxyWorld{url: srv.URL, http: srv.Client(), kube: k, svc: svc, cluster: a.cluster(user, "prod", gcpCluster), logged: logged}
	w.owner = strings.TrimPrefix(a.token(user), "Authorization: Bearer ")
	w.stranger = strings.TrimPrefix(a.token(other), "Authorization: Bearer ")
	k.api.AddCluster(w.cluster.ID)
	for _, name := range []string{"n2", "n1"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kompox.dev/node-pool": "web"}}}
		if _, err := k.api.SetNode(w.cluster.ID, n); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// client is a Go client of the server with token.
func (w *proxyWorld) client(token string) *Client {
	c := NewClient(w.url, "")
	c.Token, c.HTTP = token, w.http
	return c
}

// call sends method to the proxy's path under the cluster with token ("":
// none) and extra headers ("Name: value").
func (w *proxyWorld) call(t *testing.T, method, path, token string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, w.url+"/api/v1/clusters/"+w.cluster.ID+"/kube"+path, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := w.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestKubeProxyReads: a GET reaches the cluster's API with kpool's access
// (the emulated API's own token, which it checks), never the caller's
// credential or identity headers; the answer carries no trace of kpool's
// token.
func TestKubeProxyReads(t *testing.T) {
	w := newProxyWorld(t)
	resp, body := w.call(t, "GET", "/api/v1/nodes?labelSelector=kompox.dev%2Fnode-pool%3Dweb", w.owner,
		"X-User-Email: "+other, "Cookie: kpool_session=x", "Impersonate-User: system:admin", "Accept: application/json")
	if resp.StatusCode != 200 {
		t.Fatalf("GET nodes: %d %s", resp.StatusCode, body)
	}
	var l corev1.NodeList
	if err := json.Unmarshal(body, &l); err != nil || len(l.Items) != 2 || l.Items[0].Name != "n1" {
		t.Fatalf("nodes through the proxy: %v %s", err, body)
	}
	token := w.kube.api.AddCluster(w.cluster.ID)
	seen := w.kube.requests()
	if len(seen) != 1 {
		t.Fatalf("the cluster's API had %d requests, want 1", len(seen))
	}
	h := seen[0]
	if h.Get("Authorization") != "Bearer "+token {
		t.Errorf("the cluster's API was not called with kpool's access")
	}
	for _, name := range []string{"X-User-Email", "Cookie", "Impersonate-User", "X-Forwarded-For"} {
		if h.Get(name) != "" {
			t.Errorf("%s was passed on to the cluster", name)
		}
	}
	if strings.Contains(string(body), token) || strings.Contains(strings.Join(flatten(resp.Header), " "), token) {
		t.Errorf("the cluster's token reached the caller")
	}
	// The read is in the access log as any read is: path, status, caller;
	// neither token, and the query's values hidden.
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-w.logged:
			attrs := map[string]string{}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			line := fmt.Sprint(r.Message, attrs)
			if strings.Contains(line, w.owner) || strings.Contains(line, token) {
				t.Fatalf("a token is in the log: %s", line)
			}
			if r.Message != "request" || !strings.Contains(attrs["path"], "/kube/api/v1/nodes") {
				continue
			}
			if attrs["status"] != "200" || attrs["user"] != user || attrs["method"] != "GET" || !strings.HasSuffix(attrs["path"], "?labelSelector=xxxxx") {
				t.Errorf("access log: %s", line)
			}
			return
		case <-deadline:
			t.Fatal("the proxied read is not in the access log")
		}
	}
}

func flatten(h http.Header) []string {
	var out []string
	for k, vs := range h {
		out = append(out, k+": "+strings.Join(vs, ","))
	}
	return out
}

// TestKubeProxyRefuses: every method but GET is 405 saying the proxy is
// read-only; Secrets, exec and connection upgrades are 403; a caller who
// cannot see the cluster 404 and one without a credential 401; none of
// them reaches the cluster, whose nodes stay as they were.
func TestKubeProxyRefuses(t *testing.T) {
	w := newProxyWorld(t)
	for _, c := range []struct {
		method, path, token string
		headers             []string
		status              int
		says                string
	}{
		{"PATCH", "/api/v1/nodes/n1", w.owner, []string{"Content-Type: application/merge-patch+json"}, 405, "read-only"},
		{"POST", "/api/v1/nodes", w.owner, nil, 405, "read-only"},
		{"DELETE", "/api/v1/nodes/n1", w.owner, nil, 405, "read-only"},
		{"PUT", "/api/v1/nodes/n1", w.owner, nil, 405, "read-only"},
		{"POST", "/api/v1/namespaces/default/pods/p/eviction", w.owner, nil, 405, "read-only"},
		{"GET", "/api/v1/secrets", w.owner, nil, 403, "Secrets"},
		{"GET", "/api/v1/namespaces/kube-system/secrets/token?watch=true", w.owner, nil, 403, "Secrets"},
		{"GET", "/api/v1/namespaces/default/pods/p/exec?command=sh", w.owner, nil, 403, "exec"},
		{"GET", "/api/v1/nodes/n1/proxy/configz", w.owner, nil, 403, "proxy"},
		{"GET", "/api/v1/namespaces/default/pods/p/log", w.owner, []string{"Connection: Upgrade", "Upgrade: websocket"}, 403, "upgrades"},
		{"GET", "/api/v1/nodes", w.stranger, nil, 404, "not found"},
		{"GET", "/api/v1/nodes", "", nil, 401, ""},
	} {
		resp, body := w.call(t, c.method, c.path, c.token, c.headers...)
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.says) {
			t.Errorf("%s %s: %d %s, want %d saying %q", c.method, c.path, resp.StatusCode, body, c.status, c.says)
		}
		if c.status == 405 && resp.Header.Get("Allow") != "GET" {
			t.Errorf("%s %s: Allow %q", c.method, c.path, resp.Header.Get("Allow"))
		}
	}
	if n := len(w.kube.requests()); n != 0 {
		t.Errorf("the cluster's API had %d requests", n)
	}
	if n, ok := w.kube.api.Node(w.cluster.ID, "n1"); !ok || n.Spec.Unschedulable {
		t.Errorf("n1 changed: %+v", n)
	}
}

// TestKubeProxyWatch: a watch through the proxy is streamed: an event the
// cluster's API sends after the watch began reaches the caller while the
// watch is open.
func TestKubeProxyWatch(t *testing.T) {
	w := newProxyWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", w.url+"/api/v1/clusters/"+w.cluster.ID+"/kube/api/v1/nodes?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+w.owner)
	resp, err := w.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() metav1.WatchEvent {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the watch ended: %v", lines.Err())
		}
		var ev metav1.WatchEvent
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", lines.Bytes(), err)
		}
		return ev
	}
	for range 2 { // the synthetic ADDED events of n1 and n2
		if ev := next(); ev.Type != "ADDED" {
			t.Fatalf("first events: %s", ev.Type)
		}
	}
	// Only now, with the first events read through the proxy, does the
	// cluster get a third node: its event must come while the watch is open.
	if _, err := w.kube.api.SetNode(w.cluster.ID, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3"}}); err != nil {
		t.Fatal(err)
	}
	ev := next()
	var n corev1.Node
	if err := json.Unmarshal(ev.Object.Raw, &n); err != nil || ev.Type != "ADDED" || n.Name != "n3" {
		t.Fatalf("the event after the watch began: %s %s %v", ev.Type, ev.Object.Raw, err)
	}
}

// TestKubePath: the part of a proxy path passed on to the cluster, kept as
// escaped; a "." or ".." segment (escaped or not) never leaves the
// cluster's prefix at its server; Secrets and the subresources that reach
// past the API server are refused wherever they sit, and nothing else.
func TestKubePath(t *testing.T) {
	const base = "/api/v1/clusters/550e8400-e29b-41d4-a716-446655440000/kube"
	for _, c := range []struct {
		path, rest string
		code       string
	}{
		{"/api/v1/nodes", "/api/v1/nodes", ""},
		{"/version", "/version", ""},
		{"/apis/apps/v1/namespaces/secrets/deployments", "/apis/apps/v1/namespaces/secrets/deployments", ""},
		{"/api/v1/namespaces/a%2Fb/pods", "/api/v1/namespaces/a%2Fb/pods", ""},
		{"/api/v1/namespaces/default/pods/web/log", "/api/v1/namespaces/default/pods/web/log", ""},
		{"/api/v1/nodes/%2e%2e/%2E%2E/other", "", kpool.CodeValidation},
		{"/api/v1/nodes/./n1", "", kpool.CodeValidation},
		{"/api/v1/secrets", "", kpool.CodeForbidden},
		{"/api/v1/namespaces/default/secrets/db", "", kpool.CodeForbidden},
		{"/api/v1/namespaces/default/services/web/proxy/admin", "", kpool.CodeForbidden},
		{"/api/v1/namespaces/default/pods/web/attach", "", kpool.CodeForbidden},
		{"/api/v1/namespaces/default/pods/web/portforward", "", kpool.CodeForbidden},
	} {
		u, err := url.Parse(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		rest, err := kubePath(u)
		if kpool.ErrorCode(err) != c.code || (c.code == "" && rest != c.rest) {
			t.Errorf("%s: %q %v, want %q %s", c.path, rest, err, c.rest, c.code)
		}
	}
}
