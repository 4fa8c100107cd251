package clouds_test

import (
	"reflect"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// TestOneLinePerCloud: every platform of provider/catalog that has pools
// has one cloud here, and each cloud's profile, driver and emulator are of
// one platform, the driver's and emulator's in the profile's folders.
func TestOneLinePerCloud(t *testing.T) {
	byType := map[string]clouds.Cloud{}
	for _, c := range clouds.All() {
		byType[string(c.Profile.Type())] = c
	}
	for _, p := range catalog.Profiles() {
		c, ok := byType[string(p.Type())]
		if p.Capabilities().NodePools != ok {
			t.Errorf("platform %s: pools %v, a cloud here %v", p.Type(), p.Capabilities().NodePools, ok)
			continue
		}
		if !ok {
			continue
		}
		if reflect.TypeOf(c.Profile) != reflect.TypeOf(p) {
			t.Errorf("%s: the profile is %T here, %T in the catalog", c.Name, c.Profile, p)
		}
		d := c.Driver(provider.DriverOptions{})
		if d.Capabilities().Provider != p.Type() {
			t.Errorf("%s: the driver is %s's", c.Name, d.Capabilities().Provider)
		}
		emu, err := c.Emulator(sim.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if pt, _ := emu.Identity(); pt != p.Type() {
			t.Errorf("%s: the emulator is %s's", c.Name, pt)
		}
		folder := reflect.TypeOf(c.Profile).PkgPath()
		for what, v := range map[string]any{"driver": d, "emulator": emu} {
			if got, want := reflect.TypeOf(v).Elem().PkgPath(), folder+"/driver"; what == "driver" && got != want {
				t.Errorf("%s: the driver is in %s, want %s", c.Name, got, want)
			}
			if got := reflect.TypeOf(v).Elem().PkgPath(); what == "emulator" && got != "github.com/kpool/kpool/cloudsim/"+c.Name {
				t.Errorf("%s: the emulator is in %s", c.Name, got)
			}
		}
		if folder != "github.com/kpool/kpool/provider/"+c.Name {
			t.Errorf("%s: the profile is in %s", c.Name, folder)
		}
	}
}
