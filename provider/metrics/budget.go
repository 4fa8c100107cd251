package metrics

import (
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpool/kpool/provider"
)

// Budget is what the accounts' call budgets charged, by platform, account
// and access (read, write): requests, the ones that waited for a token and
// how long, and how much of the budget a window of useWindow used.
type Budget struct {
	Charged     *prometheus.CounterVec
	Waits       *prometheus.CounterVec
	WaitSeconds *prometheus.CounterVec
	Use         *prometheus.GaugeVec

	mu      sync.Mutex
	windows map[useKey]*useWindow
}

// UseWindow is how long a window of the use ratio lasts.
const UseWindow = 10 * time.Second

type useKey struct {
	account provider.Account
	access  provider.Access
}

type useWindow struct {
	start time.Time
	n     float64
}

func newBudget(reg prometheus.Registerer) *Budget {
	labels := []string{"platform", "account", "access"}
	b := &Budget{
		Charged: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_budget_requests_total",
			Help: "HTTP requests charged to a cloud account's call budget, by platform, account and access (read, write)."}, labels),
		Waits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_budget_waits_total",
			Help: "Requests that waited for a token of their account's budget."}, labels),
		WaitSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kpool_budget_wait_seconds_total",
			Help: "Time requests waited for a token of their account's budget."}, labels),
		Use: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kpool_budget_use_ratio",
			Help: "Requests charged to an account's budget in the last full 10s window, over what its rate allowed in it (1: all of it)."}, labels),
		windows: map[useKey]*useWindow{},
	}
	reg.MustRegister(b.Charged, b.Waits, b.WaitSeconds, b.Use)
	return b
}

// Spent counts one request charged (a ratelimit.Observer).
func (b *Budget) Spent(s provider.Spend) {
	l := []string{string(s.Account.Platform), s.Account.String(), s.Access.String()}
	b.Charged.WithLabelValues(l...).Inc()
	if s.Waited > 0 {
		b.Waits.WithLabelValues(l...).Inc()
		b.WaitSeconds.WithLabelValues(l...).Add(s.Waited.Seconds())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := useKey{s.Account, s.Access}
	w := b.windows[k]
	if w == nil {
		w = &useWindow{start: s.At}
		b.windows[k] = w
	}
	if s.At.Sub(w.start) >= UseWindow {
		ratio := 0.0
		if !math.IsInf(s.Limit, 1) && s.Limit > 0 {
			ratio = w.n / (s.Limit * UseWindow.Seconds())
		}
		if s.At.Sub(w.start) >= 2*UseWindow {
			ratio = 0 // a whole window without a request
		}
		b.Use.WithLabelValues(l...).Set(ratio)
		w.start, w.n = s.At, 0
	}
	w.n++
}
