// Package drain empties nodes of their pods the way `kubectl drain` does
// (k8s.io/kubectl pkg/drain), for the controllers that replace, cycle and
// remove nodes: cordon, then evict each pod through the Eviction API so that
// PodDisruptionBudgets are honoured. It works one step at a time and keeps no
// state of its own: the caller calls Step again at its next resync (and after
// a crash) with the time the drain began, and Step carries on from what the
// cluster shows.
//
// Unlike kubectl it does not refuse pods that no controller owns or that
// keep emptyDir data (kubectl's unreplicatedFilter and localStorageFilter,
// lifted by --force and --delete-emptydir-data): the node is going away,
// and they are lost with it either way; they are evicted like the rest,
// under their budgets.
package drain

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// OnStuck says what a drain does with a pod still not evicted when its
// timeout has passed.
type OnStuck int

const (
	// Wait keeps trying to evict it, however long the budget blocks it.
	Wait OnStuck = iota
	// Force deletes it (no budget is checked on a delete), as
	// `kubectl drain --disable-eviction` does from the start.
	Force
	// Stop deletes nothing: once the timeout has passed with pods left,
	// the step (which still evicts what the budgets allow) reports the
	// drain as stopped (Progress.Stopped), for the caller to stop there
	// and report.
	Stop
)

// Drainer holds a drain's options; its zero value skips nothing, waits
// forever and evicts one pod at a time.
type Drainer struct {
	Skip    Skip          // the pods a drain leaves on the node
	OnStuck OnStuck       // what to do with a pod still there after Timeout
	Timeout time.Duration // from the drain's start; 0: none (OnStuck never applies)
	// ForgetAfter drops from the drain a pod terminating for longer than
	// it (0: never): a node whose kubelet is gone never confirms the end
	// of its pods (kubectl's skipDeletedFilter,
	// --skip-wait-for-delete-timeout). Such a pod is listed as Skipped.
	ForgetAfter time.Duration
	// MaxInFlight bounds the pods being evicted at once across the nodes:
	// those evicted and still terminating count, and a step evicts at
	// most the rest (0 is 1).
	MaxInFlight int
}

// State is why a pod is still on its node after a step.
type State string

const (
	Terminating State = "Terminating" // evicted (or deleted), its containers stopping
	Queued      State = "Queued"      // not tried this step: MaxInFlight was reached
	Blocked     State = "Blocked"     // the eviction was refused with 429: a budget would be broken
	Stuck       State = "Stuck"       // the eviction failed otherwise (more than one budget, …)
)

// Pod is one pod a drain has not finished with.
type Pod struct {
	Namespace, Name string
	State           State
	PDB             string // the budget that blocked it (Blocked), when the API server named one
	Message         string // the API server's message (Blocked, Stuck)
}

// Node is a node's part in a step.
type Node struct {
	Name    string
	Left    []Pod    // pods still on it that the drain must see go
	Skipped []string // namespace/name of pods the drain leaves (Skip)
	Gone    bool     // the Node object no longer exists
}

// Progress is what a step did and what is left.
type Progress struct {
	Nodes   []Node   // in the order asked
	Evicted []string // namespace/name of the pods this step evicted
	Deleted []string // namespace/name of the pods this step deleted (Force)
	Done    bool     // no pod is left on any node (all skipped ones aside)
	Stopped bool     // OnStuck is Stop, the timeout passed and pods are left
}

// Blocked lists the pods of p a budget holds back, by budget name.
func (p Progress) Blocked() map[string][]string {
	out := map[string][]string{}
	for _, n := range p.Nodes {
		for _, pod := range n.Left {
			if pod.State == Blocked {
				out[pod.PDB] = append(out[pod.PDB], pod.Namespace+"/"+pod.Name)
			}
		}
	}
	return out
}

