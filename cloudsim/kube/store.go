package kube

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// history is how many events a cluster keeps for watches that resume from
// a resourceVersion; older ones are gone, as etcd's compaction drops them,
// and a watch from before them is answered 410 Gone.
const history = 1024

// event is one write, as watches stream it.
type event struct {
	rv   uint64
	res  *resource
	typ  watch.EventType
	obj  object // the object after the write (before it, for DELETED)
	prev object // the object before the write (nil for ADDED)
}

// watcher is one open watch of a cluster.
type watcher struct {
	res *resource
	ch  chan event
}

// objects returns the store of a resource in c, made on first use.
func (c *cluster) objects(r *resource) map[string]object {
	if c.objs == nil {
		c.objs = map[string]map[string]object{}
	}
	m, ok := c.objs[r.gr.String()]
	if !ok {
		m = map[string]object{}
		c.objs[r.gr.String()] = m
	}
	return m
}

func key(o object) string { return o.GetNamespace() + "/" + o.GetName() }

// record stores o (or removes it, for DELETED) at the next revision,
// keeps the event for resuming watches and hands it to the open ones; a
// watcher too slow to take it is closed, as the API server closes a watch
// whose client does not keep up (its client watches again). a.mu is held.
func (a *API) record(c *cluster, r *resource, typ watch.EventType, o, prev object) object {
	a.rv++
	o.SetResourceVersion(strconv.FormatUint(a.rv, 10))
	o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if typ == watch.Deleted {
		delete(c.objects(r), key(o))
	} else {
		c.objects(r)[key(o)] = o
	}
	ev := event{rv: a.rv, res: r, typ: typ, obj: o.DeepCopyObject().(object), prev: prev}
	c.events = append(c.events, ev)
	if len(c.events) > history {
		c.floor = c.events[0].rv
		c.events = c.events[1:]
	}
	for w := range c.watchers {
		if w.res != r {
			continue
		}
		select {
		case w.ch <- ev:
		default:
			close(w.ch)
			delete(c.watchers, w)
		}
	}
	return o.DeepCopyObject().(object)
}

// createObj stores a new object, as a POST does: a fresh uid, creation
// time and resourceVersion; an existing name is AlreadyExists. a.mu is held.
func (a *API) createObj(c *cluster, r *resource, in object) (object, error) {
	if in.GetName() == "" {
		return nil, apierrors.NewBadRequest("metadata.name: Required value: name or generateName is required")
	}
	if _, ok := c.objects(r)[key(in)]; ok {
		return nil, apierrors.NewAlreadyExists(r.gr, in.GetName())
	}
	o := in.DeepCopyObject().(object)
	o.SetUID(newUID())
	o.SetCreationTimestamp(metav1.Now())
	o.SetGeneration(1)
	if p, ok := o.(*corev1.Pod); ok {
		a.replaced(c, p)
	}
	return a.record(c, r, watch.Added, o, nil), nil
}

