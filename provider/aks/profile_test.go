package aks

import (
	"errors"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

func TestPremiumStorage(t *testing.T) {
	for _, tc := range []struct {
		size           string
		premium, known bool
	}{
		{"Standard_D4s_v5", true, true},
		{"Standard_D4s_v3", true, true},
		{"Standard_DS2_v2", true, true},
		{"Standard_GS5", true, true},
		{"Standard_B2ms", true, true},
		{"Standard_E64-16ds_v4", true, true},
		{"Standard_NC24ads_A100_v4", true, true},
		{"Standard_NC6s_v3", true, true},
		{"Standard_D2plds_v5", true, true},
		{"Standard_M128ms", true, true},
		{"Standard_D4_v3", false, true},
		{"Standard_D4d_v5", false, true},
		{"Standard_A2_v2", false, true},
		{"Standard_NC6", false, true},
		{"Standard_F4", false, true},
		{"", false, false},
		{"d4s", false, false},
		{"Standard_", false, false},
	} {
		if premium, known := PremiumStorage(tc.size); premium != tc.premium || known != tc.known {
			t.Errorf("PremiumStorage(%q) = %v, %v; want %v, %v", tc.size, premium, known, tc.premium, tc.known)
		}
	}
}

// TestOSDiskType: AKS agent pools take Managed or Ephemeral; the guide's
// Premium_LRS is a Managed disk on a size with premium storage and is
// refused, naming the field, where AKS would give a standard disk.
func TestOSDiskType(t *testing.T) {
	for _, tc := range []struct {
		diskType, vmSize string
		bad              string // what the error says; "" for none
	}{
		{"", "Standard_D4_v3", ""},
		{"Managed", "Standard_D4_v3", ""},
		{"managed", "Standard_D4s_v5", ""},
		{"Ephemeral", "Standard_D4ds_v5", ""},
		{"Premium_LRS", "Standard_D4s_v3", ""},
		{"premium_lrs", "Standard_DS2_v2", ""},
		{"Premium_LRS", "", ""},              // no size yet: nothing to judge by
		{"Premium_LRS", "Custom_Size_1", ""}, // not Azure's naming: AKS judges
		{"Premium_LRS", "Standard_D4_v3", "premium storage"},
		{"Premium_LRS", "Standard_A2_v2", "premium storage"},
		{"StandardSSD_LRS", "Standard_D4s_v5", "Managed or Ephemeral"},
		{"Standard_LRS", "Standard_D4_v3", "Managed or Ephemeral"},
		{"Premium_ZRS", "Standard_D4s_v5", "Managed or Ephemeral"},
		{"UltraSSD_LRS", "Standard_D4s_v5", "Managed or Ephemeral"},
		{"fast", "Standard_D4s_v5", "Managed or Ephemeral"},
	} {
		t.Run(tc.diskType+"/"+tc.vmSize, func(t *testing.T) {
			s := &kpool.NodePoolSpec{Platform: kpool.NodePoolPlatform{Type: kpool.PlatformAzure,
				Azure: &kpool.AzureNodePool{VMSize: tc.vmSize, OSDiskType: tc.diskType}}}
			var fe kpool.FieldErrors
			Profile{}.ValidateBlock(&fe, s, nil)
			switch {
			case tc.bad == "" && len(fe) > 0:
				t.Fatalf("refused: %v", fe)
			case tc.bad != "" && (len(fe) != 1 || fe[0].Field != "spec.platform.azure.osDiskType" || !strings.Contains(fe[0].Reason, tc.bad)):
				t.Fatalf("got %v, want an error on spec.platform.azure.osDiskType saying %q", fe, tc.bad)
			}
		})
	}
}

// TestDiskTypeDrift: a pool asked for with Premium_LRS reports Managed
// and is not drift; Ephemeral against Managed is.
func TestDiskTypeDrift(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		drift     bool
	}{
		{"Premium_LRS", "Managed", false},
		{"Managed", "Managed", false},
		{"Ephemeral", "Ephemeral", false},
		{"Ephemeral", "Managed", true},
		{"Premium_LRS", "Ephemeral", true},
	} {
		want := provider.PoolSpec{ProviderName: "web", MachineType: "Standard_D4s_v5", DiskType: tc.want}
		got := &provider.Pool{PoolSpec: provider.PoolSpec{ProviderName: "web", MachineType: "Standard_D4s_v5", DiskType: tc.got}}
		drift := false
		for _, d := range provider.Compare(Profile{}, want, got) {
			drift = drift || d.Field == provider.FieldDisk
		}
		if drift != tc.drift {
			t.Errorf("%s vs %s: drift %v, want %v", tc.want, tc.got, drift, tc.drift)
		}
	}
}

