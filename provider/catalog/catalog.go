// Package catalog lists every platform kpool knows, once: adding a provider
// is a line here, and its driver's and emulator's in provider/catalog/clouds,
// which is apart so that what needs only profiles (the API, the CLI's client
// commands, the fake driver) links no cloud SDK.
package catalog

import (
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	"github.com/kpool/kpool/provider/civo"
	"github.com/kpool/kpool/provider/eks"
	"github.com/kpool/kpool/provider/gke"
	"github.com/kpool/kpool/provider/k3s"
	"github.com/kpool/kpool/provider/microvm"
	"github.com/kpool/kpool/provider/oke"
)

// Profiles are every platform's profile, in the order kpool lists them.
func Profiles() []provider.Profile {
	return []provider.Profile{
		aks.Profile{},
		eks.Profile{},
		gke.Profile{},
		oke.Profile{},
		civo.Profile{},
		k3s.Profile,
		microvm.Profile,
	}
}

// Registry returns a registry of every profile, without drivers.
func Registry() *provider.Registry { return provider.NewRegistry(Profiles()...) }
