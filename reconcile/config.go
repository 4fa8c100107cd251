package reconcile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/metrics"
	"github.com/kpool/kpool/service"
)

// Config configures the controllers. Zero values take the defaults.
type Config struct {
	Service *service.Service
	Drivers *provider.Registry
	Log     *slog.Logger
	Metrics *Metrics
	// Limits per provider; DefaultLimits for the others. Every HTTP
	// request a call sends counts against its provider's rate.
	Limits map[kpool.PlatformType]Limits
	// Budgets replace, by platform, the share of each cloud account's
	// request quotas its profile gives (provider.Accounts), field by field
	// (a 0 keeps the profile's): every request is charged to its cluster's
	// account (budget.go).
	Budgets map[kpool.PlatformType]provider.Quota
	// DriftShare is the share of an account's read budget its clusters'
	// drift passes may spend (default 0.5; the rest is kept for changes):
	// past it, their drift interval stretches.
	DriftShare float64
	// MaxStretch caps how many times DriftInterval a drift interval may
	// stretch to (default 10).
	MaxStretch float64
	// Workers is how many clusters are reconciled at once (default 8).
	Workers int
	// WritesPerPass is how many creates, updates and deletes one pass
	// over a cluster sends before it gives its worker to the clusters
	// queued behind it, and is queued again at once (default 10): a
	// cluster of a hundred new pools, paced by its provider's rate, would
	// hold a worker for all of them while other clouds' clusters wait.
	WritesPerPass int
	// ResyncFast is the resync period of a cluster with a pool that is not
	// settled (default 10s).
	ResyncFast time.Duration
	// DriftInterval is the resync period of a settled cluster (default
	// 1m): one List per cluster per interval, whatever its number of pools,
	// finds what changed at the provider behind kpool's back (on EKS and
	// OKE, what their lists do not show within ceil(pools/2) intervals).
	DriftInterval time.Duration
	// ResyncSlow is how often a cluster the provider refuses as a whole
	// (permission denied, cluster missing, not implemented) is looked at
	// again: fixing it is up to a person (default 5m).
	ResyncSlow time.Duration
	// UnreachableAfter is how long a cluster's lists may fail with outages
	// (no answer, 5xx) before it is reported not Reachable and its pools
	// wait for it (default 1m); a refusal says so at once.
	UnreachableAfter time.Duration
	// CallTimeout is the deadline of every provider call (default 30s). A
	// cluster whose endpoint lets a call run out is moved to its
	// provider's slow lane until a List of it succeeds again.
	CallTimeout time.Duration
	// BackoffBase and BackoffMax bound the retry delays (1s, 5m).
	BackoffBase, BackoffMax time.Duration
	// LeaseTTL is how long a lease (a process's membership, a shard) lasts
	// unrenewed (default 10s); the other processes take over a dead
	// one's shards within that time. Leases are renewed every third of it.
	LeaseTTL time.Duration
	// Shards is how many shards the clusters are spread over (default 32):
	// every process sharing a database must have the same; Run fails when
	// another one running has not.
	Shards int
	// OnHandling, when set, is told as a pass over a cluster begins and
	// ends, and as a shard is gained and given back or lost: tests check
	// from it that no two processes handle a cluster at once.
	OnHandling func(Handling)
	// PollEvents is how often the events outbox is read even without a
	// notification (default 2s).
	PollEvents time.Duration
	// KubeClient makes the client of a cluster's Kubernetes API that its
	// node watch and label repairs use, from how its access is got
	// (default: kubeapi.Clientset).
	KubeClient func(ctx context.Context, cl *kpool.Cluster, src kubeapi.Source) (kubernetes.Interface, error)
	// Kubeconfigs resolve the clusters' spec.kubeconfig (the operator's
	// credentials): a cluster that names one is watched through it
	// instead of its driver's access.
	Kubeconfigs provider.Kubeconfigs
	// Installation is this kpool installation's id (Store.InstallationID):
	// the owner's mark on the pools its controllers create.
	Installation string
	// Holder names this process in the lease (default host-pid-random).
	Holder string
	// Clock times everything the controllers schedule or measure: resyncs,
	// retries and backoff (through the work queue), Retry-After, rate
	// limits, lease renewals, event gaps and the metrics (default the wall
	// clock; tests give a fake one and move it). Leases expire on the
	// store's own clock.
	Clock clock.WithTicker
	// Traces, when set, traces the controllers: a span per reconcile pass,
	// linked to the API requests that caused it, with the provider calls
	// and store reads and writes it makes as its children (the service's
	// store must be traced for those: store/traced). Nil traces nothing.
	Traces trace.TracerProvider
}

func (c *Config) defaults() {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	if c.Metrics.Provider == nil {
		c.Metrics.Provider = metrics.New(nil)
	}
	if c.Workers == 0 {
		c.Workers = 8
	}
	if c.WritesPerPass <= 0 {
		c.WritesPerPass = 10
	}
	if c.KubeClient == nil {
		c.KubeClient = func(ctx context.Context, _ *kpool.Cluster, src kubeapi.Source) (kubernetes.Interface, error) {
			return kubeapi.Clientset(ctx, src)
		}
	}
	if c.ResyncFast == 0 {
		c.ResyncFast = 10 * time.Second
	}
	if c.DriftInterval == 0 {
		c.DriftInterval = time.Minute
	}
	if c.DriftShare <= 0 || c.DriftShare > 1 {
		c.DriftShare = 0.5
	}
	if c.MaxStretch < 1 {
		c.MaxStretch = 10
	}
	if c.ResyncSlow == 0 {
		c.ResyncSlow = 5 * time.Minute
	}
	if c.UnreachableAfter == 0 {
		c.UnreachableAfter = time.Minute
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = 30 * time.Second
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = time.Second
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = 5 * time.Minute
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 10 * time.Second
	}
	if c.Shards <= 0 {
		c.Shards = 32
	}
	if c.PollEvents == 0 {
		c.PollEvents = 2 * time.Second
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Holder == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.Holder = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
}
