// Package clouds lists, once, every cloud kpool drives: its profile, its
// driver's constructor and its emulator. kpool serve, dev and cloudsim and
// the controllers' soak iterate it; nothing else names a cloud's driver or
// emulator.
//
// It is provider/catalog's sibling, not the catalog itself, because it
// links every cloud's SDK and emulator: the packages that need only the
// profiles (the API, the CLI's client commands, the fake driver, the
// conformance suites) import provider/catalog and build without them.
package clouds

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	ekssim "github.com/kpool/kpool/cloudsim/eks"
	gkesim "github.com/kpool/kpool/cloudsim/gke"
	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/aks"
	aksdriver "github.com/kpool/kpool/provider/aks/driver"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/civo"
	civodriver "github.com/kpool/kpool/provider/civo/driver"
	"github.com/kpool/kpool/provider/eks"
	eksdriver "github.com/kpool/kpool/provider/eks/driver"
	"github.com/kpool/kpool/provider/gke"
	gkedriver "github.com/kpool/kpool/provider/gke/driver"
	"github.com/kpool/kpool/provider/oke"
	okedriver "github.com/kpool/kpool/provider/oke/driver"
)

// Cloud is one cloud kpool drives.
type Cloud struct {
	// Name is the cloud's in kpool cloudsim --providers: its folders'
	// (provider/<name>, cloudsim/<name>).
	Name    string
	Profile provider.Profile
	// Driver builds its driver (provider/<name>/driver's New).
	Driver provider.NewDriver
	// Emulator builds its emulator with its demo data (cloudsim/<name>'s
	// Demo).
	Emulator cloudsim.Maker
}

// All are the clouds, in the order provider/catalog lists their profiles.
func All() []Cloud {
	return []Cloud{
		{"aks", aks.Profile{}, provider.Constructor(aksdriver.New), emulator(aksim.Demo)},
		{"eks", eks.Profile{}, provider.Constructor(eksdriver.New), emulator(ekssim.Demo)},
		{"gke", gke.Profile{}, provider.Constructor(gkedriver.New), emulator(gkesim.Demo)},
		{"oke", oke.Profile{}, provider.Constructor(okedriver.New), emulator(okesim.Demo)},
		{"civo", civo.Profile{}, provider.Constructor(civodriver.New), emulator(civosim.Demo)},
	}
}

// emulator is an emulator package's Demo as a cloudsim.Maker.
func emulator[E cloudsim.Emulator](demo func(sim.Options) (E, error)) cloudsim.Maker {
	return func(o sim.Options) (cloudsim.Emulator, error) { return demo(o) }
}

// Registry returns every platform's profile (provider/catalog's) and every
// cloud's driver, built with o.
func Registry(o provider.DriverOptions) *provider.Registry {
	r := catalog.Registry()
	for _, c := range All() {
		r.Add(c.Driver(o))
	}
	return r
}

// Emulators are the clouds' emulators by name, for cloudsim.Config.
func Emulators() map[string]cloudsim.Maker {
	out := map[string]cloudsim.Maker{}
	for _, c := range All() {
		out[c.Name] = c.Emulator
	}
	return out
}

// Names are the clouds' names, sorted.
func Names() []string { return slices.Sorted(maps.Keys(Emulators())) }

// Of returns the cloud of a platform.
func Of(t kpool.PlatformType) (Cloud, error) {
	for _, c := range All() {
		if c.Profile.Type() == t {
			return c, nil
		}
	}
	return Cloud{}, fmt.Errorf("kpool drives no cloud of platform %q", t)
}
