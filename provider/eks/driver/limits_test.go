package driver_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kpool/kpool/provider"
)

// TestQuotas: EKS's service quotas (30 managed node groups per cluster,
// 450 nodes per managed node group: ResourceLimitExceededException) are
// the account's, not the spec's: KindQuota, on the field they are about.
func TestQuotas(t *testing.T) {
	e := newEmulated(t)
	big := e.Harness(t).Spec("big")
	big.Autoscaling, big.MinCount, big.MaxCount, big.Count = true, 1, 451, 3
	_, err := e.Driver.NodePoolCreate(ctx, e.Cluster, big)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindQuota || pe.Field != "spec.autoscaling.maxNodes" {
		t.Fatalf("451 nodes: %v, want a quota error on spec.autoscaling.maxNodes", err)
	}
	// EKS's error code and request id, for the controllers' log.
	if pe.Code == "" || pe.RequestID == "" {
		t.Errorf("451 nodes: code %q, request id %q: want EKS's", pe.Code, pe.RequestID)
	}
	for i := range 30 {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.Harness(t).Spec(fmt.Sprintf("p%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.Harness(t).Spec("p30")); !provider.IsQuota(err) {
		t.Fatalf("the 31st node group: %v, want a quota error", err)
	}
}

// TestReleaseRollback: EKS rolls a node group's AMI release forward only;
// asking for an older one is refused, on the version field.
func TestReleaseRollback(t *testing.T) {
	e := newEmulated(t)
	s := e.Harness(t).Spec("web")
	s.Version = "1.31.2-20260301"
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	s.Version = "1.31.2-20250101"
	_, err := e.Driver.NodePoolUpdate(ctx, e.Cluster, s)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.kubernetesVersion" {
		t.Fatalf("rollback: %v, want refused on spec.kubernetesVersion", err)
	}
}
