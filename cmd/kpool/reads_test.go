package main

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
)

func TestGetAndStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	p := createPool(t, srv, "web", cluster, "--machine-type", "n2-standard-4", "--zones", "us-central1-a,us-central1-b",
		"--min", "1", "--max", "5", "--count", "2", "--label", "team=web", "--taint", "dedicated=web:NoSchedule", "--kubernetes-version", "1.30")
	report(t, srv, p.ID, 1, kpool.Condition{Type: "Ready", Status: "True", Reason: "NodesReady", Message: "3 nodes ready"})

	views := []struct {
		args []string
		want []string
	}{
		{[]string{"cluster", "get", cluster}, []string{"Name:", "gke", "Platform:", "gcp", "projectId:", "my-project-1", "Phase:", "Active", "by " + testUser}},
		{[]string{"nodepool", "get", p.ID}, []string{"\nCluster: gke\n", "Machine type:", "n2-standard-4", "2 (autoscaling 1-5)",
			"us-central1-a, us-central1-b", "team=web", "dedicated=web:NoSchedule", "Kubernetes version:", "1.30",
			"Generation:", "1 (observed 1)", "Ready (healthy)", "Resource version:"}},
		{[]string{"nodepool", "status", p.ID}, []string{"Node pool: web\n", "\nCluster: gke\n", "Phase:", "Ready (healthy)", "Observed generation:", "1 of 1 controllers ready",
			"TYPE", "LAST TRANSITION", "AllControllersReady", "Controller gcp-nodepool-controller:", "NodesReady", "3 nodes ready", `{"nodes":3}`}},
	}
	for _, v := range views {
		out := mustRun(t, srv, v.args...)
		squeezed := regexp.MustCompile(`: +`).ReplaceAllString(out, ": ") // "Cluster:   gke" as "Cluster: gke"
		for _, w := range v.want {
			if !strings.Contains(squeezed, w) {
				t.Errorf("%v: no %q in\n%s", v.args, w, out)
			}
		}
	}

	doc := decode[service.StatusDocument](t, srv, "nodepool", "status", p.ID)
	if doc.NodePoolID != p.ID || doc.Status.Phase != kpool.PhaseReady || len(doc.ControllerStatus) != 1 ||
		doc.ControllerStatus[0].ControllerName != "gcp-nodepool-controller" || doc.ControllerStatus[0].ObservedGeneration != 1 {
		t.Errorf("status %+v", doc)
	}
	if got := decode[kpool.NodePool](t, srv, "nodepool", "get", p.ID); got.Status.ObservedGeneration != 1 || got.Status.Phase != kpool.PhaseReady {
		t.Errorf("get %+v", got.Status)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cluster := createCluster(t, srv, "gke", kpool.PlatformGCP)
	fresh := createPool(t, srv, "fresh", cluster, "--machine-type", "e2-small")
	reported := createPool(t, srv, "reported", cluster, "--machine-type", "e2-small")
	report(t, srv, reported.ID, 1, kpool.Condition{Type: "Ready", Status: "True"})

	if out := mustRun(t, srv, "nodepool", "delete", fresh.ID); out != "node pool fresh in cluster gke deleted\n" {
		t.Errorf("delete: %q", out)
	}
	if _, err := run(srv, "", "nodepool", "get", fresh.ID); errCodeOf(err) != kpool.CodeNotFound {
		t.Errorf("get deleted pool: %v", err)
	}
	if _, err := run(srv, "", "cluster", "delete", cluster); errCodeOf(err) != kpool.CodeConflict {
		t.Errorf("delete cluster with pools: %v", err)
	}
	want := "cluster gke is being deleted (waiting for 1 node pool)\n"
	if out := mustRun(t, srv, "cluster", "delete", cluster, "--force"); out != want {
		t.Errorf("delete --force: %q, want %q", out, want)
	}
	if c := decode[kpool.Cluster](t, srv, "cluster", "get", cluster); c.Status.Phase != kpool.ClusterDeleting {
		t.Errorf("cluster %+v", c.Status)
	}
	if out := mustRun(t, srv, "nodepool", "status", reported.ID); !strings.Contains(out, "Deleting") {
		t.Errorf("status of a deleting pool:\n%s", out)
	}

	empty := createCluster(t, srv, "empty", kpool.PlatformCivo)
	if out := mustRun(t, srv, "cluster", "delete", empty); out != "cluster empty deleted\n" {
		t.Errorf("delete empty cluster: %q", out)
	}
	other := createCluster(t, srv, "other", kpool.PlatformGCP)
	p := createPool(t, srv, "p", other, "--machine-type", "e2-small")
	report(t, srv, p.ID, 1, kpool.Condition{Type: "Ready", Status: "True"})
	if out := mustRun(t, srv, "nodepool", "delete", p.ID); !strings.HasPrefix(out, "node pool p in cluster other is being deleted (waiting for the pool to be deleted by gcp-nodepool-controller") {
		t.Errorf("delete reported pool: %q", out)
	}
}

