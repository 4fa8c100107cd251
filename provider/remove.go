package provider

import (
	"context"

	"github.com/kpool/kpool"
)

// NodeRef names one node of a pool: its Kubernetes name and its
// spec.providerID (the cloud's instance: azure:///…/virtualMachines/N,
// gce://project/zone/instance, oci://ocid, civo://id), as the cluster's
// Kubernetes API has them.
type NodeRef struct {
	Name       string
	ProviderID string
}

// NodeRemover is a driver that removes chosen nodes of a pool and lowers
// its count by as many: AKS's agent pool deleteMachines, GKE's managed
// instance group deleteInstances, OKE's DeleteNode with isDecrementSize,
// Civo's instance delete. kpool's controllers drain the nodes first, so a
// scale-down takes only nodes whose pods were moved under their budgets;
// on a provider without it, the cloud picks the nodes a scale-down takes.
// A node the provider no longer has is not an error (it is gone); a node
// that is not the pool's is refused (a validation error) and nothing is
// removed.
type NodeRemover interface {
	NodePoolRemoveNodes(ctx context.Context, c *kpool.Cluster, providerName string, nodes []NodeRef) error
}
