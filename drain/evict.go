package drain

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Skip is a set of the kinds of pod a drain leaves on their node.
type Skip uint8

const (
	// SkipDaemonSets leaves pods whose controller is a DaemonSet: its
	// controller ignores the cordon and would put them back at once
	// (kubectl's daemonSetFilter, `--ignore-daemonsets`).
	SkipDaemonSets Skip = 1 << iota
	// SkipMirror leaves static pods' mirrors (annotation
	// kubernetes.io/config.mirror): the kubelet owns them and the API
	// server cannot remove them (kubectl's mirrorPodFilter, always on).
	SkipMirror
	// SkipTerminal leaves pods already Succeeded or Failed: they hold no
	// resources and go with their node. kubectl deletes them instead.
	SkipTerminal
	// SkipKubectl is `kubectl drain --ignore-daemonsets`'s set.
	SkipKubectl = SkipDaemonSets | SkipMirror | SkipTerminal
)

// skips reports whether s leaves pod on its node.
func (s Skip) skips(pod *corev1.Pod) bool {
	if c := metav1.GetControllerOf(pod); s&SkipDaemonSets != 0 && c != nil && c.Kind == "DaemonSet" {
		return true
	}
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; s&SkipMirror != 0 && ok {
		return true
	}
	ph := pod.Status.Phase
	return s&SkipTerminal != 0 && (ph == corev1.PodSucceeded || ph == corev1.PodFailed)
}

// outcomes of one pod's eviction, besides the States left on the node.
const (
	evicted State = "evicted" // the API server accepted the eviction
	deleted State = "deleted" // forced
	gone    State = "gone"    // 404: already removed
)

type result struct {
	state    State
	pdb, msg string
	err      error // a failure that is not the budget's answer
}

// evictAll evicts the first limit pods at once (kubectl's evictPods starts
// one goroutine per pod) and marks the rest Queued.
func evictAll(ctx context.Context, cs kubernetes.Interface, pods []*corev1.Pod, limit int) []result {
	out := make([]result, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		if i >= limit {
			out[i] = result{state: Queued}
			continue
		}
		wg.Go(func() { out[i] = evict(ctx, cs, pod) })
	}
	wg.Wait()
	return out
}

// evict posts a policy/v1 Eviction for a pod, as kubectl's EvictPod does.
// Unlike kubectl it sets the pod's UID as a precondition (which the API
// server's eviction honours as a delete's): a step may act on a list read
// a moment before, and a namesake that replaced the pod is not the pod.
// The answers, as the eviction API documents them
// (kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/): 200/201
// evicted; 429 a budget forbids it for now; 500 a misconfiguration, such
// as a pod under more than one budget (kubectl fails the drain on it: here
// it is reported, Stuck); 404 gone. A 403 in a namespace being deleted is
// retried, as kubectl's evictPods does: the namespace's deletion takes the
// pod.
func evict(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) result {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}}
	err := cs.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev)
	switch {
	case err == nil:
		return result{state: evicted}
	case apierrors.IsNotFound(err):
		return result{state: gone}
	case apierrors.IsTooManyRequests(err):
		return result{state: Blocked, pdb: budgetOf(err), msg: err.Error()}
	case apierrors.IsInternalError(err),
		apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return result{state: Stuck, msg: err.Error()}
	default:
		return result{state: Stuck, msg: err.Error(), err: err}
	}
}

// budgetOf is the name of the PodDisruptionBudget a 429 names in its
// DisruptionBudget cause ("The disruption budget NAME needs …" or "… NAME
// is still being processed by the server.", the eviction registry's
// messages), or "" when it names none (a 429 of API Priority and Fairness).
func budgetOf(err error) string {
	for _, c := range causes(err) {
		if c.Type != policyv1.DisruptionBudgetCause {
			continue
		}
		if rest, ok := strings.CutPrefix(c.Message, "The disruption budget "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}

func causes(err error) []metav1.StatusCause {
	if st, ok := err.(apierrors.APIStatus); ok && st.Status().Details != nil {
		return st.Status().Details.Causes
	}
	return nil
}

// forceDelete deletes a pod no eviction could remove, past the drain's
// timeout: a delete checks no budget. The UID precondition spares a
// namesake.
func forceDelete(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) result {
	err := cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	switch {
	case err == nil:
		return result{state: deleted}
	case apierrors.IsNotFound(err):
		return result{state: gone}
	default:
		return result{state: Stuck, msg: err.Error(), err: err}
	}
}
