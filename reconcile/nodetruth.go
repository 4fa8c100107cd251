package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
)

// watchRetry is how long after a failed start a cluster's node watch is
// tried again.
const watchRetry = time.Minute

// watchNodes starts the cluster's node watch unless it runs, and takes
// the nodes it has seen, by pool, for the pass.
func (r *clusterRun) watchNodes(ctx context.Context) {
	src := r.kubeSource()
	if src == nil {
		return
	}
	client := func(ctx context.Context) (kubernetes.Interface, error) { return r.c.cfg.KubeClient(ctx, r.cl, src) }
	nw := r.c.watches.ensure(ctx, r.cl, client, r.c.cfg.Clock.Now(), watchRetry)
	r.watch = nw
	r.nodes, r.nodesKnown = nw.nodes(r.prof.PoolLabel())
	switch {
	case nw == nil:
	case nw.informer == nil && nw.err != nil:
		r.watched(ctx, kpool.ConditionFalse, kpool.ReasonKubernetesUnreachable, errorText(nw.err))
	case r.nodesKnown:
		r.watched(ctx, kpool.ConditionTrue, kpool.ReasonWatching, "")
	}
}

// watched sets the cluster's NodesWatched condition when it changes, and
// says so in the log.
func (r *clusterRun) watched(ctx context.Context, status, reason, msg string) {
	if old := r.cl.Status.Condition(kpool.ConditionNodesWatched); old != nil && old.Status == status && old.Message == msg {
		return
	}
	cond := kpool.Condition{Type: kpool.ConditionNodesWatched, Status: status, Reason: reason, Message: msg}
	ictx := kpool.WithIdentity(ctx, Identity)
	cl, err := r.c.cfg.Service.ReportClusterStatus(ictx, r.cl.ID, kpool.ClusterReport{Conditions: []kpool.Condition{cond}})
	if err != nil {
		if !kpool.IsNotFound(err) {
			r.c.cfg.Log.Warn("cluster status report", append(r.logAttrs(), "err", err)...)
		}
		return
	}
	r.cl = cl
	if status == kpool.ConditionTrue {
		r.c.cfg.Log.Info("watching the cluster's nodes", r.logAttrs()...)
	} else {
		r.c.cfg.Log.Warn("cluster's Kubernetes API not reached: its nodes are not watched", append(r.logAttrs(), "err", msg)...)
	}
}

// wantLabels are the labels every node of the pool carries in Kubernetes:
// the placement contract's as the pool is to have them, and the guide's
// nodepool=<name> when the cluster asks for it.
func (s *poolScope) wantLabels() map[string]string {
	want := map[string]string{}
	for _, k := range []string{provider.LabelPool, provider.LabelZone} {
		if v, ok := s.desired.Labels[k]; ok {
			want[k] = v
		}
	}
	if s.cl.Spec.NodeLabels == kpool.NodeLabelsGuide {
		want[kpool.GuidePoolLabel] = s.p.Name
	}
	return want
}

// nodeTruth reports what the cluster's Kubernetes API says of the pool's
// nodes (status.nodes), and puts back the placement labels a node lost,
// on a pool kpool manages; the repair is the NodeLabels condition's
// change, which the audit trail records.
func (s *poolScope) nodeTruth(ctx context.Context, managed bool) {
	if !s.nodesKnown || s.p.Deleting() {
		return
	}
	want := s.wantLabels()
	s.expect(want)
	counts := kpool.NodeCounts{}
	var lost []*corev1.Node
	for _, n := range s.nodes[s.p.ProviderName] {
		node := kubeapi.NodeOf(n, s.prof, s.cl)
		counts.Total++
		if node.Ready {
			counts.Ready++
			if node.Zone != "" {
				counts.ByZone = inc(counts.ByZone, node.Zone)
			}
		}
		if node.Cordoned {
			counts.Cordoned++
		}
		counts.ByVersion = inc(counts.ByVersion, node.Version)
		if len(kubeapi.Missing(n.Labels, want)) > 0 {
			counts.Unlabelled++
			lost = append(lost, n)
		}
	}
	counts.ObservedAt = s.c.cfg.Clock.Now().UTC()
	if last := s.prevKubeNodes(); last != nil && sameCounts(last, &counts) {
		counts.ObservedAt = last.ObservedAt // unchanged: no new report
	}
	s.rp.meta.KubeNodes = &counts
	s.kube = &counts
	s.labelsCondition(ctx, lost, want, managed)
}

