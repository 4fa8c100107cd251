package civo_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kpool/kpool/cloudsim/civo"
)

// TestSizeCatalogue: GET /v2/sizes serves the sizes a pool create takes,
// and no other Kubernetes size: each ".kube." size of the list is
// accepted, each instance size refused with database_size_not_found.
func TestSizeCatalogue(t *testing.T) {
	e := newEnv(t)
	var list []civo.InstanceSize
	if err := json.Unmarshal(e.do("GET", "/v2/sizes?region=LON1", key, "").body, &list); err != nil {
		t.Fatal(err)
	}
	kube := 0
	for _, s := range list {
		if !strings.Contains(s.Name, ".kube.") {
			continue
		}
		kube++
		if s.Type != "Kubernetes" || s.CPUCores < 1 || s.RAMMegabytes < 1024 || s.DiskGigabytes < 1 || !s.Selectable {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	if kube != len(civo.Sizes()) || kube == len(list) {
		t.Fatalf("%d Kubernetes sizes listed of %d, the emulator takes %d", kube, len(list), len(civo.Sizes()))
	}
	for _, s := range list {
		want := 200
		if !strings.Contains(s.Name, ".kube.") {
			want = 400
		}
		body := `{"id":"p-` + strings.ReplaceAll(s.Name, ".", "-") + `","count":1,"size":"` + s.Name + `"}`
		if a := e.do("POST", pools+"?region=LON1", key, body); a.status != want || want == 400 && a.code() != "database_size_not_found" {
			t.Errorf("create with %s: %d %s, want %d", s.Name, a.status, a.body, want)
		}
	}
}

// TestKubernetesVersions: one default (stable) version, the clusters'
// versions among them.
func TestKubernetesVersions(t *testing.T) {
	e := newEnv(t)
	var list []civo.KubernetesVersion
	if err := json.Unmarshal(e.do("GET", "/v2/kubernetes/versions?region=LON1", key, "").body, &list); err != nil {
		t.Fatal(err)
	}
	defaults, has := 0, false
	for _, v := range list {
		if v.Default {
			defaults++
		}
		has = has || v.Version == "1.30.5-k3s1"
	}
	if defaults != 1 || !has {
		t.Errorf("versions: %+v", list)
	}
}