// Step cordons the nodes, lists their pods (fieldSelector spec.nodeName, as
// kubectl's GetPodsForDeletion), leaves those d.Skip names, and evicts up
// to d.MaxInFlight of the rest less those still terminating. started is
// when the drain began (the caller keeps it); once now is d.Timeout past
// it, d.OnStuck applies to the pods an eviction could not remove. It never
// sleeps: a blocked pod is retried at the next call, where kubectl's
// evictPods retries a 429 after 5 seconds. A 429 or a 500 is reported in
// Progress, not as an error; the error joins the calls that failed
// otherwise (the progress is still valid).
func (d Drainer) Step(ctx context.Context, cs kubernetes.Interface, nodes []string, started, now time.Time) (Progress, error) {
	var p Progress
	var errs []error
	var todo []*corev1.Pod
	inFlight := 0
	for _, name := range nodes {
		n, pods, err := d.survey(ctx, cs, name, now)
		if err != nil {
			errs = append(errs, err) // Done stays false: the node was not seen
		}
		for _, pod := range n.Left {
			if pod.State == Terminating {
				inFlight++
			}
		}
		p.Nodes = append(p.Nodes, n)
		todo = append(todo, pods...)
	}
	limit := max(d.MaxInFlight, 1) - inFlight
	timedOut := d.Timeout > 0 && !now.Before(started.Add(d.Timeout))
	results := evictAll(ctx, cs, todo, max(limit, 0))
	for i, pod := range todo {
		r := results[i]
		if (r.state == Blocked || r.state == Stuck) && timedOut && d.OnStuck == Force {
			r = forceDelete(ctx, cs, pod)
		}
		if r.err != nil {
			errs = append(errs, r.err)
		}
		p.record(pod, r)
	}
	p.Done, p.Stopped = len(errs) == 0, false
	for _, n := range p.Nodes {
		if len(n.Left) > 0 {
			p.Done = false
			p.Stopped = timedOut && d.OnStuck == Stop
		}
	}
	return p, errors.Join(errs...)
}

// survey cordons a node and sorts its pods: those the drain skips, those
// terminating (Left, in flight), and those still to evict (returned).
func (d Drainer) survey(ctx context.Context, cs kubernetes.Interface, name string, now time.Time) (Node, []*corev1.Pod, error) {
	n := Node{Name: name}
	if err := Cordon(ctx, cs, name); apierrors.IsNotFound(err) {
		n.Gone = true // its pods may still be listed until the pod GC removes them
	} else if err != nil {
		return n, nil, err
	}
	list, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return n, nil, err
	}
	var todo []*corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		switch {
		case d.Skip.skips(pod), d.ForgetAfter > 0 && pod.DeletionTimestamp != nil && now.Sub(pod.DeletionTimestamp.Time) > d.ForgetAfter:
			n.Skipped = append(n.Skipped, pod.Namespace+"/"+pod.Name)
		case pod.DeletionTimestamp != nil:
			n.Left = append(n.Left, Pod{Namespace: pod.Namespace, Name: pod.Name, State: Terminating})
		default:
			todo = append(todo, pod)
		}
	}
	slices.SortFunc(todo, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return n, todo, nil
}

// record puts a pod's outcome into the progress of its node.
func (p *Progress) record(pod *corev1.Pod, r result) {
	id := pod.Namespace + "/" + pod.Name
	switch r.state {
	case evicted:
		p.Evicted = append(p.Evicted, id)
	case deleted:
		p.Deleted = append(p.Deleted, id)
	}
	if r.state == gone {
		return
	}
	left := Pod{Namespace: pod.Namespace, Name: pod.Name, State: r.state, PDB: r.pdb, Message: r.msg}
	if r.state == evicted || r.state == deleted {
		left.State = Terminating // until a later step no longer lists it
	}
	for i := range p.Nodes {
		if p.Nodes[i].Name == pod.Spec.NodeName {
			p.Nodes[i].Left = append(p.Nodes[i].Left, left)
		}
	}
}
