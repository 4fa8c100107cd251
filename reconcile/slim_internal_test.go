package reconcile

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// realNode is a node as a real cluster's API server answers it: its
// images, conditions, addresses, capacity and managed fields.
func realNode() *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "aks-web-12345678-vmss000000", UID: "u", ResourceVersion: "42",
		Labels: map[string]string{"kubernetes.azure.com/agentpool": "web", "kompox.dev/node-pool": "web"}}}
	for i := range 60 {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{SizeBytes: 123456789,
			Names: []string{fmt.Sprintf("mcr.microsoft.com/oss/kubernetes/image-%d@sha256:%s", i, strings.Repeat("a", 64)), fmt.Sprintf("mcr.microsoft.com/oss/kubernetes/image-%d:v1.2.3", i)}})
	}
	for _, t := range []corev1.NodeConditionType{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready", "KernelDeadlock", "FrequentKubeletRestart", "FilesystemCorruptionProblem"} {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficient", Message: "kubelet has sufficient resources available"})
	}
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")}
	n.Status.Allocatable = n.Status.Capacity
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.224.0.4"}, {Type: corev1.NodeHostName, Address: n.Name}}
	var fields []string
	for i := range 40 {
		fields = append(fields, fmt.Sprintf(`"k:{\"type\":\"Condition%d\"}":{".":{},"f:lastHeartbeatTime":{},"f:message":{}}`, i))
	}
	for range 6 {
		n.ManagedFields = append(n.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubelet", Operation: "Update",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{` + strings.Join(fields, ",") + `}}}`)}})
	}
	return n
}

// TestSlim: what a watch keeps of a node is what kpool reads of it.
func TestSlim(t *testing.T) {
	n := realNode()
	n.Spec.Unschedulable = true
	n.Status.NodeInfo.KubeletVersion = "v1.30.4"
	o, _ := slim(n)
	s := o.(*corev1.Node)
	if s.Name != n.Name || s.Labels["kompox.dev/node-pool"] != "web" || !s.Spec.Unschedulable || s.Status.NodeInfo.KubeletVersion != "v1.30.4" ||
		len(s.Status.Conditions) != 1 || s.Status.Conditions[0].Type != corev1.NodeReady || s.ResourceVersion != "42" || len(s.Status.Images) != 0 {
		t.Fatalf("slim: %+v", s)
	}
}

// BenchmarkSlim reports the bytes (as JSON) a watched node holds before
// and after slim, and slim's cost per node.
func BenchmarkSlim(b *testing.B) {
	n := realNode()
	full, err := json.Marshal(n)
	if err != nil {
		b.Fatal(err)
	}
	o, _ := slim(n)
	kept, _ := json.Marshal(o)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = slim(n)
	}
	b.ReportMetric(float64(len(full)), "full-bytes/node")
	b.ReportMetric(float64(len(kept)), "kept-bytes/node")
}
