package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTPMetrics count and time the requests a Server serves (its API routes
// and whatever it serves through Logged, the dashboard), prefixed kpool_.
// A request is labelled by the ServeMux pattern that took it, never its
// raw path: ids in paths would make a series per pool.
type HTTPMetrics struct {
	Requests *prometheus.CounterVec   // by route, method, status
	Duration *prometheus.HistogramVec // by route, method, status
}

// NewHTTPMetrics registers the HTTP metrics with reg (nil: a private
// registry).
func NewHTTPMetrics(reg prometheus.Registerer) *HTTPMetrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	labels := []string{"route", "method", "status"}
	m := &HTTPMetrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_http_requests_total",
			Help: "HTTP requests by route pattern, method and status class (2xx, 4xx, 5xx)."}, labels),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kpool_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern, method and status class.", Buckets: prometheus.DefBuckets}, labels),
	}
	reg.MustRegister(m.Requests, m.Duration)
	return m
}

// Instrument makes s count and time every request it serves in m.
func (s *Server) Instrument(m *HTTPMetrics) *Server {
	s.metrics = m
	return s
}

// observe counts one request. r is the request as the mux saw it, with
// the pattern it matched.
func (m *HTTPMetrics) observe(r *http.Request, status int, took time.Duration) {
	if m == nil {
		return
	}
	route, method, class := routeLabel(r), methodOf(r.Method), statusClass(status)
	m.Requests.WithLabelValues(route, method, class).Inc()
	m.Duration.WithLabelValues(route, method, class).Observe(took.Seconds())
}

// routeLabel is the path of the pattern that took r ("GET
// /api/v1/nodepools/{id}" gives "/api/v1/nodepools/{id}"; the catch-all
// "/"), or "unmatched" when no pattern did.
func routeLabel(r *http.Request) string {
	switch route := routeOf(r.Pattern); {
	case r.Pattern == "":
		return "unmatched"
	case route == "":
		return "/"
	default:
		return route
	}
}

// methodOf is the method label: one HTTP defines, or OTHER, so that a
// caller cannot make a series per made-up method.
func methodOf(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// statusClass is 2xx, 4xx, 5xx and so on.
func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code/100) + "xx"
}
