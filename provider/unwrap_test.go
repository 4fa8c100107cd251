package provider_test

import (
	"testing"

	"github.com/kpool/kpool/provider"
)

// diskTyper is an optional interface a driver may offer beyond Driver.
type diskTyper interface{ DiskType(string) string }

// diskTyped is a driver with the optional DiskTyper interface.
type diskTyped struct{ provider.Unsupported }

func (diskTyped) DiskType(t string) string { return "Managed" }

// wrapper is a decorator that follows the Unwrap convention.
type wrapper struct{ provider.Driver }

func (w wrapper) Unwrap() provider.Driver { return w.Driver }

// opaque is a decorator that does not.
type opaque struct{ provider.Driver }

func TestAs(t *testing.T) {
	base := diskTyped{provider.Unsupported{Profile: provider.NoPools{Platform: "test"}}}
	tests := []struct {
		name string
		d    provider.Driver
		want bool
	}{
		{"the driver itself", base, true},
		{"through one decorator", wrapper{base}, true},
		{"through two", wrapper{wrapper{base}}, true},
		{"behind a decorator without Unwrap", wrapper{opaque{base}}, false},
		{"a driver without it", wrapper{provider.Unsupported{Profile: provider.NoPools{Platform: "test"}}}, false},
		{"no driver", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dt, ok := provider.As[diskTyper](tc.d)
			if ok != tc.want || ok && dt.DiskType("") != "Managed" {
				t.Fatalf("As = %v, %v; want found %v", dt, ok, tc.want)
			}
		})
	}
}
