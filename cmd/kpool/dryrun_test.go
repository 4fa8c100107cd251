package main

import (
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

func TestCreateDeleteDryRun(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	prod := createCluster(t, srv, "prod", kpool.PlatformGCP)
	reported := createPool(t, srv, "reported", prod, "--machine-type", "e2-small")
	reportAs(t, srv, reported.ID, 1, `{"exists": true}`)
	fresh := createPool(t, srv, "fresh", prod, "--machine-type", "e2-small")

	tests := []struct {
		name    string
		args    []string
		wantErr string
		want    []string
	}{
		{"create", []string{"nodepool", "create", "web", "--cluster", "prod", "--machine-type", "e2-medium", "--count", "3", "--dry-run"}, "",
			[]string{"+ nodepool web in cluster prod would be created (dry run: nothing changed)\n", "    + spec.nodeCount = 3\n",
				`    + spec.platform.gcp.machineType = "e2-medium"`}},
		{"create refused", []string{"nodepool", "create", "web", "--cluster", "prod", "--count", "0", "--machine-type", "e2-medium", "--dry-run"}, "Validation failed", nil},
		{"create with --wait", []string{"nodepool", "create", "web", "--cluster", "prod", "--dry-run", "--wait"}, "--wait and --dry-run", nil},
		{"delete of a pool not at the provider", []string{"nodepool", "delete", "fresh", "--cluster", "prod", "--dry-run"}, "",
			[]string{"- nodepool " + fresh.ID + " would be deleted at once"}},
		{"delete of a pool at the provider", []string{"nodepool", "delete", reported.ID, "--dry-run"}, "",
			[]string{"- nodepool reported (" + reported.ID + ") would be Deleting until its controllers remove it at the provider (deletionPolicy Delete"}},
		{"delete with --wait", []string{"nodepool", "delete", reported.ID, "--dry-run", "--wait"}, "--wait and --dry-run", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(srv, "", tt.args...)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
		})
	}
	// -o json is the API's dry-run answer.
	d := decode[api.DryRun](t, srv, "nodepool", "create", "web", "--cluster", prod, "--machine-type", "e2-medium", "--dry-run")
	if !d.DryRun || d.NodePool == nil || d.NodePool.Name != "web" || d.Plan == nil || d.Plan.Provider != "gcp" {
		t.Errorf("create --dry-run -o json: %+v", d)
	}
	if d := decode[api.DryRun](t, srv, "nodepool", "delete", fresh.ID, "--dry-run"); !d.DryRun || !d.Gone {
		t.Errorf("delete --dry-run -o json: %+v", d)
	}
	// Nothing was created or deleted.
	if ps := pools(t, srv, prod); len(ps) != 2 || ps["fresh"] == nil || ps["reported"] == nil || ps["reported"].Deleting() {
		t.Errorf("pools after dry runs: %v", ps)
	}
}
