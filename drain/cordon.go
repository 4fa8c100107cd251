package drain

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Cordon marks a node unschedulable so that no new pod lands on it, as
// `kubectl cordon` does (k8s.io/kubectl pkg/drain/cordon.go: a patch of
// spec.unschedulable). A node already cordoned is left as it is (no write).
func Cordon(ctx context.Context, cs kubernetes.Interface, node string) error {
	return schedulable(ctx, cs, node, false)
}

// Uncordon makes a node schedulable again (`kubectl uncordon`); a node
// already schedulable is left as it is.
func Uncordon(ctx context.Context, cs kubernetes.Interface, node string) error {
	return schedulable(ctx, cs, node, true)
}

// schedulable reads the node and patches spec.unschedulable only when it
// differs, as kubectl's CordonHelper.UpdateIfRequired does.
func schedulable(ctx context.Context, cs kubernetes.Interface, node string, on bool) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if n.Spec.Unschedulable == !on {
		return nil
	}
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, !on)
	_, err = cs.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}
