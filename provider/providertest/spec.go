package providertest

import (
	"fmt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// Spec builds a valid spec the way kpool does: Desired of a pool in the
// cluster, with its provider name derived.
func Spec(c *kpool.Cluster, name string, spec kpool.NodePoolSpec) provider.PoolSpec {
	p := catalog.Registry().Profile(c.Spec.Platform.Type)
	kpool.DefaultNodePoolSpec(&spec, c, p.Region(&c.Spec))
	pn, err := provider.ProviderName(p.Capabilities(), name, nil)
	if err != nil {
		panic(err)
	}
	s, err := provider.Desired(p, c, &kpool.NodePool{Name: name, Spec: spec, ProviderName: pn})
	if err != nil {
		panic(fmt.Sprintf("providertest: %v", err))
	}
	return s
}
