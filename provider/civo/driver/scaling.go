package driver

import (
	"context"

	"github.com/kpool/kpool/provider"
)

// Autoscaling on Civo: Civo's pool API has no bounds; its cluster
// autoscaler (the marketplace application civo-cluster-autoscaler) takes
// them as --nodes=MIN:MAX:POOL_ID flags of its Deployment, which Civo's
// API neither shows nor changes. So the driver installs the application
// through Civo's API when a pool first needs it, and keeps each pool's
// entry in the Deployment through the cluster's Kubernetes API (the
// kubeconfig Civo returns with the cluster). The autoscaler then owns the
// count: drift ignores it (provider.Compare) and an update that moves the
// bounds only clamps it.
//
// The entry named "workers": Civo's autoscaler (kubernetes/autoscaler,
// cloudprovider/civo/civo_manager.go) reads it as the bounds of every pool
// while no entry names a pool, and ignores it once one does. The
// application ships 3:10:workers (app.yaml), which would scale every pool
// of the cluster, kpool's fixed ones too, between the install and the
// first entry and after the last entry goes: the driver takes that
// shipped entry out, verbatim only, whenever it writes a pool's entry
// (right after the install, in the same call). A workers entry with other
// bounds is a person's choice and stays.

// entries reads every pool's bounds of a cluster: none when the
// autoscaler is not installed.
func (d *Driver) entries(ctx context.Context, cl *Client, id string) (map[string]bounds, error) {
	a, err := d.autoscalerOf(ctx, cl, id, false)
	if err != nil {
		return nil, err
	}
	return a.entries(ctx)
}

// withBounds sets a listed pool's autoscaling from its entry.
func withBounds(p *provider.Pool, entries map[string]bounds) {
	if b, ok := entries[p.ProviderName]; ok {
		p.Autoscaling, p.MinCount, p.MaxCount = true, b.min, b.max
	}
}

// configure writes a pool's entry as the spec has it: installs the
// autoscaler first when the spec autoscales and it is not there; takes
// the entry out when the spec does not autoscale.
func (d *Driver) configure(ctx context.Context, cl *Client, id string, s provider.PoolSpec) error {
	a, err := d.autoscalerOf(ctx, cl, id, s.Autoscaling)
	if err != nil {
		return err
	}
	var b *bounds
	if s.Autoscaling {
		b = &bounds{s.MinCount, s.MaxCount}
	}
	return a.set(ctx, s.ProviderName, b)
}

// sameBounds reports whether a pool's autoscaling is the spec's.
func sameBounds(s provider.PoolSpec, p *provider.Pool) bool {
	if !s.Autoscaling || !p.Autoscaling {
		return s.Autoscaling == p.Autoscaling
	}
	return s.MinCount == p.MinCount && s.MaxCount == p.MaxCount
}

// wantCount is the count an update asks Civo for: the spec's; with
// autoscaling on, the pool's own (the autoscaler's) clamped into the
// bounds, so that only a count outside them is sent.
func wantCount(s provider.PoolSpec, current int) int {
	if !s.Autoscaling {
		return s.Count
	}
	return min(max(current, s.MinCount), s.MaxCount)
}