// TestEndpointMustBeTLS: an http:// endpoint is refused when the cluster is
// registered, on spec.endpoint: the SDK never sends a token over it, so the
// controllers could only fail.
func TestEndpointMustBeTLS(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		ok       bool
	}{
		{"", true},
		{"https://management.azure.com", true},
		{"http://127.0.0.1:8080", false},
		{"HTTP://arm.example", false},
	} {
		s := &kpool.ClusterSpec{Endpoint: tc.endpoint, Platform: kpool.ClusterPlatform{Type: Type,
			Azure: &kpool.AzureCluster{SubscriptionID: "0b1f6471-1bf0-4dda-aec3-111122223333", ResourceGroup: "rg", ClusterName: "c"}}}
		var fe kpool.FieldErrors
		Profile{}.ValidateCluster(&fe, s)
		if got := len(fe) == 0; got != tc.ok {
			t.Errorf("%q: errors %v, want ok=%v", tc.endpoint, fe, tc.ok)
		}
		for _, e := range fe {
			if e.Field != "spec.endpoint" {
				t.Errorf("%q: error on %s, want spec.endpoint", tc.endpoint, e.Field)
			}
		}
	}
}

// TestZones: Azure regions have zones 1 to 3; AKS refuses any other, and
// so does kpool, whichever way the zone is written.
func TestZones(t *testing.T) {
	c := &kpool.Cluster{Name: "aks", Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: Type, Azure: &kpool.AzureCluster{Location: "westeurope"}}}}
	for _, tc := range []struct {
		zone    string
		logical string // "" when refused
	}{
		{"1", "1"}, {"3", "3"}, {"westeurope-2", "2"}, {"WestEurope-3", "3"},
		{"4", ""}, {"westeurope-4", ""}, {"0", ""}, {"northeurope-1", ""},
	} {
		got, err := Profile{}.LogicalZone(c, tc.zone)
		if got != tc.logical || (err != nil) != (tc.logical == "") {
			t.Errorf("LogicalZone(%q) = %q, %v; want %q", tc.zone, got, err, tc.logical)
		}
	}
	if _, err := (Profile{}).ProviderZone(c, "4"); err == nil || !strings.Contains(err.Error(), "1, 2 and 3") {
		t.Errorf("ProviderZone(4): %v", err)
	}
}

// A public AKS cluster's API server is under azmk8s.io (hcp.<region> or a
// private cluster's privatelink.<region>); any other host, a look-alike
// or plain http is refused, and a cluster with its own endpoint gets no
// such allowance.
func TestKubeHosts(t *testing.T) {
	public := &kpool.Cluster{Spec: kpool.ClusterSpec{Platform: kpool.ClusterPlatform{Type: Type, Azure: &kpool.AzureCluster{}}}}
	for server, ok := range map[string]bool{
		"https://prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io:443":      true,
		"https://prod-1a2b3c4d.3f9e.privatelink.westeurope.azmk8s.io": true,
		"https://PROD-DNS-1A2B3C4D.HCP.WESTEUROPE.AZMK8S.IO":          true,
		"http://prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io":           false,
		"https://azmk8s.io.example.net":                               false,
		"https://evilazmk8s.io":                                       false,
		"https://20.1.2.3:443":                                        false,
		"https://kube.example.net":                                    false,
	} {
		err := provider.CheckKubeServer(Profile{}, nil, public, server)
		var rh *provider.RefusedHostError
		if (err == nil) != ok || (err != nil && !errors.As(err, &rh)) {
			t.Errorf("%s: %v, want allowed %v", server, err, ok)
		}
	}
	own := &kpool.Cluster{Spec: kpool.ClusterSpec{Endpoint: "https://management.example.net", Platform: public.Spec.Platform}}
	if err := provider.CheckKubeServer(Profile{}, nil, own, "https://prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io"); err == nil {
		t.Error("a cluster at its own endpoint was allowed a server on azmk8s.io")
	}
}