func TestErrors(t *testing.T) {
	srv := newServer(t)

	t.Run("server validation error", func(t *testing.T) {
		_, err := run(srv, "", "cluster", "create", "bad", "--platform", "gcp", "--project-id", "BAD", "--location", "us-central1", "--cluster-name", "c")
		var e *kpool.Error
		if !errors.As(err, &e) || e.Code != kpool.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Field != "spec.platform.gcp.projectId" {
			t.Fatalf("error %#v", err)
		}
		f, err := os.CreateTemp(t.TempDir(), "stderr")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if code := exitCode(e, f); code != 1 {
			t.Errorf("exit code %d", code)
		}
		b, _ := os.ReadFile(f.Name())
		if !strings.HasPrefix(string(b), "Error: VALIDATION_ERROR: Validation failed\n  spec.platform.gcp.projectId: ") {
			t.Errorf("printed %q", b)
		}
	})

	t.Run("missing user", func(t *testing.T) {
		t.Setenv("KPOOL_USER", "")
		t.Setenv("KPOOL_TOKEN", "")
		_, _, err := execute("", "cluster", "list", "--server", srv)
		if err == nil || !strings.HasPrefix(err.Error(), "set KPOOL_TOKEN (or --token) to your API token, or,") {
			t.Errorf("error %v", err)
		}
		// A command group prints its help without needing a user.
		if out, _, err := execute("", "nodepool"); err != nil || !strings.Contains(out, "Available Commands") {
			t.Errorf("kpool nodepool: %v\n%s", err, out)
		}
	})

	t.Run("user from the environment", func(t *testing.T) {
		t.Setenv("KPOOL_USER", testUser)
		t.Setenv("KPOOL_SERVER", srv)
		if _, _, err := execute("", "nodepool", "list", "-o", "json"); err != nil {
			t.Error(err)
		}
	})

	usage := []struct {
		name string
		args []string
		want string
	}{
		{"bad output", []string{"cluster", "list", "-o", "xml"}, `--output "xml" is not a format: use table, wide, json, yaml, name, jsonpath=TEMPLATE, custom-columns=`},
		{"bad int flag", []string{"nodepool", "scale", "x", "--count", "many"}, `invalid argument "many" for "--count"`},
		{"unknown flag", []string{"cluster", "list", "--colour"}, "unknown flag: --colour"},
		{"no ID", []string{"nodepool", "status"}, "kpool nodepool status: give the node pool ID"},
		{"two IDs", []string{"cluster", "update", "a", "b"}, "takes one cluster ID, got 2 arguments"},
		{"two names", []string{"cluster", "create", "a", "b"}, "takes one cluster NAME, got 2 arguments"},
		{"bad label", []string{"nodepool", "update", "01a20330-0000-7000-8000-000000000000", "--label", "novalue"}, `--label "novalue": use KEY=VALUE`},
		{"unknown subcommand", []string{"nodepool", "lst"}, `unknown command "lst" for "kpool nodepool"`},
		{"bad server", []string{"cluster", "list", "--server", "localhost:8080"}, `--server "localhost:8080" is not a URL`},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			// These fail before any request: no --server is needed.
			_, _, err := execute("", append(tt.args, "--user", testUser)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}

	codes := []struct {
		args []string
		code string
	}{
		{[]string{"cluster", "get", "01a20330-0000-7000-8000-000000000000"}, kpool.CodeNotFound},
		{[]string{"nodepool", "status", "nope"}, kpool.CodeNotFound},
		{[]string{"nodepool", "create", "p", "--cluster", "01a20330-0000-7000-8000-000000000000", "--machine-type", "x"}, kpool.CodeNotFound},
		{[]string{"cluster", "list", "--limit", "1000"}, kpool.CodeValidation},
	}
	for _, tt := range codes {
		if _, err := run(srv, "", tt.args...); errCodeOf(err) != tt.code {
			t.Errorf("%v: %v, want %s", tt.args, err, tt.code)
		}
	}
}
