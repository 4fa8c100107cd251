package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// newMetrics is the registry a kpool process serves on /metrics: the Go
// runtime's and the process's, kpool_build_info, the fleet's pools and
// clusters read from st at each scrape, and the API's requests (the
// returned HTTPMetrics; the controllers' metrics join it in start). Each
// of platforms has its fleet series from the start, at 0.
func newMetrics(st kpool.Store, platforms []kpool.PlatformType, log *slog.Logger) (*prometheus.Registry, *api.HTTPMetrics) {
	m := prometheus.NewRegistry()
	m.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	v := api.BuildVersion()
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "kpool_build_info",
		Help:        "Always 1: the kpool binary's module version, VCS revision and Go version, as kpool version prints them.",
		ConstLabels: prometheus.Labels{"version": v.Version, "revision": v.Commit, "goversion": v.Go}})
	info.Set(1)
	m.MustRegister(info, &fleetCollector{store: st, platforms: platforms, log: log, timeout: 5 * time.Second})
	return m, api.NewHTTPMetrics(m)
}

var (
	poolsDesc = prometheus.NewDesc("kpool_nodepools",
		"Node pools by provider, phase and health, from the store's counters at scrape time.", []string{"provider", "phase", "health"}, nil)
	clustersDesc = prometheus.NewDesc("kpool_clusters",
		"Clusters by provider, condition (Reachable), its status (True, False, or Unknown while no controller has looked) and, for False, its reason (NoCredential, EndpointUnreachable, ...).",
		[]string{"provider", "condition", "status", "reason"}, nil)
	fleetUpDesc = prometheus.NewDesc("kpool_fleet_scrape_success",
		"1 when kpool_nodepools and kpool_clusters could be read from the store at this scrape, 0 when not (they are then absent).", nil, nil)
)

// fleetCollector reads the fleet at each scrape: the clusters (a page of
// 500 at a time) and the pools' counts per cluster and phase, which the
// store keeps with every write. Its cost follows the clusters, never the
// pools. Every process serving /metrics reports the same fleet, so a
// rule over several replicas takes max(), not sum().
type fleetCollector struct {
	store     kpool.Store
	platforms []kpool.PlatformType
	log       *slog.Logger
	timeout   time.Duration
}

func (f *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolsDesc
	ch <- clustersDesc
	ch <- fleetUpDesc
}

func (f *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	fl, err := readFleet(ctx, f.store, f.platforms)
	if err != nil {
		f.log.Warn("metrics: reading the fleet", "err", err)
		ch <- prometheus.MustNewConstMetric(fleetUpDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(fleetUpDesc, prometheus.GaugeValue, 1)
	for k, n := range fl.pools {
		ch <- prometheus.MustNewConstMetric(poolsDesc, prometheus.GaugeValue, float64(n), k.provider, string(k.phase), string(kpool.HealthOf(k.phase)))
	}
	for k, n := range fl.clusters {
		ch <- prometheus.MustNewConstMetric(clustersDesc, prometheus.GaugeValue, float64(n), k.provider, k.condition, k.status, k.reason)
	}
}

type poolKey struct {
	provider string
	phase    kpool.Phase
}

type clusterKey struct {
	provider, condition, status string
	reason                      string // of a False status; "" otherwise
}

// fleet is what one scrape counts. Every phase of a known provider, and
// every status of Reachable (False without a reason), has a series (0
// when none), so that a rule sees a count drop to 0 rather than vanish.
type fleet struct {
	pools    map[poolKey]int
	clusters map[clusterKey]int
}

// readFleet counts the clusters by provider and Reachable, and the pools
// by provider and phase; platforms have their series at 0.
func readFleet(ctx context.Context, st kpool.Store, platforms []kpool.PlatformType) (*fleet, error) {
	fl := &fleet{pools: map[poolKey]int{}, clusters: map[clusterKey]int{}}
	for _, p := range platforms {
		fl.zeros(string(p))
	}
	providerOf := map[string]string{}
	page := kpool.Page{Limit: 500}
	for {
		cs, _, err := st.Clusters(ctx, kpool.ClusterFilter{Page: page})
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			p := string(c.Spec.Platform.Type)
			providerOf[c.ID] = p
			fl.zeros(p)
			fl.countCluster(p, c.Status)
		}
		if len(cs) < page.Limit {
			break
		}
		last := cs[len(cs)-1]
		page.After = &kpool.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	counts, err := st.NodePoolCounts(ctx, kpool.NodePoolFilter{})
	if err != nil {
		return nil, err
	}
	for _, n := range counts {
		p, ok := providerOf[n.ClusterID]
		if !ok {
			p = "unknown" // a cluster registered since its page was read
		}
		fl.pools[poolKey{p, n.Phase}] += n.N
	}
	return fl, nil
}

// zeros gives provider p's series their zeros.
func (fl *fleet) zeros(p string) {
	for _, ph := range kpool.Phases {
		fl.pools[poolKey{p, ph}] += 0
	}
	for _, s := range []string{kpool.ConditionTrue, kpool.ConditionFalse, kpool.ConditionUnknown} {
		fl.clusters[clusterKey{p, kpool.ConditionReachable, s, ""}] += 0
	}
}

// countCluster counts one cluster of provider p by its Reachable
// condition.
func (fl *fleet) countCluster(p string, st kpool.ClusterStatus) {
	k := clusterKey{p, kpool.ConditionReachable, kpool.ConditionUnknown, ""}
	if c := st.Condition(kpool.ConditionReachable); c != nil {
		k.status = c.Status
		if c.Status == kpool.ConditionFalse {
			k.reason = c.Reason
		}
	}
	fl.clusters[k]++
}
