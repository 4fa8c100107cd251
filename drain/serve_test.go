package drain_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/kube/kubetest"
)

// serve runs the emulators' Kubernetes API over loopback TLS with cluster
// "c1" and returns client-go's clientset built from its kubeconfig.
func serve(t *testing.T) (*kube.API, kubernetes.Interface) {
	t.Helper()
	s := kubetest.Serve(t, nil)
	return s.API, s.Clientset(t, "c1")
}

// cluster is a test's cluster: its nodes and pods, made as the kubelet and
// scheduler would.
type cluster struct {
	t   *testing.T
	api *kube.API
}

func (c cluster) node(name string) {
	c.t.Helper()
	if _, err := c.api.SetNode("c1", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		c.t.Fatal(err)
	}
	if err := c.api.SetReady("c1", name, true); err != nil {
		c.t.Fatal(err)
	}
}

// pod puts a Ready pod on a node, owned by a controller of kind (none if
// ""), with labels app=<app>.
func (c cluster) pod(name, node, app, kind string, edit ...func(*corev1.Pod)) {
	c.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name), Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if kind != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: app, UID: types.UID("uid-" + app), Controller: &yes}}
	}
	for _, e := range edit {
		e(p)
	}
	if _, err := c.api.SetPod("c1", p); err != nil {
		c.t.Fatal(err)
	}
	if p.Status.Phase != "" {
		return
	}
	if err := c.api.SetPodReady("c1", "shop", name, true); err != nil {
		c.t.Fatal(err)
	}
}
