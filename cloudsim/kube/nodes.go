package kube

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSpec is one node of a cloud pool as the cloud makes it: its name,
// the labels and taints the cloud puts on it (its own and the pool's),
// whether its kubelet is up, and what it runs. A cloud emulator hands the
// nodes of each pool to SyncNodes whenever its view of the pool changes.
type NodeSpec struct {
	Name           string
	Labels         map[string]string
	Taints         []corev1.Taint
	Ready          bool
	KubeletVersion string // "v1.30.4"
	ProviderID     string // "azure:///subscriptions/…"
	InternalIP     string
}

// Propagation says what a cloud does to the nodes a pool already has when
// the pool's labels or taints change.
type Propagation int

const (
	// Propagate: the cloud changes existing nodes too (AKS, EKS, GKE:
	// a pool's label update reaches its nodes).
	Propagate Propagation = iota
	// AtCreate: only nodes made after the change get it (OKE's
	// initialNodeLabels are the labels of new nodes).
	AtCreate
)

// applied is what the cloud last put on a node: SyncNodes changes only
// what the cloud changed since, so that a label another client added or
// removed (kubectl label, kpool's repair) stays as that client left it, as
// on a real cluster, where the cloud writes a node when it changes it.
type applied struct {
	labels  map[string]string
	taints  []corev1.Taint
	ready   bool
	version string
}

// SyncNodes makes the nodes of one cloud pool in cluster id what the cloud
// has: the nodes labelled poolLabel=pool that nodes does not name are
// deleted (scaled down, replaced), those it names and the cluster lacks are
// created (labels, taints, Ready as given, the kubelet's standard labels
// added), and for the others what the cloud changed since its last sync is
// applied (labels and taints as p says, readiness, kubelet version); what
// other clients changed is kept. Every write streams to the watches. With
// poolLabel "" (a cloud that labels no node with its pool: OKE) nothing is
// deleted here: the caller deletes the nodes its pool no longer has.
func (a *API) SyncNodes(id, poolLabel, pool string, nodes []NodeSpec, p Propagation) {
	want := map[string]NodeSpec{}
	for _, n := range nodes {
		want[n.Name] = n
	}
	a.mu.Lock()
	c := a.cluster(id)
	if c.applied == nil {
		c.applied = map[string]applied{}
	}
	var gone []string
	for _, o := range c.objects(nodeRes) {
		if poolLabel != "" && o.GetLabels()[poolLabel] == pool {
			if _, ok := want[o.GetName()]; !ok {
				gone = append(gone, o.GetName())
			}
		}
	}
	a.mu.Unlock()
	slices.Sort(gone)
	for _, name := range gone {
		_ = a.DeleteNode(id, name)
		a.mu.Lock()
		delete(c.applied, name)
		a.mu.Unlock()
	}
	names := slices.Sorted(maps.Keys(want))
	for _, name := range names {
		a.syncNode(id, c, want[name], p)
	}
}

// syncNode creates or changes one node of SyncNodes.
func (a *API) syncNode(id string, c *cluster, s NodeSpec, p Propagation) {
	n, exists := a.Node(id, s.Name)
	a.mu.Lock()
	last, known := c.applied[s.Name]
	a.mu.Unlock()
	now := applied{labels: maps.Clone(s.Labels), taints: slices.Clone(s.Taints), ready: s.Ready, version: s.KubeletVersion}
	if !exists {
		n = newNode(s)
	} else {
		before := n.DeepCopy()
		if !known {
			last = applied{ready: nodeReady(n), version: n.Status.NodeInfo.KubeletVersion}
		}
		if p == Propagate {
			n.Labels = mergeChange(n.Labels, last.labels, s.Labels)
			n.Spec.Taints = taintChange(n.Spec.Taints, last.taints, s.Taints)
		} else {
			now.labels, now.taints = last.labels, last.taints
		}
		if s.KubeletVersion != last.version {
			n.Status.NodeInfo.KubeletVersion = s.KubeletVersion
			n.Labels["node.kubernetes.io/kubelet-version"] = s.KubeletVersion
		}
		if s.Ready != last.ready {
			setCondition(&n.Status.Conditions, readyCondition(s.Ready))
		}
		if equality.Semantic.DeepEqual(before, n) {
			a.mu.Lock()
			c.applied[s.Name] = now
			a.mu.Unlock()
			return
		}
	}
	if _, err := a.SetNode(id, n); err != nil {
		return
	}
	a.mu.Lock()
	c.applied[s.Name] = now
	a.mu.Unlock()
}

