package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
)

// cluster is the fake clientset as the replacement tests need it: pods
// listed by spec.nodeName (which client-go's fake ignores), evictions that
// delete the pod unless the test blocks it as a PodDisruptionBudget would,
// and nodes mirrored from the fake driver's pools, as the cloud registers
// them.
type cluster struct {
	w       *world
	cs      *k8sfake.Clientset
	mu      sync.Mutex
	blocked map[string]bool // pod names whose eviction a budget refuses
	removed map[string]bool // nodes a removal took
	evicted []string        // pods evicted, in order
}

func newCluster(w *world, cs *k8sfake.Clientset) *cluster {
	k := &cluster{w: w, cs: cs, blocked: map[string]bool{}, removed: map[string]bool{}}
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		la := a.(k8stesting.ListAction)
		objs, err := cs.Tracker().List(pods, corev1.SchemeGroupVersion.WithKind("Pod"), la.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		out := &corev1.PodList{}
		sel := la.GetListRestrictions().Fields
		for _, p := range objs.(*corev1.PodList).Items {
			if sel == nil || sel.Matches(fields.Set{"spec.nodeName": p.Spec.NodeName}) {
				out.Items = append(out.Items, p)
			}
		}
		return true, out, nil
	})
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		k.mu.Lock()
		blocked := k.blocked[ev.Name]
		k.mu.Unlock()
		if blocked {
			err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
			err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget web-pdb needs 5 healthy pods and has 5 currently"}}
			return true, nil, err
		}
		k.mu.Lock()
		k.evicted = append(k.evicted, ev.Name)
		k.mu.Unlock()
		return true, nil, cs.Tracker().Delete(pods, a.GetNamespace(), ev.Name)
	})
	return k
}

func (k *cluster) block(pod string, on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.blocked[pod] = on
}

// mirror makes the nodes of each named provider pool what the fake
// driver says: one per node, Ready as many as it reports ready; a pool
// gone takes its nodes (and their pods, as the pod GC does) with it.
func (k *cluster) mirror(names ...string) {
	ctx := context.Background()
	for _, name := range names {
		p, ok := k.w.drv.Pool(k.w.cluster, name)
		count := 0
		if ok {
			count = p.Nodes
		}
		k.mu.Lock()
		var names []string
		for i := range 8 {
			if n := fmt.Sprintf("%s-%d", name, i); !k.removed[n] {
				names = append(names, n)
			} else if _, err := k.cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err == nil {
				must(0, k.cs.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}))
			}
		}
		k.mu.Unlock()
		for i, n := range names {
			cur, err := k.cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			switch {
			case i >= count && err == nil:
				must(0, k.cs.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}))
				for _, pod := range k.pods(n) {
					must(0, k.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
				}
			case i < count && err != nil:
				must(k.cs.CoreV1().Nodes().Create(ctx, node(n, name, i < p.ReadyNodes, map[string]string{provider.LabelPool: "web", provider.LabelZone: "1"}), metav1.CreateOptions{}))
			case i < count && !cordoned(cur) && readyOf(cur) != (i < p.ReadyNodes):
				must(k.cs.CoreV1().Nodes().Update(ctx, node(n, name, i < p.ReadyNodes, cur.Labels), metav1.UpdateOptions{}))
			}
		}
	}
}

func cordoned(n *corev1.Node) bool { return n.Spec.Unschedulable }

func readyOf(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// pods are the pods on a node.
func (k *cluster) pods(nodeName string) []corev1.Pod {
	l := must(k.cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + nodeName}))
	return l.Items
}

// run puts a running pod on a node.
func (k *cluster) run(pod, nodeName string) {
	must(k.cs.CoreV1().Pods("shop").Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: "shop"},
		Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}, metav1.CreateOptions{}))
}

// reach moves the clock until the pool's replacement is at step,
// mirroring the old pool and its successor meanwhile; it returns the
// successor's provider name.
func (k *cluster) reach(p *kpool.NodePool, budget time.Duration, step kpool.ReplacementStep) string {
	var to string
	k.w.until(budget, func() (bool, string) {
		rp := k.w.replacementOf(p.ID)
		if rp != nil {
			to = rp.To
		}
		k.mirror(p.ProviderName, to)
		return rp != nil && rp.Step == step, fmt.Sprintf("replacement %+v", rp)
	})
	return to
}

