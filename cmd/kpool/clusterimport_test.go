package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/sqlite"
)

// TestClusterImport: kpool cluster get lists the pools the controllers
// found at the provider (another kpool's, with its mark, and unmarked
// ones), and kpool cluster import records one in observe mode: an unmarked
// one for its cluster's owner, another kpool's only for an admin with
// --force.
func TestClusterImport(t *testing.T) {
	const root = "root@example.com"
	const theirs = "fedcba9876543210fedcba9876543210"
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "kpool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	access, err := auth.NewAccess([]string{root}, []string{testController})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, catalog.Registry())
	srv := httptest.NewServer(api.NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	as := func(who string) context.Context {
		return kpool.WithIdentity(context.Background(), &kpool.Identity{Email: who})
	}
	c, err := svc.CreateCluster(as(testUser), service.ClusterCreate{Name: "prod",
		Spec: json.RawMessage(`{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"prod"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	var spec kpool.NodePoolSpec
	_ = json.Unmarshal([]byte(`{"nodeCount":2,"platform":{"gcp":{"machineType":"e2-small"}}}`), &spec)
	ctl := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: testController, Controller: true})
	if _, err := svc.ReportClusterStatus(ctl, c.ID, kpool.ClusterReport{
		Foreign:  []kpool.ForeignPool{{ProviderName: "theirs", Installation: theirs, Spec: &spec}},
		Unmarked: []kpool.UnmarkedPool{{ProviderName: "legacy", Spec: &spec}},
	}); err != nil {
		t.Fatal(err)
	}
	cli := func(who string, args ...string) (string, error) {
		out, errOut, err := execute("", append(args, "--server", srv.URL, "--user", who)...)
		return out + errOut, err
	}
	out, err := cli(testUser, "cluster", "get", "prod")
	if err != nil || !strings.Contains(out, "owned by another kpool") || !strings.Contains(out, "theirs") || !strings.Contains(out, theirs) ||
		!strings.Contains(out, "unmarked") || !strings.Contains(out, "legacy") {
		t.Fatalf("cluster get: %v\n%s", err, out)
	}
	if !strings.Contains(out, "not learnt yet") {
		t.Fatalf("cluster get before any facts: %s", out)
	}
	facts := &kpool.ClusterFacts{LearnedAt: time.Now().Add(-3 * time.Minute), Version: "1.31.2", Zones: []string{"1", "2", "3"},
		MachineTypes: []kpool.MachineType{{Name: "e2-small", CPUs: 2, MemoryMiB: 2048}}}
	if err := svc.ReportClusterFacts(ctl, c.ID, facts); err != nil {
		t.Fatal(err)
	}
	out, err = cli(testUser, "cluster", "get", "prod")
	if err != nil || !strings.Contains(out, "(3m ago)):") || !regexp.MustCompile(`Machine types \(1\):\s+e2-small`).MatchString(out) {
		t.Fatalf("cluster get with facts: %v\n%s", err, out)
	}
	if got, _, _ := complete("nodepool", "create", "x", "--cluster", "prod", "--server", srv.URL, "--user", testUser, "--machine-type", "e2"); !slices.Equal(got, []string{"e2-small"}) {
		t.Fatalf("--machine-type completion: %q", got)
	}
	out, err = cli(testUser, "cluster", "get", "prod", "-o", "yaml")
	if err != nil || !strings.Contains(out, "facts:\n") || !strings.Contains(out, "factsAge: 3m0s") || !strings.Contains(out, "memoryMiB: 2048") ||
		!strings.Contains(out, "name: prod") {
		t.Fatalf("cluster get -o yaml: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		who  string
		args []string
		want string // in the output, or the error when fail
		fail bool
	}{
		{testUser, []string{"legacy", "--name", "legacy-web"}, "node pool legacy-web", false},
		{testUser, []string{"theirs"}, theirs, true},
		{testUser, []string{"theirs", "--force"}, "only an admin", true},
		{root, []string{"theirs", "--force"}, "imported from theirs in observe mode", false},
		{testUser, []string{"ghost"}, "No pool 'ghost'", true},
	} {
		out, err := cli(tc.who, append([]string{"cluster", "import", "prod"}, tc.args...)...)
		if err != nil {
			out += err.Error()
		}
		if (err != nil) != tc.fail || !strings.Contains(out, tc.want) {
			t.Errorf("%s import %v: %v\n%s", tc.who, tc.args, err, out)
		}
	}
}
