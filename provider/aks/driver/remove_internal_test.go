package driver

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// machineNames: a node is its machine by providerID (ids compared without
// case) or, without one, by name; a node of the pool's scale set that is
// not listed is gone; another pool's, another scale set's of the same
// pool name (another cluster), another subscription's, a providerID that
// is no scale set instance, a name of another pool: refused.
func TestMachineNames(t *testing.T) {
	const sub = "0b1f6471-1bf0-4dda-aec3-111122223333"
	a := &kpool.AzureCluster{SubscriptionID: sub}
	vm := func(sub, rg, set, i string) string {
		return "/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + set + "/virtualMachines/" + i
	}
	machines := []machineRef{
		{name: "aks-web-1234-vmss000000", id: strings.ToLower(vm(sub, "MC_rg_c_westeurope", "aks-web-1234-vmss", "0"))},
		{name: "aks-web-1234-vmss000001", id: strings.ToLower(vm(sub, "MC_rg_c_westeurope", "aks-web-1234-vmss", "1"))},
	}
	ok := func(nodes []provider.NodeRef, want ...string) {
		t.Helper()
		got, err := machineNames(a, "web", machines, nodes)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%v: %v, %v; want %v", nodes, got, err, want)
		}
	}
	refused := func(n provider.NodeRef) {
		t.Helper()
		_, err := machineNames(a, "web", machines, []provider.NodeRef{{Name: "aks-web-1234-vmss000000"}, n})
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindValidation {
			t.Fatalf("%+v: %v, want a validation error", n, err)
		}
	}
	ok([]provider.NodeRef{
		{Name: "x", ProviderID: "azure://" + vm(sub, "mc_rg_c_westeurope", "aks-web-1234-vmss", "1")},
		{Name: "aks-web-1234-vmss000001"},
		{Name: "AKS-WEB-1234-VMSS000000"},
	}, "aks-web-1234-vmss000001", "aks-web-1234-vmss000000")
	ok([]provider.NodeRef{
		{Name: "aks-web-1234-vmss000002", ProviderID: "azure://" + vm(sub, "mc_rg_c_westeurope", "aks-web-1234-vmss", "2")},
		{Name: "aks-web-1234-vmss00000a"},
	})
	refused(provider.NodeRef{Name: "aks-api-1234-vmss000000"})
	refused(provider.NodeRef{Name: "n", ProviderID: "azure://" + vm(sub, "mc_rg_c_westeurope", "aks-api-1234-vmss", "0")})
	refused(provider.NodeRef{Name: "n", ProviderID: "azure://" + vm(sub, "mc_other_c2_westeurope", "aks-web-1234-vmss", "7")})
	refused(provider.NodeRef{Name: "n", ProviderID: "azure://" + vm("11111111-1bf0-4dda-aec3-111122223333", "mc_rg_c_westeurope", "aks-web-1234-vmss", "7")})
	refused(provider.NodeRef{Name: "n", ProviderID: "other://p/z/aks-web-1234-vmss000000"})
	refused(provider.NodeRef{Name: "n", ProviderID: "azure:///subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-web-1234-vm0"})
}