// replacementOf is the pool's status.replacement ("none").
func (w *world) replacementOf(id string) *kpool.Replacement {
	return w.pool(id).Status.Replacement
}

// replaceWorld is a world with a Surge pool "web" of 2 Ready nodes, each
// running a pod, and the cluster that mirrors it; restart stops the
// controller and starts another.
func replaceWorld(t *testing.T, strategy string, before ...func(*world, *cluster)) (w *world, k *cluster, p *kpool.NodePool, restart func()) {
	w, cs, kube := kubeWorld(t)
	k = newCluster(w, cs)
	for _, f := range before {
		f(w, k)
	}
	stop := w.start("a", kube)
	t.Cleanup(func() { stop() })
	restart = func() {
		stop()
		stop = w.start("a", kube)
	}
	p = w.createPoolWith("web", `"nodeCount":2,"zones":["1"],"updateStrategy":`+strategy)
	w.until(5*time.Minute, func() (bool, string) {
		k.mirror(p.ProviderName)
		return w.ready(p.ID)()
	})
	k.run("web-a", p.ProviderName+"-0")
	k.run("web-b", p.ProviderName+"-1")
	return w, k, p, restart
}

// TestReplacement: a machine type the provider cannot change in place, on
// a pool whose strategy says Surge, is carried out by a successor: it is
// created once, awaited Ready in Kubernetes, the old nodes cordoned and
// drained, the soak waited out, the old pool deleted, and the successor's
// name made the pool's; the pool keeps its id and name and is Ready again.
func TestReplacement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, k, p, _ := replaceWorld(t, `{"replacement":"Surge","soak":"2m"}`)
		from := p.ProviderName
		w.patch(p.ID, `{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}`)

		to := k.reach(p, 5*time.Minute, kpool.StepDraining)
		if !strings.HasPrefix(to, "webr") || to == from {
			t.Fatalf("successor %q of %q", to, from)
		}
		w.until(5*time.Minute, func() (bool, string) {
			k.mirror(from, to)
			left := len(k.pods(from+"-0")) + len(k.pods(from+"-1"))
			rp := w.replacementOf(p.ID)
			return left == 0 && rp.Step == kpool.StepSoaking, fmt.Sprintf("%d pods left on the old nodes, %+v", left, rp)
		})
		for _, n := range []string{from + "-0", from + "-1"} {
			if got := must(k.cs.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})); !got.Spec.Unschedulable {
				t.Errorf("old node %s not cordoned", n)
			}
		}
		w.until(10*time.Minute, func() (bool, string) {
			k.mirror(from, to)
			got := w.pool(p.ID)
			return got.ProviderName == to && condition(w.report(p.ID), kpool.ConditionReady) == "True NodesReady",
				fmt.Sprintf("provider name %s, Ready %s, replacement %+v", got.ProviderName, condition(w.report(p.ID), kpool.ConditionReady), got.Status.Replacement)
		})
		got := w.pool(p.ID)
		if got.ID != p.ID || got.Name != "web" || got.Status.Replacement.Step != kpool.StepDone {
			t.Fatalf("after the replacement: %s %s %+v", got.ID, got.Name, got.Status.Replacement)
		}
		if _, ok := w.drv.Pool(w.cluster, from); ok {
			t.Errorf("the old pool %s is still at the provider", from)
		}
		if n := w.drv.Creates(to); n != 1 {
			t.Errorf("successor created %d times", n)
		}
	})
}

