package reconcile

import (
	"context"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// learnFacts asks the provider what it offers the cluster (versions,
// zones, machine types: provider.FactsReader) and reports it, which the
// API then checks pools against: when the controller first reaches the
// cluster, and again once ResyncSlow has passed. A failure is logged and
// tried again a ResyncSlow later; the facts kept meanwhile age, and the
// API says so when they are too old to refuse anything.
func (r *clusterRun) learnFacts(ctx context.Context) {
	now := r.c.cfg.Clock.Now()
	if !r.st.factsAt.IsZero() && now.Sub(r.st.factsAt) < r.c.cfg.ResyncSlow {
		return
	}
	fr, ok := provider.As[provider.FactsReader](r.d)
	if !ok {
		return
	}
	r.st.factsAt = now
	f, err := fr.ClusterFacts(ctx, r.cl)
	switch {
	case err != nil:
		r.c.cfg.Log.Warn("cluster facts not learnt", append(r.logAttrs(), "err", err)...)
		return
	case f == nil:
		return // the provider offers no catalogue
	}
	err = r.c.cfg.Service.ReportClusterFacts(kpool.WithIdentity(ctx, Identity), r.cl.ID, f)
	if err != nil && !kpool.IsNotFound(err) {
		r.c.cfg.Log.Warn("cluster facts not stored", append(r.logAttrs(), "err", err)...)
		return
	}
	r.c.cfg.Log.Debug("cluster facts learnt", append(r.logAttrs(), "machine_types", len(f.MachineTypes), "zones", len(f.Zones), "versions", len(f.PoolVersions))...)
}
