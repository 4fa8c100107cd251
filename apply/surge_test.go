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
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// TestSurgeReplaceIsUpdate: a change the provider makes only with a new
// pool is an update that is carried out when the file's updateStrategy
// says replacement: Surge (the plan says how), and refused otherwise.
func TestSurgeReplaceIsUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The cluster is the store's test helper's; its platform's profile
	// says which change needs a new pool there.
	clusterSpec := storetest.ClusterSpec(user, "prod")
	var cs kpool.ClusterSpec
	if err := json.Unmarshal(clusterSpec, &cs); err != nil {
		t.Fatal(err)
	}
	reg := catalog.Registry()
	profile := reg.Profile(cs.Platform.Type)
	reg.Add(fake.New(fake.Options{Platform: cs.Platform.Type}))
	const ctl = "ctl@example.com"
	access, err := auth.NewAccess(nil, []string{ctl})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(service.New(testdb.SQLite(t), reg), access, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	c := api.NewClient(srv.URL, user)
	name := "prod"
	prod, err := c.CreateCluster(ctx, api.ClusterBody{Name: &name, Spec: clusterSpec})
	if err != nil {
		t.Fatal(err)
	}
	field, before, after := replaceChange(t, profile)
	file := poolFile(t, prod.ID, profile, before, nil)
	rs := run(t, c, file, Options{})
	if rs[0].Action != Create {
		t.Fatalf("create: %+v", rs[0])
	}
	// The pool exists at its provider: its limits hold.
	if _, err := api.NewClient(srv.URL, ctl).ReportNodePoolStatus(ctx, rs[0].NodePool.ID, api.StatusReport{
		ControllerName: "test-nodepool-controller", ObservedGeneration: 1, Metadata: json.RawMessage(`{"exists": true}`)}); err != nil {
		t.Fatal(err)
	}

	changed := poolFile(t, prod.ID, profile, after, nil)
	r := run(t, c, changed, Options{DryRun: true})[0]
	if r.Action != Refused || r.Error == nil || !strings.Contains(r.Error.Fields[0].Reason, "replacement to Surge") {
		t.Errorf("a replace change under Refuse: %+v", r)
	}

	surge := poolFile(t, prod.ID, profile, after, &kpool.UpdateStrategy{Replacement: "Surge", DrainTimeout: "10m"})
	r = run(t, c, surge, Options{DryRun: true})[0]
	if r.Action != Replace || r.Error != nil || r.Plan == nil || r.Plan.Replacement != "surge 1, drain 10m0s" || !r.Plan.Replaces() {
		t.Fatalf("a replace change under Surge, dry run: %+v (plan %+v)", r, r.Plan)
	}
	var fields []string
	for _, d := range r.Differences() {
		fields = append(fields, d.Field)
	}
	var spec kpool.NodePoolSpec
	profile.SetBlock(&spec, after)
	path := profile.Block(prod, &spec).Path(field)
	if want := path + " spec.updateStrategy.drainTimeout spec.updateStrategy.replacement"; path == "" || strings.Join(fields, " ") != want {
		t.Errorf("differences: %v, want %s", fields, want)
	}
	r = run(t, c, surge, Options{})[0]
	if r.Action != Replace || r.NodePool == nil || r.NodePool.Generation != 2 || !r.NodePool.Spec.UpdateStrategy.Surge() {
		t.Errorf("a replace change under Surge: %+v", r)
	}
}

// replaceChange is a change of a pool block that the profile makes only
// with a new pool: a new machine type where that is one, else spot
// instead of regular VMs.
func replaceChange(t *testing.T, p provider.Profile) (provider.Field, provider.Block, provider.Block) {
	t.Helper()
	before := provider.Block{MachineType: p.CLI().MachineExample}
	after := before
	updates := p.Capabilities().Updates
	switch {
	case updates[provider.FieldMachineType].Class == kpool.UpdateReplace:
		after.MachineType = "large-2" // well-formed: the profiles check no more
		return provider.FieldMachineType, before, after
	case updates[provider.FieldSpot].Class == kpool.UpdateReplace:
		after.Spot = true
		return provider.FieldSpot, before, after
	}
	t.Fatalf("%s changes both a pool's machine type and spot in place", p.Type())
	return "", before, after
}

// poolFile is a file of pool web of 2 nodes in cluster id, its platform
// block b, with the update strategy u if any.
func poolFile(t *testing.T, id string, p provider.Profile, b provider.Block, u *kpool.UpdateStrategy) string {
	t.Helper()
	two := 2
	spec := kpool.NodePoolSpec{NodeCount: &two, UpdateStrategy: u}
	p.SetBlock(&spec, b)
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return "name: web\ncluster_id: " + id + "\nspec: " + string(js) + "\n"
}
