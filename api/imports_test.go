package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// oaImports has the controllers report an unmarked pool (legacy) and
// another kpool's (theirs) in a cluster, and imports: legacy by its owner
// (201), theirs by an admin who forces it (201) after its owner was
// refused (409, naming the mark).
func oaImports(t *testing.T, a *oaAPI, svc *service.Service, clusterID string) {
	t.Helper()
	var spec kpool.NodePoolSpec
	_ = json.Unmarshal([]byte(`{"nodeCount":2,"platform":{"gcp":{"machineType":"e2-small"}}}`), &spec)
	ctl := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: oaController, Controller: true})
	report := kpool.ClusterReport{
		Unmarked: []kpool.UnmarkedPool{{ProviderName: "legacy", Spec: &spec}, {ProviderName: "older", Spec: &spec}},
		Foreign:  []kpool.ForeignPool{{ProviderName: "theirs", Installation: "fedcba9876543210fedcba9876543210", Spec: &spec}},
	}
	if _, err := svc.ReportClusterStatus(ctl, clusterID, report); err != nil {
		t.Fatal(err)
	}
	a.expect(200, oaOwner, "GET", "/api/v1/clusters/"+clusterID, "")
	var p kpool.NodePool
	a.expect(201, oaOwner, "POST", "/api/v1/clusters/"+clusterID+"/imports", `{"providerName":"older","name":"older-web"}`).decode(t, &p)
	if p.Name != "older-web" || !p.Spec.Observed() || p.ProviderName != "older" {
		t.Errorf("imported %+v", p)
	}
	r := a.expect(409, oaOwner, "POST", "/api/v1/clusters/"+clusterID+"/imports", `{"providerName":"theirs"}`)
	if !strings.Contains(string(r.body), "fedcba9876543210fedcba9876543210") {
		t.Errorf("the refusal does not name the owner's mark: %s", r.body)
	}
	a.expect(201, oaAdmin, "POST", "/api/v1/clusters/"+clusterID+"/imports", `{"providerName":"theirs","force":true}`)
}
