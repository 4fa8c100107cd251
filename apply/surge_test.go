package apply

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// TestSurgeReplaceIsUpdate: a change the provider makes only with a new
// pool is an update that is carried out when the file's updateStrategy
// says replacement: Surge (the plan says how), and refused otherwise.
func TestSurgeReplaceIsUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := catalog.Registry()
	reg.Add(fake.New(fake.Options{Platform: kpool.PlatformGCP}))
	const ctl = "ctl@example.com"
	access, err := auth.NewAccess(nil, []string{ctl})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(service.New(testdb.SQLite(t), reg), access, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	c := api.NewClient(srv.URL, user)
	prod := cluster(t, c, "prod")
	file := "name: web\ncluster_id: " + prod + "\nspec: {nodeCount: 2, platform: {gcp: {machineType: e2-small, preemptible: false}}}\n"
	rs := Run(ctx, c, docs(t, file, nil), "", false)
	if rs[0].Action != Create {
		t.Fatalf("create: %+v", rs[0])
	}
	// The pool exists at its provider: its limits hold.
	if _, err := api.NewClient(srv.URL, ctl).ReportNodePoolStatus(ctx, rs[0].NodePool.ID, api.StatusReport{
		ControllerName: "gcp-nodepool-controller", ObservedGeneration: 1, Metadata: json.RawMessage(`{"exists": true}`)}); err != nil {
		t.Fatal(err)
	}

	spot := strings.Replace(file, "preemptible: false", "preemptible: true", 1)
	r := Run(ctx, c, docs(t, spot, nil), "", true)[0]
	if r.Action != Refused || r.Error == nil || !strings.Contains(r.Error.Fields[0].Reason, "replacement to Surge") {
		t.Errorf("a replace change under Refuse: %+v", r)
	}

	surge := strings.Replace(spot, "nodeCount: 2,", "nodeCount: 2, updateStrategy: {replacement: Surge, drainTimeout: 10m},", 1)
	r = Run(ctx, c, docs(t, surge, nil), "", true)[0]
	if r.Action != Update || r.Error != nil || r.Plan == nil || r.Plan.Replacement != "surge 1, drain 10m0s" || !r.Plan.Replaces() {
		t.Fatalf("a replace change under Surge, dry run: %+v (plan %+v)", r, r.Plan)
	}
	var fields []string
	for _, d := range r.Differences() {
		fields = append(fields, d.Field)
	}
	if strings.Join(fields, " ") != "spec.platform.gcp.preemptible spec.updateStrategy.drainTimeout spec.updateStrategy.replacement" {
		t.Errorf("differences: %v", fields)
	}
	r = Run(ctx, c, docs(t, surge, nil), "", false)[0]
	if r.Action != Update || r.NodePool == nil || r.NodePool.Generation != 2 || !r.NodePool.Spec.UpdateStrategy.Surge() {
		t.Errorf("a replace change under Surge: %+v", r)
	}
}
