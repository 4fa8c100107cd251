package kpool_test

import (
	"testing"

	"github.com/kpool/kpool"
)

func TestMayReportAs(t *testing.T) {
	reserved := []string{"aks-nodepool-controller", "gcp-nodepool-controller"}
	for _, tc := range []struct {
		name string
		id   kpool.Identity
		as   string
		ok   bool
	}{
		{"bare controller, own name", kpool.Identity{Controller: true}, "my-controller", true},
		{"bare controller, built-in name", kpool.Identity{Controller: true}, "gcp-nodepool-controller", false},
		{"granted built-in name", kpool.Identity{Controller: true, ControllerNames: []string{"gcp-nodepool-controller"}}, "gcp-nodepool-controller", true},
		{"granted, other name", kpool.Identity{Controller: true, ControllerNames: []string{"gcp-nodepool-controller"}}, "aks-nodepool-controller", false},
		{"granted, unreserved other name", kpool.Identity{Controller: true, ControllerNames: []string{"mine"}}, "yours", false},
		{"kpool's own", kpool.Identity{Controller: true, System: true}, "aks-nodepool-controller", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.id.MayReportAs(tc.as, reserved)
			if tc.ok != (err == nil) {
				t.Fatalf("got %v", err)
			}
			if err != nil {
				e := err.(*kpool.Error)
				if e.Code != kpool.CodeForbidden || len(e.Fields) != 1 || e.Fields[0].Field != "controller_name" {
					t.Fatalf("error %+v", e)
				}
			}
		})
	}
}
