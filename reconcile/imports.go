package reconcile

import (
	"context"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// importPool records a provider pool kpool does not know, in observe mode.
func (r *clusterRun) importPool(ctx context.Context, o *provider.Pool) {
	name := o.Name
	var fe kpool.FieldErrors
	if kpool.ValidateName(&fe, "name", name); name == "" || len(fe) > 0 {
		name = strings.ToLower(strings.ReplaceAll(o.ProviderName, "_", "-"))
	}
	spec := r.specOf(o)
	ictx := kpool.WithIdentity(ctx, Identity)
	if _, err := r.c.cfg.Service.ImportNodePool(ictx, r.cl.ID, name, o.ProviderName, spec); err != nil {
		r.c.cfg.Log.Warn("import", "cluster", r.cl.ID, "pool", o.ProviderName, "err", err)
	}
}

// specOf is a kpool spec describing an observed pool: its neutral fields,
// the labels and taints that are the user's (not kpool's, Kubernetes' or
// the provider's), and its platform block as the profile writes it.
func (r *clusterRun) specOf(o *provider.Pool) kpool.NodePoolSpec {
	n := o.Count
	s := kpool.NodePoolSpec{NodeCount: &n, Mode: o.Mode, KubernetesVersion: o.Version, Zones: o.Zones, Labels: map[string]string{}, Tags: o.Tags}
	if o.Autoscaling {
		lo, hi := o.MinCount, o.MaxCount
		s.Autoscaling = &kpool.Autoscaling{Enabled: true, MinNodes: &lo, MaxNodes: &hi}
	}
	owned := r.c.cfg.Drivers.Owned
	for k, v := range o.Labels {
		if !owned(k) {
			s.Labels[k] = v
		}
	}
	for _, t := range o.Taints {
		if !owned(t.Key) {
			s.Taints = append(s.Taints, t)
		}
	}
	r.prof.SetBlock(&s, provider.Block{MachineType: o.MachineType, DiskSizeGB: o.DiskSizeGB, DiskType: o.DiskType, Spot: o.Spot, Extra: o.Settings})
	return s
}