// newNode is a node as its kubelet registers it, with the cloud's labels
// and the kubelet's own (hostname, os, arch).
func newNode(s NodeSpec) *corev1.Node {
	labels := map[string]string{"kubernetes.io/hostname": s.Name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}
	maps.Copy(labels, s.Labels)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: s.ProviderID, Taints: slices.Clone(s.Taints)},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{readyCondition(s.Ready)},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: s.KubeletVersion, OperatingSystem: "linux", Architecture: "amd64",
				ContainerRuntimeVersion: "containerd://1.7.27", KernelVersion: "6.8.0-1021", OSImage: "Ubuntu 22.04.5 LTS"},
		},
	}
	if s.InternalIP != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: s.InternalIP}, {Type: corev1.NodeHostName, Address: s.Name}}
	}
	return n
}

func readyCondition(ready bool) corev1.NodeCondition {
	c := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
		Message: "container runtime status check may not have completed yet", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	if ready {
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"
	}
	return c
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// mergeChange applies to cur the change from was to now: keys gone from
// now (still holding was's value) are removed, keys new or changed in now
// are set; everything else in cur is kept.
func mergeChange(cur, was, now map[string]string) map[string]string {
	out := maps.Clone(cur)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range was {
		if _, ok := now[k]; !ok && out[k] == v {
			delete(out, k)
		}
	}
	for k, v := range now {
		if w, ok := was[k]; !ok || w != v {
			out[k] = v
		}
	}
	return out
}

// taintChange applies to cur the change from was to now, as mergeChange
// does for labels (a taint is its key and effect).
func taintChange(cur, was, now []corev1.Taint) []corev1.Taint {
	if equality.Semantic.DeepEqual(was, now) {
		return cur
	}
	has := func(list []corev1.Taint, t corev1.Taint) bool {
		return slices.ContainsFunc(list, func(x corev1.Taint) bool { return x.Key == t.Key && x.Effect == t.Effect })
	}
	var out []corev1.Taint
	for _, t := range cur {
		if !has(was, t) && !has(now, t) {
			out = append(out, t)
		}
	}
	return append(out, now...)
}

// SetTokenCheck makes cluster id accept, besides its own token, the bearer
// tokens check accepts: a cloud's own tokens (an EKS token from STS, an
// OKE token signed with the caller's key, a Google access token).
func (a *API) SetTokenCheck(id string, check func(token string) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cluster(id).check = check
}

// SetRefresh sets what runs before each request to a cluster's API, with
// the cluster's id and no lock held: a cloud emulator brings its pools
// (and so their nodes) up to the clock, as the cloud's own work goes on
// whether or not its API is called.
func (a *API) SetRefresh(refresh func(id string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refresh = refresh
}

// allowed checks a request's bearer token against the cluster's token and
// its token check.
func (c *cluster) allowed(r *http.Request) bool {
	if authorized(r, c.token) {
		return true
	}
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "bearer") && c.check != nil && c.check(strings.TrimSpace(got))
}

// Watches is how many watches of a cluster's API are open, by resource
// ("nodes", "pods", "poddisruptionbudgets.policy"): what a client holds open.
func (a *API) Watches(id string) map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for w := range a.cluster(id).watchers {
		out[w.res.gr.String()]++
	}
	return out
}
