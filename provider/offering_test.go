package provider_test

import (
	"reflect"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
)

// Every profile with pools takes an offering into its block and reads the
// same one back, and writing back what it read changes no other field.
func TestOfferingRoundTrip(t *testing.T) {
	reg := catalog.Registry()
	for _, p := range reg.Profiles() {
		if !p.Capabilities().NodePools {
			continue
		}
		t.Run(string(p.Type()), func(t *testing.T) {
			c := &kpool.Cluster{Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: p.Type()}}}
			s := &kpool.NodePoolSpec{Platform: kpool.NodePoolPlatform{Type: p.Type()}, Zones: []string{"1", "2"}}
			want := kpool.Offering{Zone: "2", MachineType: "type-a", Spot: true}
			reg.SetOffering(c, s, want)
			if got := reg.Offering(c, s); got.MachineType != want.MachineType || got.Zone != "2" {
				t.Fatalf("Offering = %+v, want %+v", got, want)
			}
			before := p.Block(c, s).Fields
			reg.SetOffering(c, s, reg.Offering(c, s))
			if after := p.Block(c, s).Fields; !reflect.DeepEqual(before, after) {
				t.Fatalf("writing back what was read changed the block:\n%v\n%v", before, after)
			}
		})
	}
}
