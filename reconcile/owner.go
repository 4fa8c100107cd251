package reconcile

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// Ownership. Every pool the controllers create carries, at the cloud, the
// owner's mark of this installation and the kpool pool (provider.Owner).
// A provider pool whose mark is not its kpool pool's (another
// installation's, or another pool's of this one: a second registration of
// the cluster, a pool abandoned and named again) is foreign: it is never
// adopted, updated or deleted, the kpool pool of its provider name says
// so (ForeignPool), and the cluster lists it (status.foreignPools). An
// unmarked pool is adopted as before marks existed, and marked by its
// next update.

// mark is the owner's mark of pool p of this installation; none when the
// controllers have no installation id (then every marked pool is foreign).
func (r *clusterRun) mark(p *kpool.NodePool) provider.Owner {
	if r.c.cfg.Installation == "" {
		return provider.Owner{}
	}
	return provider.Owner{Installation: r.c.cfg.Installation, Pool: p.ID}
}

// needsMark reports whether an update is to write the mark on a pool that
// has none (a pool adopted from before marks).
func needsMark(desired provider.PoolSpec, obs *provider.Pool) bool {
	return !desired.Owner.IsZero() && obs.Owner.IsZero()
}

// foreign reports a managed pool whose provider name another owner's pool
// holds. An observed pool is only read, whoever owns it: kpool never
// writes it (an admin's forced import makes one).
func (r *clusterRun) foreign(p *kpool.NodePool, obs *provider.Pool) bool {
	return !p.Spec.Observed() && provider.Foreign(obs, r.mark(p))
}

// foreignPool reports a pool whose provider name another owner's pool
// holds: it is not this pool, nothing is sent to the provider, and the
// pool is Failed (not retried) until its spec or the provider changes. A
// pool being deleted goes at once: nothing of it exists at the provider.
func (s *poolScope) foreignPool(ctx context.Context) (bool, error) {
	p, obs := s.p, s.obs
	// Nothing else of the provider's pool is this pool's to report.
	s.rp.conditions, s.rp.meta = nil, kpool.ReportMeta{ProviderName: p.ProviderName,
		Platform: string(s.cl.Spec.Platform.Type), Exists: ptr(false), Owner: ownerMeta(obs.Owner)}
	what := fmt.Sprintf("the %s's pool %s carries the mark of %s", s.cl.Spec.Platform.Type, p.ProviderName, obs.Owner)
	if p.Deleting() {
		s.rp.gen = p.Generation
		s.rp.set(kpool.ConditionDeleted, kpool.ConditionTrue, ReasonForeignPool,
			what+": it is another kpool's, and nothing was deleted at the provider")
		s.send(ctx)
		return false, nil
	}
	msg := what + ": another kpool owns it, so this pool neither adopts, changes nor deletes it; give this pool another name, or delete it (nothing is deleted at the provider)"
	s.failed(ctx, ReasonForeignPool, msg)
	return false, nil
}

// ownerMeta is a mark as the report's metadata shows it.
func ownerMeta(o provider.Owner) *kpool.ReportOwner {
	return &kpool.ReportOwner{Installation: o.Installation, Pool: o.Pool}
}

// markMessage says what an update that only marks a pool does.
func markMessage(o provider.Owner) string {
	return fmt.Sprintf("writing the owner's mark (%s) on a pool adopted without one", o)
}

// reportProviderPools reports the cluster's pools at the provider that are
// not its kpool pools': the foreign ones, and the unmarked ones no pool
// maps to (what an import may take; none while the cluster imports them
// itself). Nothing is written when they are as reported, nor while a pool
// of the list was not read (its mark is not known this time).
func (r *clusterRun) reportProviderPools(ctx context.Context, pools []*kpool.NodePool, observed []provider.Pool) {
	byName := make(map[string]*kpool.NodePool, len(pools))
	for _, p := range pools {
		byName[p.ProviderName] = p
		if rp := p.Status.Replacement; rp.Active() && rp.To != "" {
			byName[rp.To] = p // its successor, marked as the pool's
		}
	}
	foreign, unmarked := []kpool.ForeignPool{}, []kpool.UnmarkedPool{}
	for i := range observed {
		o := &observed[i]
		p, known := byName[o.ProviderName]
		switch {
		case unread(o):
			return
		case !o.Owner.IsZero() && (!known || provider.Foreign(o, r.mark(p))):
			foreign = append(foreign, kpool.ForeignPool{ProviderName: o.ProviderName, Installation: o.Owner.Installation,
				Pool: o.Owner.Pool, Spec: ptr(r.specOf(o))})
		case o.Owner.IsZero() && !known && !r.cl.Spec.ImportPools:
			unmarked = append(unmarked, kpool.UnmarkedPool{ProviderName: o.ProviderName, Name: o.Name, Spec: ptr(r.specOf(o))})
		}
	}
	if sameJSON(foreign, r.cl.Status.Foreign) && sameJSON(unmarked, r.cl.Status.Unmarked) {
		return
	}
	ictx := kpool.WithIdentity(ctx, Identity)
	cl, err := r.c.cfg.Service.ReportClusterStatus(ictx, r.cl.ID, kpool.ClusterReport{Foreign: foreign, Unmarked: unmarked})
	switch {
	case err == nil:
		if len(foreign) != len(r.cl.Status.Foreign) {
			r.c.cfg.Log.Info("foreign pools at the provider", append(r.logAttrs(), "foreign", len(foreign))...)
		}
		r.cl = cl
	case !kpool.IsNotFound(err) && ctx.Err() == nil:
		r.c.cfg.Log.Warn("cluster status report", append(r.logAttrs(), "err", err)...)
	}
}

// sameJSON reports whether two lists encode alike (a nil and an empty
// list do).
func sameJSON[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func ptr[T any](v T) *T { return &v }
