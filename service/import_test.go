package service_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// foreignMark is the installation of another kpool's pool in the tests.
const foreignMark = "fedcba9876543210fedcba9876543210"

// importWorld is a cluster of Alice's whose controller found, at the
// provider, a pool another kpool marked (web) and an unmarked one (legacy).
func importWorld(t *testing.T) (*service.Service, *kpool.Cluster) {
	t.Helper()
	s := service.New(testdb.SQLite(t), storetest.Platforms)
	c := storetest.NewCluster(t, s, storetest.Alice, "prod")
	var spec kpool.NodePoolSpec
	if err := json.Unmarshal([]byte(storetest.GCPPool), &spec); err != nil {
		t.Fatal(err)
	}
	report := kpool.ClusterReport{
		Foreign:  []kpool.ForeignPool{{ProviderName: "web", Installation: foreignMark, Pool: "01950000-0000-7000-8000-0000000000ff", Spec: &spec}},
		Unmarked: []kpool.UnmarkedPool{{ProviderName: "legacy", Name: "old-web", Spec: &spec}},
	}
	if _, err := s.ReportClusterStatus(storetest.Ctx(storetest.Controller), c.ID, report); err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestImportProviderPool: a person imports a pool the controllers listed,
// in observe mode: an unmarked one whoever may change the cluster's pools,
// a foreign one only an admin who forces it (409 naming the owner's mark
// otherwise); a pool not listed is NOT_FOUND, one imported already a
// CONFLICT; the audit trail says a forced import took another's pool.
func TestImportProviderPool(t *testing.T) {
	for _, tc := range []struct {
		name   string
		as     string
		in     service.PoolImport
		code   string // "" when imported
		pool   string // the imported pool's name
		detail string // in the created event
	}{
		{"unmarked, by its owner", storetest.Alice, service.PoolImport{ProviderName: "legacy"}, "", "old-web", "imported from the provider as legacy"},
		{"unmarked, named", storetest.Alice, service.PoolImport{ProviderName: "legacy", Name: "legacy-web"}, "", "legacy-web", "as legacy"},
		{"foreign, unforced", storetest.Alice, service.PoolImport{ProviderName: "web"}, kpool.CodeConflict, "", ""},
		{"foreign, forced by a user", storetest.Alice, service.PoolImport{ProviderName: "web", Force: true}, kpool.CodeConflict, "", ""},
		{"foreign, unforced by an admin", storetest.Admin, service.PoolImport{ProviderName: "web"}, kpool.CodeConflict, "", ""},
		{"foreign, forced by an admin", storetest.Admin, service.PoolImport{ProviderName: "web", Force: true}, "", "web", "forced: it carries the mark of kpool installation " + foreignMark},
		{"not listed", storetest.Alice, service.PoolImport{ProviderName: "ghost"}, kpool.CodeNotFound, "", ""},
		{"another user's cluster", storetest.Bob, service.PoolImport{ProviderName: "legacy"}, kpool.CodeNotFound, "", ""},
		{"no provider name", storetest.Alice, service.PoolImport{}, kpool.CodeValidation, "", ""},
		{"bad name", storetest.Alice, service.PoolImport{ProviderName: "legacy", Name: "Legacy Web"}, kpool.CodeValidation, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := importWorld(t)
			p, err := s.ImportProviderPool(storetest.Ctx(tc.as), c.ID, tc.in)
			if tc.code != "" {
				if kpool.ErrorCode(err) != tc.code {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				if tc.code == kpool.CodeConflict && !strings.Contains(err.Error(), foreignMark) {
					t.Fatalf("the conflict does not name the owner's mark: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != tc.pool || p.ProviderName != tc.in.ProviderName || !p.Spec.Observed() || p.CreatedBy != tc.as || p.Spec.Count() != 3 {
				t.Fatalf("imported %+v", p)
			}
			evs, err := s.Events(storetest.Ctx(storetest.Admin), audit.Query{NodePoolID: p.ID, Type: kpool.EventNodePoolCreated})
			if err != nil || len(evs.Items) != 1 || !strings.Contains(evs.Items[0].Detail, tc.detail) || evs.Items[0].Actor != tc.as {
				t.Fatalf("the created event: %+v %v", evs, err)
			}
			// Imported once: again is a conflict.
			if _, err := s.ImportProviderPool(storetest.Ctx(tc.as), c.ID, service.PoolImport{ProviderName: tc.in.ProviderName, Name: "again", Force: tc.in.Force}); kpool.ErrorCode(err) != kpool.CodeConflict {
				t.Fatalf("a second import: %v, want CONFLICT", err)
			}
		})
	}
}

// TestObservingForeignNeedsAnAdmin: a user may not observe another kpool's
// pool by making or turning a pool of its provider name observed (that is
// a forced import); a managed pool of that name may be made, which its
// controller reports ForeignPool.
func TestObservingForeignNeedsAnAdmin(t *testing.T) {
	s, c := importWorld(t)
	ctx := storetest.Ctx(storetest.Alice)
	observed := `{"management":"observe","platform":{"type":"gcp","gcp":{"machineType":"n1-standard-4"}},"nodeCount":1}`
	_, err := s.CreateNodePool(ctx, service.NodePoolCreate{Name: "web", ClusterID: c.ID, Spec: json.RawMessage(observed)})
	var e *kpool.Error
	if kpool.ErrorCode(err) != kpool.CodeConflict || !asError(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "spec.management" {
		t.Fatalf("observing a foreign pool: %v, want CONFLICT on spec.management", err)
	}
	managed := strings.Replace(observed, `"management":"observe",`, "", 1)
	p, err := s.CreateNodePool(ctx, service.NodePoolCreate{Name: "web", ClusterID: c.ID, Spec: json.RawMessage(managed)})
	if err != nil || p.ProviderName != "web" {
		t.Fatalf("a managed pool of a foreign pool's name: %+v, %v", p, err)
	}
	_, err = s.UpdateNodePool(ctx, p.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"management":"observe"}`)})
	if kpool.ErrorCode(err) != kpool.CodeConflict {
		t.Fatalf("turning it observed: %v, want CONFLICT", err)
	}
	if _, err := s.UpdateNodePool(storetest.Ctx(storetest.Admin), p.ID, service.Update{Patch: true, Spec: json.RawMessage(`{"management":"observe"}`)}); err != nil {
		t.Fatalf("an admin turning it observed: %v", err)
	}
}

func asError(err error, e **kpool.Error) bool {
	x, ok := err.(*kpool.Error)
	*e = x
	return ok
}