// labelsCondition repairs the nodes that lost labels (when managed) and
// sets NodeLabels.
func (s *poolScope) labelsCondition(ctx context.Context, lost []*corev1.Node, want map[string]string, managed bool) {
	if len(lost) == 0 {
		if s.prev != nil && s.prev.Reason(kpool.ConditionNodeLabels) == ReasonLabelsRepaired && s.prev.ObservedGeneration == s.p.Generation {
			// Keep saying what was repaired until the next change.
			s.rp.set(kpool.ConditionNodeLabels, kpool.ConditionTrue, ReasonLabelsRepaired, s.prev.Message(kpool.ConditionNodeLabels))
			return
		}
		s.rp.set(kpool.ConditionNodeLabels, kpool.ConditionTrue, ReasonLabelsPresent, "")
		return
	}
	names := make([]string, 0, len(lost))
	for _, n := range lost {
		names = append(names, n.Name)
	}
	if !managed || s.watch == nil || s.watch.cs == nil {
		s.rp.set(kpool.ConditionNodeLabels, kpool.ConditionFalse, ReasonLabelsMissing,
			fmt.Sprintf("%d nodes lack placement labels (%s): kpool does not write to nodes of a pool it does not manage", len(lost), strings.Join(names, ", ")))
		return
	}
	var failed []string
	for _, n := range lost {
		if err := s.relabel(ctx, n, want); err != nil {
			failed = append(failed, n.Name+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		s.rp.set(kpool.ConditionNodeLabels, kpool.ConditionFalse, ReasonLabelsMissing, "putting the placement labels back failed: "+strings.Join(failed, "; "))
		return
	}
	s.logPool(ctx, slog.LevelInfo, "placement labels put back on nodes that lost them", "nodes", strings.Join(names, ","))
	s.rp.set(kpool.ConditionNodeLabels, kpool.ConditionTrue, ReasonLabelsRepaired,
		fmt.Sprintf("put %s back on %s", labelList(want), strings.Join(names, ", ")))
}

// relabel sets the labels a node lacks with a merge patch, conditional on
// the node's resourceVersion as the watch saw it: a node changed since is
// left to the next pass, which sees the change.
func (s *poolScope) relabel(ctx context.Context, n *corev1.Node, want map[string]string) error {
	set := map[string]string{}
	for _, k := range kubeapi.Missing(n.Labels, want) {
		set[k] = want[k]
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": set, "resourceVersion": n.ResourceVersion}})
	_, err := s.watch.cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kpool"})
	return err
}

// kubeReady says whether the pool's nodes are Ready in Kubernetes as the
// cloud says they are. When not, Ready is False (NodesNotReady) and, once
// it has lasted nodeGrace (the watch catching up with the cloud), the pool
// is Degraded.
func (s *poolScope) kubeReady(cloudReady int) bool {
	if s.kube == nil || s.kube.Ready >= cloudReady {
		delete(s.st.short, s.p.ID)
		return true
	}
	now := s.c.cfg.Clock.Now()
	since, ok := s.st.short[s.p.ID]
	if !ok {
		since = now
		s.st.short[s.p.ID] = now
	}
	msg := fmt.Sprintf("%d of %d nodes Ready in Kubernetes; the cloud reports %d ready", s.kube.Ready, s.kube.Total, cloudReady)
	s.rp.set(kpool.ConditionReady, kpool.ConditionFalse, ReasonNodesNotReady, msg)
	if now.Sub(since) >= nodeGrace {
		s.rp.set(kpool.ConditionDegraded, kpool.ConditionTrue, ReasonNodesNotReady, msg)
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionFalse, ReasonNodesNotReady, "")
	} else {
		s.rp.set(kpool.ConditionProgressing, kpool.ConditionTrue, ReasonNodesNotReady, "")
	}
	return false
}

// nodeGrace is how long nodes may lag the cloud's count before the pool is
// Degraded: a node the cloud has just made takes a moment to register and
// be seen by the watch.
const nodeGrace = 30 * time.Second

func (s *poolScope) prevKubeNodes() *kpool.NodeCounts {
	if s.prev == nil {
		return nil
	}
	return s.last().KubeNodes
}

func sameCounts(a, b *kpool.NodeCounts) bool {
	x, y := *a, *b
	x.ObservedAt, y.ObservedAt = time.Time{}, time.Time{}
	return x.Total == y.Total && x.Ready == y.Ready && x.Cordoned == y.Cordoned && x.Unlabelled == y.Unlabelled &&
		maps.Equal(x.ByZone, y.ByZone) && maps.Equal(x.ByVersion, y.ByVersion)
}

func inc(m map[string]int, k string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k]++
	return m
}

func labelList(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, ",")
}
