package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// ErrNoAccess is the answer for a cluster whose driver does not reach
// Kubernetes APIs (a platform without one, or no driver here).
var ErrNoAccess = errors.New("kpool does not reach this cluster's Kubernetes API")

// Clusters reaches the Kubernetes APIs of the clusters of the registered
// drivers: a live node list (kpool.NodeSource, where no controller watches)
// and kpool's read-only proxy's transport (kpool.KubeProxy).
type Clusters struct {
	Drivers *provider.Registry
	// Kubeconfigs resolve the clusters' spec.kubeconfig: a cluster that
	// names one is reached through it instead of its driver.
	Kubeconfigs provider.Kubeconfigs

	mu         sync.Mutex
	transports map[string]transport // cluster id → its proxy's transport
}

type transport struct {
	via    string // the cluster's spec.kubeconfig when it was made
	server string
	url    *url.URL
	rt     http.RoundTripper
}

// Source returns how cl's access is got: its spec.kubeconfig's credential
// when it names one, else its driver's KubeAccess.
func (k *Clusters) Source(cl *kpool.Cluster) (Source, error) {
	if cl.Spec.Kubeconfig != "" {
		return KubeconfigSource(k.Kubeconfigs, cl), nil
	}
	t := cl.Spec.Platform.Type
	if k.Drivers == nil || !k.Drivers.HasDriver(t) {
		return nil, ErrNoAccess
	}
	r, ok := provider.As[provider.KubeReacher](k.Drivers.Driver(t))
	if !ok {
		return nil, ErrNoAccess
	}
	c := *cl
	return func(ctx context.Context) (*provider.KubeAccess, error) { return r.KubeAccess(ctx, &c) }, nil
}

// Clientset returns client-go's clients of cl's API.
func (k *Clusters) Clientset(ctx context.Context, cl *kpool.Cluster) (kubernetes.Interface, error) {
	src, err := k.Source(cl)
	if err != nil {
		return nil, err
	}
	return Clientset(ctx, src)
}

// ClusterNodes lists cl's nodes at its API, as kpool reads them.
func (k *Clusters) ClusterNodes(ctx context.Context, cl *kpool.Cluster) ([]kpool.Node, error) {
	cs, err := k.Clientset(ctx, cl)
	if err != nil {
		return nil, err
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's nodes: %w", err)
	}
	prof := k.Drivers.Profile(cl.Spec.Platform.Type)
	out := make([]kpool.Node, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, NodeOf(&list.Items[i], prof, cl))
	}
	return out, nil
}

// KubeTransport returns cl's API server and a round tripper that carries
// kpool's access to it, kept per cluster (its token renewed as it ages).
func (k *Clusters) KubeTransport(ctx context.Context, cl *kpool.Cluster) (*url.URL, http.RoundTripper, error) {
	k.mu.Lock()
	t, ok := k.transports[cl.ID]
	k.mu.Unlock()
	if ok && t.via == cl.Spec.Kubeconfig {
		return t.url, t.rt, nil
	}
	src, err := k.Source(cl)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := Config(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, nil, err
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	k.mu.Lock()
	if k.transports == nil {
		k.transports = map[string]transport{}
	}
	k.transports[cl.ID] = transport{via: cl.Spec.Kubeconfig, server: cfg.Host, url: u, rt: rt}
	k.mu.Unlock()
	return u, rt, nil
}

// NodeOf is a node as kpool shows it: its pool by the cloud's pool label,
// its logical zone, its kubelet's version, Ready and cordoned.
func NodeOf(n *corev1.Node, prof provider.Profile, cl *kpool.Cluster) kpool.Node {
	native := n.Labels[corev1.LabelTopologyZone]
	out := kpool.Node{Name: n.Name, NativeZone: native, InstanceType: n.Labels[corev1.LabelInstanceTypeStable],
		Version: n.Status.NodeInfo.KubeletVersion, Ready: Ready(n), Cordoned: n.Spec.Unschedulable, CreatedAt: n.CreationTimestamp.Time}
	if prof != nil {
		if l := prof.PoolLabel(); l != "" {
			out.Pool = n.Labels[l]
		}
		if native != "" {
			if z, err := prof.LogicalZone(cl, native); err == nil {
				out.Zone = z
			}
		}
	}
	return out
}

// Ready reports whether a node's kubelet says it is Ready.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Missing returns the keys of want that a node's labels lack or hold with
// another value, sorted.
func Missing(labels, want map[string]string) []string {
	var out []string
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
