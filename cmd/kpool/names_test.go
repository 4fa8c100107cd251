package main

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestNames: clusters and pools are named by name wherever an id is taken;
// a name several pools have is an error listing them; an uppercase UUID is
// an id.
func TestNames(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := createCluster(t, srv, "prod", kpool.PlatformGCP)
	stage := createCluster(t, srv, "stage", kpool.PlatformGCP)
	web := createPool(t, srv, "web", "prod", "--machine-type", "e2-small", "--count", "1") // --cluster by name
	if web.ClusterID != prod {
		t.Fatalf("created in %s, want prod (%s)", web.ClusterID, prod)
	}
	createPool(t, srv, "web", stage, "--machine-type", "e2-small", "--count", "1")
	createPool(t, srv, "api", stage, "--machine-type", "e2-small", "--count", "1")

	if c := decode[kpool.Cluster](t, srv, "cluster", "get", "prod"); c.ID != prod {
		t.Errorf("cluster get prod: %s", c.ID)
	}
	if p := decode[kpool.NodePool](t, srv, "nodepool", "get", "web", "--cluster", "prod"); p.ID != web.ID {
		t.Errorf("nodepool get web --cluster prod: %s", p.ID)
	}
	if p := decode[kpool.NodePool](t, srv, "nodepool", "get", "api"); p.Name != "api" {
		t.Errorf("nodepool get api (one of that name): %+v", p)
	}
	if p := decode[kpool.NodePool](t, srv, "nodepool", "get", strings.ToUpper(web.ID)); p.ID != web.ID {
		t.Errorf("an uppercase id: %s", p.ID)
	}
	scaled := decode[kpool.NodePool](t, srv, "nodepool", "scale", "web", "--cluster", "prod", "--count", "2")
	if scaled.ID != web.ID || scaled.Spec.Count() != 2 {
		t.Errorf("scale by name: %+v", scaled)
	}
	list := decode[struct{ NodePools []kpool.NodePool }](t, srv, "nodepool", "list", "--cluster", "stage")
	if len(list.NodePools) != 2 {
		t.Errorf("list --cluster stage: %d pools", len(list.NodePools))
	}

	_, err := run(srv, "", "nodepool", "get", "web")
	if kpool.ErrorCode(err) != kpool.CodeValidation || !strings.Contains(err.Error(), `2 node pools are named "web": give --cluster`) ||
		!strings.Contains(err.Error(), web.ID) {
		t.Errorf("an ambiguous name: %v", err)
	}
	for _, args := range [][]string{{"nodepool", "get", "nope"}, {"nodepool", "get", "web", "--cluster", "nope"}, {"cluster", "get", "nope"}} {
		if _, err := run(srv, "", args...); kpool.ErrorCode(err) != kpool.CodeNotFound || !strings.Contains(err.Error(), `named "nope"`) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
