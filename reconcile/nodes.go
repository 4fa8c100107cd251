package reconcile

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
)

// nodeBurst is how long after a node change its cluster's pass starts.
const nodeBurst = 500 * time.Millisecond

// watches are the controllers' watches of clusters' Nodes: one client-go
// informer per cluster whatever its number of pools, started at the
// cluster's first pass that reaches its cloud, read by every pass, and
// stopped when the cluster goes or the controllers stop.
type watches struct {
	mu        sync.Mutex
	byCluster map[string]*nodeWatch
	// ctx is the controllers' run: a watch lives as long as it.
	ctx context.Context
	// enqueue puts a cluster on the work queue when its nodes change.
	enqueue func(id string)
}

// nodeWatch is one cluster's watch.
type nodeWatch struct {
	// via is the cluster's spec.kubeconfig when the watch started: a
	// watch through another is started again.
	via      string
	cs       kubernetes.Interface
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	// err is why the watch could not start; it is tried again at retry.
	err   error
	retry time.Time
}

// start makes the watches live within ctx, a changed cluster put on the
// queue with enqueue; stop ends them all.
func (w *watches) start(ctx context.Context, enqueue func(string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx, w.enqueue, w.byCluster = ctx, enqueue, map[string]*nodeWatch{}
}

func (w *watches) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, nw := range w.byCluster {
		if nw.cancel != nil {
			nw.cancel()
		}
		delete(w.byCluster, id)
	}
	w.ctx = nil
}

// drop stops a cluster's watch (the cluster is gone).
func (w *watches) drop(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if nw, ok := w.byCluster[id]; ok {
		if nw.cancel != nil {
			nw.cancel()
		}
		delete(w.byCluster, id)
	}
}

// count is how many clusters' nodes are watched.
func (w *watches) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, nw := range w.byCluster {
		if nw.informer != nil {
			n++
		}
	}
	return n
}

// ensure starts cl's watch unless it runs, or failed to start a moment
// ago; src is how its access is got. It returns the watch (nil: none).
func (w *watches) ensure(ctx context.Context, cl *kpool.Cluster, client func(context.Context) (kubernetes.Interface, error), now time.Time, again time.Duration) *nodeWatch {
	w.mu.Lock()
	nw, ok := w.byCluster[cl.ID]
	run := w.ctx
	w.mu.Unlock()
	if ok && nw.via != cl.Spec.Kubeconfig {
		w.drop(cl.ID)
		ok = false
	}
	if run == nil || ok && (nw.informer != nil || now.Before(nw.retry)) {
		return nw
	}
	nw = &nodeWatch{via: cl.Spec.Kubeconfig}
	cs, err := client(ctx)
	if err != nil {
		nw.err, nw.retry = err, now.Add(again)
	} else {
		wctx, cancel := context.WithCancel(run)
		nw.cs, nw.cancel = cs, cancel
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0)
		nw.informer = f.Core().V1().Nodes().Informer()
		_ = nw.informer.SetTransform(slim)
		id := cl.ID
		_, _ = nw.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.changed(id) },
			DeleteFunc: func(any) { w.changed(id) },
			UpdateFunc: func(a, b any) {
				if nodeChanged(a, b) {
					w.changed(id)
				}
			},
		})
		go nw.informer.RunWithContext(wctx)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.byCluster[cl.ID]; ok && cur.informer != nil {
		// Another pass started one meanwhile: keep that one.
		if nw.cancel != nil {
			nw.cancel()
		}
		return cur
	}
	if w.ctx == nil { // stopped meanwhile
		if nw.cancel != nil {
			nw.cancel()
		}
		return nil
	}
	w.byCluster[cl.ID] = nw
	return nw
}

func (w *watches) changed(id string) {
	w.mu.Lock()
	enqueue := w.enqueue
	w.mu.Unlock()
	if enqueue != nil {
		enqueue(id)
	}
}

// slim keeps of a watched node what kpool reads (name, labels, uid,
// resourceVersion, creation time, cordon, provider id, the Ready
// condition, the kubelet's version): a real node carries its images,
// addresses, capacity and managed fields, tens of kilobytes each, which a
// fleet's watches would otherwise hold in memory.
func slim(o any) (any, error) {
	n, ok := o.(*corev1.Node)
	if !ok {
		return o, nil
	}
	out := &corev1.Node{}
	out.Name, out.UID, out.ResourceVersion, out.CreationTimestamp = n.Name, n.UID, n.ResourceVersion, n.CreationTimestamp
	out.Labels, out.DeletionTimestamp = n.Labels, n.DeletionTimestamp
	out.Spec.Unschedulable, out.Spec.ProviderID = n.Spec.Unschedulable, n.Spec.ProviderID
	out.Status.NodeInfo.KubeletVersion = n.Status.NodeInfo.KubeletVersion
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{c}
		}
	}
	return out, nil
}

// nodeChanged reports whether an update changed what kpool reads of a
// node: its labels, readiness, cordon or kubelet version (a heartbeat
// alone does not).
func nodeChanged(a, b any) bool {
	x, ok1 := a.(*corev1.Node)
	y, ok2 := b.(*corev1.Node)
	if !ok1 || !ok2 {
		return true
	}
	return kubeapi.Ready(x) != kubeapi.Ready(y) || x.Spec.Unschedulable != y.Spec.Unschedulable ||
		x.Status.NodeInfo.KubeletVersion != y.Status.NodeInfo.KubeletVersion || !equality.Semantic.DeepEqual(x.Labels, y.Labels)
}

// nodes returns the watched nodes of a cluster by the provider pool
// their cloud labels them with; ok is false while the watch has not
// listed them yet (or does not run).
func (nw *nodeWatch) nodes(poolLabel string) (map[string][]*corev1.Node, bool) {
	if nw == nil || nw.informer == nil || !nw.informer.HasSynced() || poolLabel == "" {
		return nil, false
	}
	out := map[string][]*corev1.Node{}
	for _, o := range nw.informer.GetStore().List() {
		if n, ok := o.(*corev1.Node); ok {
			out[n.Labels[poolLabel]] = append(out[n.Labels[poolLabel]], n)
		}
	}
	return out, true
}

// kubeSource returns how a cluster's Kubernetes access is got: through
// the kubeconfig credential its spec.kubeconfig names, else from its
// driver, or nil where the driver does not reach Kubernetes APIs.
func (r *clusterRun) kubeSource() kubeapi.Source {
	if r.cl.Spec.Kubeconfig != "" {
		return kubeapi.KubeconfigSource(r.c.cfg.Kubeconfigs, r.cl)
	}
	kr, ok := provider.As[provider.KubeReacher](r.d)
	if !ok {
		return nil
	}
	cl := *r.cl
	return func(ctx context.Context) (*provider.KubeAccess, error) { return kr.KubeAccess(ctx, &cl) }
}
