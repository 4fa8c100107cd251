package civo_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// TestCivoPoolRules: every rule of the Civo pool module's validation (a
// pool name, a cluster and a size are required; the node count is above 0;
// autoscaling bounds hold together, and valid ones are accepted) is enforced by kpool's service, which
// the API answers with, for Civo pools, with the field at fault; what Civo
// pools cannot have is NOT_IMPLEMENTED (501) naming the field and saying
// what to do instead; nothing is written on a refusal. (It was the API's
// test; the API maps each code to its status.)
func TestCivoPoolRules(t *testing.T) {
	svc := service.New(testdb.SQLite(t), catalog.Registry())
	user := storetest.Ctx(storetest.Alice)
	civo, err := svc.CreateCluster(user, service.ClusterCreate{Name: "civo",
		Spec: json.RawMessage(`{"platform":{"type":"civo","civo":{"region":"LON1","clusterId":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	const size = `"platform":{"civo":{"size":"g4s.kube.medium"}}`
	for _, tc := range []struct {
		name, cluster, pool, spec string
		code                      string
		fields                    []string // every field the answer must name
		says                      string
	}{
		{"pool name required", civo.ID, "", `{` + size + `}`, kpool.CodeValidation, []string{"name"}, "required"},
		{"cluster required", "", "web", `{` + size + `}`, kpool.CodeValidation, []string{"cluster_id"}, "required"},
		{"size required", civo.ID, "web", `{"platform":{"civo":{}}}`, kpool.CodeValidation, []string{"spec.platform.civo.size"}, "required"},
		{"name and size reported together", civo.ID, "", `{"platform":{"civo":{}}}`, kpool.CodeValidation, []string{"name", "spec.platform.civo.size"}, "required"},
		{"node count 0", civo.ID, "web", `{` + size + `,"nodeCount":0}`, kpool.CodeValidation, []string{"spec.nodeCount"}, "at least 1"},
		{"negative node count", civo.ID, "web", `{` + size + `,"nodeCount":-2}`, kpool.CodeValidation, []string{"spec.nodeCount"}, ""},
		{"min above max", civo.ID, "web", `{` + size + `,"autoscaling":{"enabled":true,"minNodes":5,"maxNodes":2}}`,
			kpool.CodeValidation, []string{"spec.autoscaling.minNodes"}, "must not exceed maxNodes"},
		{"min of 0", civo.ID, "web", `{` + size + `,"autoscaling":{"enabled":true,"minNodes":0,"maxNodes":3}}`, kpool.CodeValidation, []string{"spec.autoscaling.minNodes"}, ""},
		{"bounds missing", civo.ID, "web", `{` + size + `,"autoscaling":{"enabled":true}}`,
			kpool.CodeValidation, []string{"spec.autoscaling.minNodes", "spec.autoscaling.maxNodes"}, "required"},
		{"count outside the bounds", civo.ID, "web", `{` + size + `,"nodeCount":9,"autoscaling":{"enabled":true,"minNodes":1,"maxNodes":3}}`,
			kpool.CodeValidation, []string{"spec.nodeCount"}, "between"},
		{"zones", civo.ID, "web", `{` + size + `,"zones":["1"]}`, kpool.CodeNotImplemented, []string{"spec.zones"}, "no zones"},
		{"tags", civo.ID, "web", `{` + size + `,"tags":{"team":"a"}}`, kpool.CodeNotImplemented, []string{"spec.tags"}, "no tags"},
		{"version", civo.ID, "web", `{` + size + `,"kubernetesVersion":"1.31"}`, kpool.CodeNotImplemented, []string{"spec.kubernetesVersion"}, "cluster's version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.CreateNodePool(user, service.NodePoolCreate{Name: tc.pool, ClusterID: tc.cluster, Spec: json.RawMessage(tc.spec)})
			e := wantError(t, err, tc.code, tc.says)
			for _, f := range tc.fields {
				if !mentions(e, f) {
					t.Errorf("the answer does not name %s: %+v", f, e)
				}
			}
		})
	}
	list, err := svc.NodePools(user, service.ListOptions{ClusterID: civo.ID})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("refused creates wrote pools: %v, %v", list, err)
	}

	// Valid bounds: Civo's pool API has none, kpool writes them to Civo's
	// cluster autoscaler; the count starts at the minimum.
	web, err := svc.CreateNodePool(user, service.NodePoolCreate{Name: "web", ClusterID: civo.ID, Spec: json.RawMessage(
		`{` + size + `,"autoscaling":{"enabled":true,"minNodes":2,"maxNodes":6}}`)})
	if err != nil {
		t.Fatalf("valid bounds refused: %v", err)
	}
	if a := web.Spec.Autoscaling; !a.On() || *a.MinNodes != 2 || *a.MaxNodes != 6 || web.Spec.Count() != 2 {
		t.Fatalf("created %+v", web.Spec)
	}

	// A valid pool with public IPs is created; its public IPs and its
	// size need a new pool.
	p, err := svc.CreateNodePool(user, service.NodePoolCreate{Name: "edge", ClusterID: civo.ID, Spec: json.RawMessage(
		`{"platform":{"civo":{"size":"g4s.kube.small","publicIpNodePool":true,"labels":{"tier":"edge"},"taints":[{"key":"edge","effect":"NoSchedule"}]}},"nodeCount":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Spec.Platform.Civo.PublicIPNodePool || p.Spec.Count() != 2 {
		t.Fatalf("created %+v", p.Spec)
	}
	if _, err := svc.ReportNodePoolStatus(storetest.Ctx(storetest.Controller), p.ID, kpool.ControllerStatus{ControllerName: "civo-controller", ObservedGeneration: 1}); err != nil {
		t.Fatal(err)
	}
	patch := func(spec string) error {
		_, err := svc.UpdateNodePool(user, p.ID, service.Update{Patch: true, Spec: json.RawMessage(spec)})
		return err
	}
	wantError(t, patch(`{"platform":{"civo":{"publicIpNodePool":false}}}`), kpool.CodeValidation,
		"spec.platform.civo.publicIpNodePool: cannot be changed in place on civo: Civo sets a pool's public IPs when it creates the pool")
	wantError(t, patch(`{"platform":{"civo":{"size":"g4s.kube.large"}}}`), kpool.CodeValidation, "spec.platform.civo.size: cannot be changed in place")
	if err := patch(`{"nodeCount":4,"labels":{"team":"web"}}`); err != nil {
		t.Fatal(err)
	}
}

// wantError wants err to be a kpool error of code whose message, details
// or fields say says.
func wantError(t *testing.T, err error, code, says string) *kpool.Error {
	t.Helper()
	var e *kpool.Error
	if !errors.As(err, &e) || e.Code != code || !strings.Contains(text(e), says) {
		t.Fatalf("error %v, want code %s mentioning %q", err, code, says)
	}
	return e
}

// text is what the API's answer says of e: its message, details and each
// field's reason.
func text(e *kpool.Error) string {
	out := e.Message + " " + e.Details
	for _, f := range e.Fields {
		out += " " + f.Field + ": " + f.Reason
	}
	return out
}

// mentions reports whether an error names a field, in its field list or
// its details.
func mentions(e *kpool.Error, field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return strings.Contains(" "+e.Details, " "+field+":")
}
