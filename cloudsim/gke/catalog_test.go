package gke_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

// computeOf is Google's Compute Engine client on the emulator.
func (e *env) computeOf() *compute.Service {
	e.t.Helper()
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"}), Base: e.srv.Client().Transport}}
	svc, err := compute.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(e.srv.URL+"/compute/v1/"))
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

// TestMachineTypes reads the catalogue through Compute Engine's Go
// client: each zone's types with their figures, a zone without G2, a zone
// of a region without a catalogue, a zone that is none.
func TestMachineTypes(t *testing.T) {
	e := newEnv(t)
	svc := e.computeOf()
	for _, tc := range []struct {
		zone      string
		want      string // a type listed, "" none
		missing   string // a type not listed
		cpus, mem int64
		gpus      int64
		code      int
	}{
		{zone: "us-central1-a", want: "g2-standard-8", cpus: 8, mem: 32768, gpus: 1},
		{zone: "us-central1-a", want: "n1-standard-4", cpus: 4, mem: 15360},
		{zone: "us-central1-f", want: "e2-medium", missing: "g2-standard-8", cpus: 2, mem: 4096},
		{zone: "europe-west1-d", want: "a2-highgpu-1g", cpus: 12, mem: 87040, gpus: 1},
		{zone: "asia-east1-a"},
		{zone: "us-central1-d", code: 404},
	} {
		l, err := svc.MachineTypes.List(project, tc.zone).Do()
		if tc.code != 0 {
			var ge *googleapi.Error
			if !errors.As(err, &ge) || ge.Code != tc.code {
				t.Errorf("%s: %v, want %d", tc.zone, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.zone, err)
		}
		if l.Kind != "compute#machineTypeList" || tc.want == "" && len(l.Items) != 0 {
			t.Errorf("%s: %+v", tc.zone, l)
		}
		for _, m := range l.Items {
			if m.Name == tc.missing {
				t.Errorf("%s lists %s", tc.zone, m.Name)
			}
			if m.Name != tc.want {
				continue
			}
			gpus := int64(0)
			for _, a := range m.Accelerators {
				gpus += a.GuestAcceleratorCount
			}
			if m.GuestCpus != tc.cpus || m.MemoryMb != tc.mem || gpus != tc.gpus || m.Kind != "compute#machineType" || m.Zone != tc.zone ||
				!strings.HasSuffix(m.SelfLink, "/zones/"+tc.zone+"/machineTypes/"+m.Name) {
				t.Errorf("%s %s: %+v", tc.zone, m.Name, m)
			}
			tc.want = "seen"
		}
		if tc.want != "seen" && tc.want != "" {
			t.Errorf("%s does not list %s", tc.zone, tc.want)
		}
	}
	if m, err := svc.MachineTypes.Get(project, "us-central1-b", "e2-standard-4").Do(); err != nil || m.GuestCpus != 4 {
		t.Errorf("get: %+v %v", m, err)
	}
}

// TestServerConfig: the location's node versions, the clusters' own
// among them.
func TestServerConfig(t *testing.T) {
	e := newEnv(t)
	cfg, err := e.svc.Projects.Locations.GetServerConfig("projects/" + project + "/locations/" + region).Do()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(cfg.ValidNodeVersions, ","), "1.30.5-gke.1014001") || cfg.DefaultClusterVersion != cfg.ValidMasterVersions[0] {
		t.Fatalf("server config: %+v", cfg)
	}
}

// TestCatalogueDenied: a credential without Compute's or GKE's read
// permissions gets 403 PERMISSION_DENIED.
func TestCatalogueDenied(t *testing.T) {
	e := newEnv(t)
	e.sim.DenyCatalogue(project)
	_, err := e.computeOf().MachineTypes.List(project, "us-central1-a").Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 403 || !strings.Contains(ge.Message, "compute.machineTypes.list") {
		t.Fatalf("machineTypes.list: %v", err)
	}
	_, err = e.svc.Projects.Locations.GetServerConfig("projects/" + project + "/locations/" + region).Do()
	if !errors.As(err, &ge) || ge.Code != 403 {
		t.Fatalf("getServerConfig: %v", err)
	}
}

// TestUnofferedMachineType: a create or update whose machine type a
// pool's zone does not offer is GKE's 400 INVALID_ARGUMENT.
func TestUnofferedMachineType(t *testing.T) {
	e := newEnv(t)
	pools := e.svc.Projects.Locations.Clusters.NodePools
	create := func(name, machine string, zones ...string) error {
		_, err := pools.Create(strings.TrimPrefix(base, "/v1/"), &container.CreateNodePoolRequest{NodePool: &container.NodePool{
			Name: name, InitialNodeCount: 1, Locations: zones, Config: &container.NodeConfig{MachineType: machine}}}).Do()
		return err
	}
	for _, tc := range []struct {
		name, machine string
		zones         []string
		want          string // "" accepted
	}{
		{"bogus", "n9-bogus-4", []string{"us-central1-a"}, `Invalid machine type "n9-bogus-4" in zone "us-central1-a": GCE_NOT_FOUND`},
		{"gpu-f", "g2-standard-8", []string{"us-central1-a", "us-central1-f"}, `Invalid machine type "g2-standard-8" in zone "us-central1-f": GCE_NOT_FOUND`},
		{"gpu-default", "g2-standard-8", nil, ""}, // the cluster's zones a, b, c
	} {
		err := create(tc.name, tc.machine, tc.zones...)
		var ge *googleapi.Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &ge) || ge.Code != 400 || ge.Message != tc.want || !strings.Contains(ge.Body, `"INVALID_ARGUMENT"`)):
			t.Errorf("%s: %v, want 400 %s", tc.name, err, tc.want)
		}
		e.clock.Advance(time.Hour)
	}
	if err := create("web", "e2-standard-4", "us-central1-f"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	_, err := pools.Update(strings.TrimPrefix(base, "/v1/")+"/nodePools/web", &container.UpdateNodePoolRequest{MachineType: "g2-standard-16"}).Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 400 || !strings.Contains(ge.Message, `"us-central1-f"`) {
		t.Fatalf("update to G2 in us-central1-f: %v", err)
	}
}