// TestReplacementBlocked: a pod whose budget allows no disruption holds
// the drain and is named in the status; with onStuck Stop, the drain
// timeout stops the replacement with the old pool serving; a rollback
// uncordons the old nodes and removes the successor, and the generation is
// not tried again.
func TestReplacementBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, k, p, _ := replaceWorld(t, `{"replacement":"Surge","drainTimeout":"5m"}`)
		from := p.ProviderName
		k.block("web-a", true)
		w.patch(p.ID, `{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}`)
		var to string
		w.until(5*time.Minute, func() (bool, string) {
			rp := w.replacementOf(p.ID)
			if rp != nil {
				to = rp.To
				k.mirror(from, to)
			}
			return rp != nil && len(rp.Blocking) > 0, fmt.Sprintf("replacement %+v", rp)
		})
		if b := w.replacementOf(p.ID).Blocking; !strings.Contains(b[0], "web-pdb") || !strings.Contains(b[0], "shop/web-a") {
			t.Fatalf("blocking %q", b)
		}
		k.reach(p, 10*time.Minute, kpool.StepStopped)
		if got := w.pool(p.ID); got.ProviderName != from || got.Status.Phase != kpool.PhaseDegraded {
			t.Fatalf("stopped: provider name %s, phase %s", got.ProviderName, got.Status.Phase)
		}
		if _, ok := w.drv.Pool(w.cluster, from); !ok {
			t.Fatal("the old pool is gone after a stopped replacement")
		}

		must(w.svc.RollbackNodePool(w.ctx(), p.ID))
		k.reach(p, 10*time.Minute, kpool.StepRolledBack)
		if _, ok := w.drv.Pool(w.cluster, to); ok {
			t.Errorf("the successor %s is still at the provider after the rollback", to)
		}
		for _, n := range []string{from + "-0", from + "-1"} {
			if got := must(k.cs.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})); got.Spec.Unschedulable {
				t.Errorf("old node %s still cordoned after the rollback", n)
			}
		}
		// The generation stays rolled back: no second successor.
		w.advance(10 * time.Minute)
		if got := condition(w.report(p.ID), kpool.ConditionReady); got != "False RolledBack" {
			t.Errorf("Ready %s after the rollback", got)
		}
		if n := w.calls(fake.Create, to); n != 1 {
			t.Errorf("%d creates of the successor", n)
		}
	})
}

// TestReplacementRestarts: a controller stopped at each step of a
// replacement and another started resume it from the store: one
// successor is created, once, and the old pool is deleted, once.
func TestReplacementRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, k, p, restart := replaceWorld(t, `{"replacement":"Surge","soak":"1m"}`)
		from := p.ProviderName
		w.patch(p.ID, `{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}`)
		var to string
		seen := map[kpool.ReplacementStep]bool{}
		w.until(20*time.Minute, func() (bool, string) {
			rp := w.replacementOf(p.ID)
			if rp == nil {
				return false, "no replacement yet"
			}
			to = rp.To
			k.mirror(from, to)
			if !seen[rp.Step] {
				// A new step: the controller that reached it goes, and
				// another takes over.
				seen[rp.Step] = true
				restart()
			}
			return rp.Step == kpool.StepDone && w.pool(p.ID).ProviderName == to, fmt.Sprintf("replacement %+v", rp)
		})
		for _, s := range []kpool.ReplacementStep{kpool.StepSurging, kpool.StepDraining, kpool.StepDone} {
			if !seen[s] {
				t.Errorf("step %s never seen: %v", s, seen)
			}
		}
		if n := w.drv.Creates(to); n != 1 {
			t.Errorf("successor created %d times", n)
		}
		if n := w.calls(fake.Delete, from); n != 1 {
			t.Errorf("old pool deleted %d times", n)
		}
		if _, ok := w.drv.Pool(w.cluster, from); ok {
			t.Errorf("the old pool %s is left", from)
		}
	})
}

// TestReplacementSuccessorFails: a successor whose create fails at the
// provider stops the replacement, the old pool serving and the pool
// saying why; a rollback deletes the failed successor.
func TestReplacementSuccessorFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, k, p, _ := replaceWorld(t, `{"replacement":"Surge"}`)
		from := p.ProviderName
		w.drv.FailOperations(fake.Create, 1)
		w.patch(p.ID, `{"platform":{"azure":{"vmSize":"Standard_D8s_v5"}}}`)
		to := k.reach(p, 10*time.Minute, kpool.StepStopped)
		got := w.pool(p.ID)
		if got.ProviderName != from || !strings.Contains(got.Status.Replacement.Blocking[0], "failed") {
			t.Fatalf("stopped: %s, %+v", got.ProviderName, got.Status.Replacement)
		}
		if msg := got.Status.Message; !strings.Contains(msg, to) {
			t.Errorf("status message %q does not name the successor", msg)
		}
		for _, n := range []string{from + "-0", from + "-1"} {
			if len(k.pods(n)) != 1 {
				t.Errorf("old node %s lost its pod to a failed successor", n)
			}
		}
		must(w.svc.RollbackNodePool(w.ctx(), p.ID))
		k.reach(p, 10*time.Minute, kpool.StepRolledBack)
		if _, ok := w.drv.Pool(w.cluster, to); ok {
			t.Errorf("the failed successor %s is left", to)
		}
	})
}

