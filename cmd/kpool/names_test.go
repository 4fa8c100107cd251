package main

import (
	"net/http"
	"net/http/httptest"
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

// TestPlainErrors: a --server that is not kpool says so; cluster delete
// suggests --force.
func TestPlainErrors(t *testing.T) {
	t.Parallel()
	notKpool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html><body>nginx</body></html>"))
	}))
	t.Cleanup(notKpool.Close)
	_, err := run(notKpool.URL, "", "cluster", "list")
	if err == nil || !strings.Contains(err.Error(), "does not answer as a kpool server: check --server") || strings.Contains(err.Error(), "<html>") {
		t.Errorf("a server that is not kpool: %v", err)
	}
	srv := newServer(t)
	c := createCluster(t, srv, "busy", kpool.PlatformGCP)
	createPool(t, srv, "p", c, "--machine-type", "e2-small", "--count", "1")
	_, err = run(srv, "", "cluster", "delete", "busy")
	if kpool.ErrorCode(err) != kpool.CodeConflict || !strings.Contains(err.Error(), "--force") || strings.Contains(err.Error(), "force=true") {
		t.Errorf("cluster delete with pools: %v", err)
	}
}

// TestClusterUpdate: kpool cluster update changes what its flags give, by
// name, with a dry run first; what names the cloud cluster cannot change.
func TestClusterUpdate(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	createCluster(t, srv, "upd", kpool.PlatformOCI)
	if _, err := run(srv, "", "cluster", "update", "upd"); err == nil || !strings.Contains(err.Error(), "nothing to update") {
		t.Errorf("no flags: %v", err)
	}
	const image = "ocid1.image.oc1.iad.newimage"
	dry := mustRun(t, srv, "cluster", "update", "upd", "--image-id", image, "--dry-run")
	if !strings.Contains(dry, image) {
		t.Errorf("dry run: %s", dry)
	}
	if c := decode[kpool.Cluster](t, srv, "cluster", "get", "upd"); c.Spec.Platform.OCI.ImageID == image {
		t.Errorf("the dry run stored the image")
	}
	c := decode[kpool.Cluster](t, srv, "cluster", "update", "upd", "--image-id", image)
	if c.Spec.Platform.OCI.ImageID != image || c.Generation != 2 {
		t.Errorf("updated: %+v", c)
	}
	if _, err := run(srv, "", "cluster", "update", "upd", "--cluster-id", "ocid1.cluster.oc1.iad.other"); kpool.ErrorCode(err) != kpool.CodeValidation {
		t.Errorf("changing which cluster it is: %v", err)
	}
}