// updateObj replaces a stored object, as a PUT does: a resourceVersion
// other than the stored one is a Conflict, none is unconditional; uid and
// creation time are kept, and status unless keep is false (the emulator's
// own writes). a.mu is held.
func (a *API) updateObj(c *cluster, r *resource, in object, keep bool) (object, error) {
	old, ok := c.objects(r)[key(in)]
	if !ok {
		return nil, apierrors.NewNotFound(r.gr, in.GetName())
	}
	if in.GetResourceVersion() != "" && in.GetResourceVersion() != old.GetResourceVersion() {
		return nil, apierrors.NewConflict(r.gr, in.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	o := in.DeepCopyObject().(object)
	o.SetUID(old.GetUID())
	o.SetCreationTimestamp(old.GetCreationTimestamp())
	o.SetGeneration(old.GetGeneration())
	if r.spec != nil && !equality.Semantic.DeepEqual(r.spec(old), r.spec(o)) {
		o.SetGeneration(old.GetGeneration() + 1)
	}
	if keep {
		r.keepStatus(old, o)
	}
	return a.record(c, r, watch.Modified, o, old), nil
}

// updateStatus replaces a stored object's status with in's, as a PUT or
// PATCH of its status subresource does: the rest is the stored object's,
// and a resourceVersion in is a precondition. a.mu is held.
func (a *API) updateStatus(c *cluster, r *resource, in object) (object, error) {
	old, ok := c.objects(r)[key(in)]
	if !ok {
		return nil, apierrors.NewNotFound(r.gr, in.GetName())
	}
	if in.GetResourceVersion() != "" && in.GetResourceVersion() != old.GetResourceVersion() {
		return nil, apierrors.NewConflict(r.gr, in.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	o := old.DeepCopyObject().(object)
	r.keepStatus(in, o)
	return a.record(c, r, watch.Modified, o, old), nil
}

// deleteObj removes a stored object (NotFound when there is none). A
// Node's or Deployment's deletion is noted for the controllers (settle):
// the pod GC deletes the pods of a node gone, the garbage collector those
// of a Deployment gone. a.mu is held.
func (a *API) deleteObj(c *cluster, r *resource, ns, name string) (object, error) {
	old, ok := c.objects(r)[ns+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(r.gr, name)
	}
	switch r {
	case nodeRes:
		c.goneNodes = append(c.goneNodes, name)
	case depRes:
		c.goneOwners = append(c.goneOwners, old.GetUID())
	}
	return a.record(c, r, watch.Deleted, old.DeepCopyObject().(object), old), nil
}

// newUID is a random RFC 4122-shaped uid.
func newUID() types.UID {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return types.UID(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:])
}

// SetNode creates or replaces a cluster's Node, status included, as the
// node's kubelet and cloud controller would: for the cloud emulators.
func (a *API) SetNode(id string, n *corev1.Node) (*corev1.Node, error) {
	return setObj[*corev1.Node](a, id, nodeRes, n)
}

// SetPod creates or replaces a Pod, status included, as the scheduler and
// kubelet would: for the emulators and tests.
// A Pod without a phase is Pending, as every Pod starts.
func (a *API) SetPod(id string, p *corev1.Pod) (*corev1.Pod, error) {
	if p.Status.Phase == "" {
		p = p.DeepCopy()
		p.Status.Phase = corev1.PodPending
	}
	return setObj[*corev1.Pod](a, id, podRes, p)
}

func setObj[T object](a *API, id string, r *resource, in T) (T, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cluster(id)
	defer a.settle(c)
	in = in.DeepCopyObject().(T)
	in.SetResourceVersion("")
	var out object
	var err error
	if _, ok := c.objects(r)[key(in)]; ok {
		out, err = a.updateObj(c, r, in, false)
	} else {
		out, err = a.createObj(c, r, in)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return out.(T), nil
}

// DeleteNode removes a cluster's Node (NotFound when there is none).
func (a *API) DeleteNode(id, name string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cluster(id)
	defer a.settle(c)
	_, err := a.deleteObj(c, nodeRes, "", name)
	return err
}

// Node returns a copy of a cluster's Node.
func (a *API) Node(id, name string) (*corev1.Node, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, ok := a.cluster(id).objects(nodeRes)["/"+name]
	if !ok {
		return nil, false
	}
	return o.DeepCopyObject().(*corev1.Node), true
}

// SetReady sets a Node's Ready condition, as its kubelet reports it
// (reason KubeletReady or KubeletNotReady), moving its transition time
// when the status changes.
func (a *API) SetReady(id, name string, ready bool) error {
	n, ok := a.Node(id, name)
	if !ok {
		return apierrors.NewNotFound(nodeRes.gr, name)
	}
	cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
		Message: "container runtime status check may not have completed yet", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	if ready {
		cond.Status, cond.Reason, cond.Message = corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"
	}
	setCondition(&n.Status.Conditions, cond)
	_, err := a.SetNode(id, n)
	return err
}

func setCondition(conds *[]corev1.NodeCondition, c corev1.NodeCondition) {
	for i := range *conds {
		if (*conds)[i].Type == c.Type {
			if (*conds)[i].Status == c.Status {
				c.LastTransitionTime = (*conds)[i].LastTransitionTime
			}
			(*conds)[i] = c
			return
		}
	}
	*conds = append(*conds, c)
}

// SetPodReady makes a Pod Running with its Ready condition ready (or
// not) and each container running (ready or not), as its kubelet reports
// them.
func (a *API) SetPodReady(id, namespace, name string, ready bool) error {
	a.mu.Lock()
	o, ok := a.cluster(id).objects(podRes)[namespace+"/"+name]
	a.mu.Unlock()
	if !ok {
		return apierrors.NewNotFound(podRes.gr, name)
	}
	p := o.DeepCopyObject().(*corev1.Pod)
	p.Status.Phase = corev1.PodRunning
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}
	p.Status.ContainerStatuses = nil
	for _, ct := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: ct.Name, Image: ct.Image, Ready: ready,
			Started: ptr(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
	}
	_, err := a.SetPod(id, p)
	return err
}

// Compact drops a cluster's event history, as etcd's compaction does: a
// watch from a resourceVersion before now is then 410 Gone.
func (a *API) Compact(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cluster(id)
	c.events, c.floor = nil, a.rv
}
