package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpool/kpool"
)

// kpool's read-only proxy to a cluster's Kubernetes API
// (/api/v1/clusters/{id}/kube/...): what `kpool cluster kubeconfig` points
// kubectl at. The caller authenticates as on every call; kpool reaches the
// cluster with its own access (the KubeProxy's round tripper), which the
// caller never sees.

// MaxKubeWatch is how long a proxied watch may last before it ends and
// its client (client-go's reflector, kubectl -w) starts another.
const MaxKubeWatch = 30 * time.Minute

// kubeHeaders are the request headers passed on to the cluster: what a
// read needs. Everything else (the caller's Authorization and cookies,
// Impersonate-*, forwarding headers) stays here.
var kubeHeaders = []string{"Accept", "Accept-Encoding", "Accept-Language", "User-Agent", "If-None-Match", "If-Modified-Since", "Cache-Control"}

// kubeProxy answers every method on /api/v1/clusters/{id}/kube/...: a GET
// is passed on to the cluster's API server (a watch streamed, flushed per
// event), anything else is 405.
func (s *Server) kubeProxy(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		s.kubeError(w, r, kpool.Errorf(kpool.CodeMethodNotAllowed,
			"kpool's Kubernetes API proxy is read-only: %s is not allowed, only GET (use the cluster's own credentials to change it)", r.Method))
		return
	}
	if r.Header.Get("Upgrade") != "" {
		s.kubeError(w, r, kpool.Errorf(kpool.CodeForbidden, "kpool's Kubernetes API proxy is read-only: it upgrades no connection (exec, attach, port-forward)"))
		return
	}
	id, err := kpool.RefID("id", r.PathValue("id"))
	var rest string
	if err == nil {
		rest, err = kubePath(r.URL)
	}
	if err != nil {
		s.kubeError(w, r, err)
		return
	}
	upstream, rt, err := s.svc.KubeTransport(r.Context(), id)
	if err != nil {
		s.kubeError(w, r, err)
		return
	}
	if watch, _ := strconv.ParseBool(r.URL.Query().Get("watch")); watch || strings.Contains(rest, "/watch/") {
		// A watch outlives the server's write timeout: bound it here instead.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		ctx, cancel := context.WithTimeout(r.Context(), MaxKubeWatch)
		defer cancel()
		r = r.WithContext(ctx)
	}
	p := &httputil.ReverseProxy{
		Transport:     rt,
		FlushInterval: -1,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: upstream.Scheme, Host: upstream.Host,
				Path: upstream.Path + mustUnescape(rest), RawPath: upstream.EscapedPath() + rest, RawQuery: pr.In.URL.RawQuery}
			pr.Out.Host = ""
			pr.Out.Header = http.Header{}
			for _, h := range kubeHeaders {
				if v := pr.In.Header.Values(h); len(v) > 0 {
					pr.Out.Header[h] = v
				}
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del("Set-Cookie")
			resp.Header.Del("WWW-Authenticate")
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client left, or its watch reached MaxKubeWatch
			}
			s.kubeError(w, r, kpool.Unavailable("The cluster's Kubernetes API cannot be reached", err))
		},
	}
	p.ServeHTTP(w, r)
}

// kubePath returns the part of u's path after .../kube, escaped as sent,
// refusing one with a "." or ".." segment (nothing may leave the cluster's
// API prefix at its server).
func kubePath(u *url.URL) (string, error) {
	esc := u.EscapedPath()
	i := strings.Index(esc, "/kube/")
	if i < 0 {
		return "", &kpool.Error{Code: kpool.CodeNotFound, Message: "No such endpoint", Details: "GET " + u.Path}
	}
	rest := esc[i+len("/kube"):]
	dec, err := url.PathUnescape(rest)
	if err != nil {
		return "", kpool.Invalid("path", "does not decode: %v", err)
	}
	for _, seg := range strings.Split(dec, "/") {
		if seg == "." || seg == ".." {
			return "", kpool.Invalid("path", "a Kubernetes API path has no %q segment", seg)
		}
	}
	return rest, kubeReadable(dec)
}

// kubeReadable refuses what a read through kpool's credential must not
// reach: Secrets (a cluster viewer in kpool is not one in the cluster), and
// the subresources that reach past the API server (a node's, pod's or
// service's proxy, exec, attach, port-forward).
func kubeReadable(p string) error {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		segs = segs[3:]
	default:
		return nil // discovery, /version, /openapi
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	resource, sub := "", ""
	if len(segs) > 0 {
		resource = segs[0]
	}
	if len(segs) > 2 {
		sub = segs[2]
	}
	switch {
	case resource == "secrets":
		return kpool.Errorf(kpool.CodeForbidden, "kpool's Kubernetes API proxy does not read Secrets: use the cluster's own credentials")
	case sub == "proxy" || sub == "exec" || sub == "attach" || sub == "portforward":
		return kpool.Errorf(kpool.CodeForbidden, "kpool's Kubernetes API proxy does not pass %s requests on: use the cluster's own credentials", sub)
	}
	return nil
}

func mustUnescape(p string) string {
	s, err := url.PathUnescape(p)
	if err != nil {
		return p // kubePath checked it
	}
	return s
}

// kubeReasons are the Kubernetes reasons of the proxy's own answers.
var kubeReasons = map[string]metav1.StatusReason{
	kpool.CodeValidation: metav1.StatusReasonBadRequest, kpool.CodeForbidden: metav1.StatusReasonForbidden,
	kpool.CodeNotFound: metav1.StatusReasonNotFound, kpool.CodeMethodNotAllowed: metav1.StatusReasonMethodNotAllowed,
	kpool.CodeUnavailable: metav1.StatusReasonServiceUnavailable, kpool.CodeRateLimited: metav1.StatusReasonTooManyRequests,
}

// kubeError answers the proxy's own refusals as the API server answers
// errors, a metav1.Status, so that kubectl prints kpool's message; an
// error that is not kpool's is answered (and logged) as writeError does.
func (s *Server) kubeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *kpool.Error
	if !errors.As(err, &e) {
		s.writeError(w, r, err)
		return
	}
	if e.Code == kpool.CodeUnavailable {
		id, _ := r.Context().Value(requestIDKey).(string)
		s.log.Warn("unavailable", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", RetryUnavailable)
	}
	msg := e.Message
	if e.Details != "" {
		msg += ": " + e.Details
	}
	code := Status(e.Code)
	writeJSON(w, code, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Message: msg, Reason: kubeReasons[e.Code], Code: int32(code)})
}