// TestDeleteDrainsFirst: a pool's delete waits until its nodes are
// drained (pods evicted under their budgets), and goes ahead once the
// drain timeout has passed with a pod a budget holds.
func TestDeleteDrainsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, k, p, _ := replaceWorld(t, `{"drainTimeout":"3m"}`)
		k.block("web-b", true)
		w.delete(p.ID)
		w.until(time.Minute, func() (bool, string) {
			left := len(k.pods(p.ProviderName + "-0"))
			return left == 0, fmt.Sprintf("%d pods on the first node", left)
		})
		if n := w.calls(fake.Delete, p.ProviderName); n != 0 {
			t.Fatalf("delete sent with a pod left to drain (%d calls)", n)
		}
		if got := w.report(p.ID); got == nil || !strings.Contains(got.Conditions[0].Message+fmt.Sprint(got.Conditions), "web-b") {
			t.Errorf("the report does not say what holds the delete: %+v", got)
		}
		w.until(10*time.Minute, func() (bool, string) {
			k.mirror(p.ProviderName)
			n := w.calls(fake.Delete, p.ProviderName)
			return n == 1, fmt.Sprintf("%d deletes", n)
		})
	})
}

// removerDriver is the fake driver that also removes chosen nodes
// (provider.NodeRemover), as AKS, GKE, OKE and Civo do: the count drops
// by as many, and the cluster's mirror drops those nodes.
type removerDriver struct {
	kubeDriver
	k *cluster
}

func (d removerDriver) NodePoolRemoveNodes(_ context.Context, c *kpool.Cluster, name string, nodes []provider.NodeRef) error {
	d.k.mu.Lock()
	for _, n := range nodes {
		d.k.removed[n.Name] = true
	}
	d.k.mu.Unlock()
	return d.Mutate(c, name, func(s *provider.PoolSpec) { s.Count -= len(nodes) })
}

// TestScaleDownDrains: on a provider that removes chosen nodes, a lower
// count drains the nodes that go (the newest) and removes exactly those;
// the pod on the node that stays is not touched.
func TestScaleDownDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, k, p, _ := replaceWorld(t, `{"drainTimeout":"3m"}`, func(w *world, k *cluster) { w.drivers.Add(removerDriver{kubeDriver{w.drv}, k}) })
		w.patch(p.ID, `{"nodeCount":1}`)
		w.until(5*time.Minute, func() (bool, string) {
			k.mirror(p.ProviderName)
			got, _ := w.drv.Pool(w.cluster, p.ProviderName)
			return got.Count == 1 && condition(w.report(p.ID), kpool.ConditionReady) == "True NodesReady",
				fmt.Sprintf("count %d, Ready %s", got.Count, condition(w.report(p.ID), kpool.ConditionReady))
		})
		k.mu.Lock()
		removed := k.removed
		k.mu.Unlock()
		if len(removed) != 1 || !removed[p.ProviderName+"-1"] {
			t.Fatalf("removed %v, want the newest node", removed)
		}
		if pods := k.pods(p.ProviderName + "-0"); len(pods) != 1 {
			t.Errorf("the node that stays has %d pods", len(pods))
		}
		if n := w.calls(fake.Update, p.ProviderName); n != 0 {
			t.Errorf("%d count updates sent besides the removal", n)
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if len(k.evicted) != 1 || k.evicted[0] != "web-b" {
			t.Errorf("evicted %v, want the pod of the node that goes", k.evicted)
		}
	})
}
