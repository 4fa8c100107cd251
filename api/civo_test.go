package api

import (
	"net/http"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// TestCivoPoolRules: every rule of the Civo pool module's validation (a
// pool name, a cluster and a size are required; the node count is above 0;
// autoscaling bounds hold together) is enforced by the API for Civo pools,
// with the field at fault; what Civo pools cannot have is a 501 naming the
// field and saying what to do instead; nothing is written on a refusal.
func TestCivoPoolRules(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	civo := a.cluster(user, "civo", `{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`)
	const size = `"platform":{"civo":{"size":"g4s.kube.medium"}}`
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             string
		fields           []string // every field the answer must name
		says             string
	}{
		{"pool name required", "/clusters/" + civo.ID + "/nodepools", `{"spec":{` + size + `}}`,
			400, kpool.CodeValidation, []string{"name"}, "required"},
		{"cluster required", "/nodepools", `{"name":"web","spec":{` + size + `}}`,
			400, kpool.CodeValidation, []string{"cluster_id"}, "required"},
		{"size required", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{"platform":{"civo":{}}}}`,
			400, kpool.CodeValidation, []string{"spec.platform.civo.size"}, "required"},
		{"name and size reported together", "/clusters/" + civo.ID + "/nodepools", `{"spec":{"platform":{"civo":{}}}}`,
			400, kpool.CodeValidation, []string{"name", "spec.platform.civo.size"}, "required"},
		{"node count 0", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"nodeCount":0}}`,
			400, kpool.CodeValidation, []string{"spec.nodeCount"}, "at least 1"},
		{"negative node count", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"nodeCount":-2}}`,
			400, kpool.CodeValidation, []string{"spec.nodeCount"}, ""},
		{"min above max", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"autoscaling":{"enabled":true,"minNodes":5,"maxNodes":2}}}`,
			400, kpool.CodeValidation, []string{"spec.autoscaling.minNodes"}, "must not exceed maxNodes"},
		{"min of 0", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":3}}}`,
			400, kpool.CodeValidation, []string{"spec.autoscaling.minNodes"}, ""},
		{"bounds missing", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"autoscaling":{"enabled":true}}}`,
			400, kpool.CodeValidation, []string{"spec.autoscaling.minNodes", "spec.autoscaling.maxNodes"}, "required"},
		{"count outside the bounds", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"nodeCount":9,"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":3}}}`,
			400, kpool.CodeValidation, []string{"spec.nodeCount"}, "between"},
		{"valid bounds: Civo's pool API has none", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":3}}}`,
			501, kpool.CodeNotImplemented, []string{"spec.autoscaling"}, "--nodes=MIN:MAX"},
		{"zones", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"zones":["1"]}}`,
			501, kpool.CodeNotImplemented, []string{"spec.zones"}, "no zones"},
		{"tags", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"tags":{"team":"a"}}}`,
			501, kpool.CodeNotImplemented, []string{"spec.tags"}, "no tags"},
		{"version", "/clusters/" + civo.ID + "/nodepools", `{"name":"web","spec":{` + size + `,"kubernetesVersion":"1.31"}}`,
			501, kpool.CodeNotImplemented, []string{"spec.kubernetesVersion"}, "cluster's version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := wantError(t, a.as(user, "POST", "/api/v1"+tc.path, tc.body), tc.status, tc.code, tc.says)
			for _, f := range tc.fields {
				if !mentions(e, f) {
					t.Errorf("the answer does not name %s: %+v", f, e)
				}
			}
		})
	}
	var list struct{ Items []kpool.NodePool }
	a.as(user, "GET", "/api/v1/nodepools?cluster_id="+civo.ID, "").json(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("refused creates wrote %d pools", len(list.Items))
	}

	// A valid pool with public IPs is created; its public IPs and its
	// size need a new pool.
	r := a.as(user, "POST", "/api/v1/clusters/"+civo.ID+"/nodepools",
		`{"name":"edge","spec":{"platform":{"civo":{"size":"g4s.kube.small","publicIpNodePool":true,"labels":{"tier":"edge"},"taints":[{"key":"edge","effect":"NoSchedule"}]}},"nodeCount":2}}`)
	want(t, r, http.StatusCreated)
	var p kpool.NodePool
	r.json(t, &p)
	if !p.Spec.Platform.Civo.PublicIPNodePool || p.Spec.Count() != 2 {
		t.Fatalf("created %+v", p.Spec)
	}
	want(t, a.as(controller, "PUT", "/api/v1/nodepools/"+p.ID+"/status", `{"controller_name":"civo-controller","observed_generation":1}`), http.StatusOK)
	wantError(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"platform":{"civo":{"publicIpNodePool":false}}}}`),
		http.StatusBadRequest, kpool.CodeValidation, "spec.platform.civo.publicIpNodePool: cannot be changed in place on civo: Civo sets a pool's public IPs when it creates the pool")
	wantError(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"platform":{"civo":{"size":"g4s.kube.large"}}}}`),
		http.StatusBadRequest, kpool.CodeValidation, "spec.platform.civo.size: cannot be changed in place")
	want(t, a.as(user, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":4,"labels":{"team":"web"}}}`), http.StatusOK)
}

// mentions reports whether an error names a field, in its field list or
// its details.
func mentions(e ErrorDetail, field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return containsWord(e.Details, field+":")
}

func containsWord(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub && (i == 0 || s[i-1] == ' ') {
			return true
		}
	}
	return false
}
