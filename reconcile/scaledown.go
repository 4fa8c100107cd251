package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
)

// Scale-down with drain. Where the provider removes chosen nodes
// (provider.NodeRemover), a lower count is carried out by kpool: it picks
// the nodes to go (NotReady first, then cordoned, then the newest),
// stores them, cordons and drains them under the workloads' budgets and
// the strategy's timeout, and has the provider remove exactly those. On
// other providers the cloud picks the nodes itself, as before.

// scaleDownWanted reports whether the pass is to carry out a scale-down
// itself: the count is lower than the provider's, set by kpool (not the
// autoscaler), and kpool can both see the nodes and remove chosen ones.
func (s *poolScope) scaleDownWanted() (provider.NodeRemover, bool) {
	nr, ok := provider.As[provider.NodeRemover](s.d)
	if !ok || s.p.Spec.Autoscaling.On() || s.obs.State != provider.StateReady || s.obs.Count <= s.desired.Count {
		return nil, false
	}
	if s.watch == nil || s.watch.cs == nil || !s.nodesKnown || len(s.nodes[s.p.ProviderName]) == 0 {
		return nil, false
	}
	return nr, true
}

// scaleDown drains the nodes a scale-down removes, then removes them.
func (s *poolScope) scaleDown(ctx context.Context, nr provider.NodeRemover) (bool, error) {
	sd := s.rp.meta.ScaleDown
	if sd == nil || sd.Generation != s.p.Generation || sd.To != s.desired.Count {
		sd = s.pickNodes()
		s.logPool(ctx, slog.LevelInfo, "scale-down: draining the nodes it removes", "nodes", strings.Join(sd.Nodes, ","), "from", sd.From, "to", sd.To)
	}
	s.rp.meta.ScaleDown = sd
	s.rp.gen = s.p.Generation
	msg := fmt.Sprintf("scaling down from %d to %d: draining %s", sd.From, sd.To, strings.Join(sd.Nodes, ", "))
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonUpdating, msg)
	s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonUpdating, "")
	claim := s.rp.clone()
	if err := s.post(ctx, &claim); err != nil {
		return true, err // the nodes must be stored before they are touched
	}
	if sd.RemoveSentAt != nil && s.c.cfg.Clock.Now().Before(sd.RemoveSentAt.Add(s.c.cfg.CallTimeout)) {
		return true, nil // the removal is under way
	}
	u := s.p.Spec.UpdateStrategy
	prog, err := s.drainSome(ctx, sd.Nodes, sd.StartedAt, drainer(u))
	rp := &kpool.Replacement{}
	s.noteDrained(rp, prog)
	sd.Blocking = rp.Blocking
	if !prog.Done {
		if prog.Stopped {
			why := fmt.Sprintf("scale-down stopped: %s not drained within %s: %s; raise the count back, or free the budget", strings.Join(sd.Nodes, ", "), u.Drain(), strings.Join(sd.Blocking, "; "))
			s.rp.set(kpool.ConditionDegraded, kpool.ConditionTrue, ReasonUpdating, why)
			msg = why
		} else if len(sd.Blocking) > 0 {
			msg += ": " + strings.Join(sd.Blocking, "; ")
		}
		if err != nil {
			msg += ": " + err.Error()
		}
		s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonUpdating, msg)
		s.send(ctx)
		return true, nil
	}
	return s.removeNodes(ctx, nr, sd)
}

// removeNodes has the provider remove the drained nodes, once stored as
// sent.
func (s *poolScope) removeNodes(ctx context.Context, nr provider.NodeRemover, sd *kpool.ScaleDown) (bool, error) {
	now := s.c.cfg.Clock.Now().UTC()
	sd.RemoveSentAt = &now
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonUpdating, fmt.Sprintf("scaling down from %d to %d: removing %s, drained", sd.From, sd.To, strings.Join(sd.Nodes, ", ")))
	claim := s.rp.clone()
	if err := s.post(ctx, &claim); err != nil {
		return true, err
	}
	var refs []provider.NodeRef
	for _, n := range s.nodes[s.p.ProviderName] {
		if slices.Contains(sd.Nodes, n.Name) {
			refs = append(refs, provider.NodeRef{Name: n.Name, ProviderID: n.Spec.ProviderID})
		}
	}
	start := s.c.cfg.Clock.Now()
	err := nr.NodePoolRemoveNodes(ctx, s.cl, s.p.ProviderName, refs)
	s.called(ctx, "update", "scale-down: remove the drained nodes "+strings.Join(sd.Nodes, ","), start, err)
	switch {
	case err == nil:
		return true, nil
	case s.refused(ctx, err):
		return false, nil
	}
	return s.retry(ctx, err)
}

// pickNodes chooses the nodes a scale-down removes: those not Ready, then
// those cordoned, then the newest.
func (s *poolScope) pickNodes() *kpool.ScaleDown {
	nodes := slices.Clone(s.nodes[s.p.ProviderName])
	rank := func(n *corev1.Node) int {
		switch {
		case !kubeapi.Ready(n):
			return 0
		case n.Spec.Unschedulable:
			return 1
		}
		return 2
	}
	slices.SortFunc(nodes, func(a, b *corev1.Node) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), b.CreationTimestamp.Compare(a.CreationTimestamp.Time), strings.Compare(b.Name, a.Name))
	})
	k := min(s.obs.Count-s.desired.Count, len(nodes))
	sd := &kpool.ScaleDown{Generation: s.p.Generation, From: s.obs.Count, To: s.desired.Count, StartedAt: s.c.cfg.Clock.Now().UTC()}
	zones := len(s.desired.Zones)
	if !s.prof.Capabilities().CountPerZone || zones < 2 {
		for _, n := range nodes[:k] {
			sd.Nodes = append(sd.Nodes, n.Name)
		}
	} else {
		// The provider counts nodes per zone (GKE): as many go from each.
		taken := map[string]int{}
		for _, n := range nodes {
			z := n.Labels[corev1.LabelTopologyZone]
			if taken[z] < k/zones {
				taken[z]++
				sd.Nodes = append(sd.Nodes, n.Name)
			}
		}
	}
	slices.Sort(sd.Nodes)
	return sd
}
