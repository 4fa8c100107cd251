package api

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/testdb"
)

// TestClusterKubeconfigGrant: spec.kubeconfig names one of the operator's
// kubeconfig credentials of the cluster's platform that the caller may
// use, as spec.credential does; anything else is 403 naming
// spec.kubeconfig, on create and on update, and a user who may not use one
// cannot tell it from one that does not exist.
func TestClusterKubeconfigGrant(t *testing.T) {
	const alice, bob = "alice@example.com", "bob@example.com"
	creds, err := provider.ParseCredentials([]byte(`
defaults:
  azure: shared
credentials:
  shared: {type: azure, kind: default, scopes: ["*"], users: ["*"]}
  prod-kube: {type: azure, kind: kubeconfig, kubeconfigEnv: PROD_KUBECONFIG, scopes: ["*"], endpoints: ["https://kube.example"], users: [`+alice+`]}
  gke-kube: {type: gcp, kind: kubeconfig, kubeconfigEnv: GKE_KUBECONFIG, scopes: ["*"], endpoints: ["https://kube.example"], users: ["*"]}
`), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	access, err := auth.NewAccess([]string{admin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(testdb.SQLite(t), catalog.Registry())
	svc.Credentials = creds
	srv := httptest.NewServer(checkOpenAPI(t, NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))))
	defer srv.Close()
	a := &testAPI{t: t, srv: srv}
	body := func(name, kube string) string {
		return fmt.Sprintf(`{"name":%q,"spec":{"kubeconfig":%q,"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-11112222aaaa","resourceGroup":"rg","clusterName":%q,"location":"westeurope"}}}}`,
			name, kube, name)
	}
	for i, tc := range []struct {
		name, who, kube string
		status          int
		reason          string
	}{
		{"granted", alice, "prod-kube", 201, ""},
		{"not granted", bob, "prod-kube", 403, "is available to you"},
		{"unknown", alice, "nope", 403, "is available to you"},
		{"another platform's", alice, "gke-kube", 403, "is available to you"},
		{"a cloud credential", alice, "shared", 403, "is available to you"},
		{"unknown, to an admin", admin, "nope", 403, `no credential named "nope"`},
		{"another platform's, to an admin", admin, "gke-kube", 403, "is for gcp, not azure"},
		{"malformed", alice, "Prod Kube", 400, "kubeconfig credential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do("POST", "/api/v1/clusters", body(fmt.Sprintf("c%d", i), tc.kube), "X-User-Email: "+tc.who)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.status != 201 {
				if e := r.errorBody(t); len(e.Fields) != 1 || e.Fields[0].Field != "spec.kubeconfig" || !strings.Contains(e.Fields[0].Reason, tc.reason) {
					t.Fatalf("fields %+v, want spec.kubeconfig saying %q", e.Fields, tc.reason)
				}
			}
		})
	}

	// Updates: bob may not give his cluster alice's kubeconfig; alice may
	// give hers; bob may then edit another field of a cluster whose
	// kubeconfig he could not have chosen (an admin's choice stays).
	var c struct {
		ID string `json:"id"`
	}
	a.do("POST", "/api/v1/clusters", body("u1", ""), "X-User-Email: "+bob).json(t, &c)
	patch := func(who, spec string) reply {
		return a.do("PATCH", "/api/v1/clusters/"+c.ID, `{"spec":`+spec+`}`, "X-User-Email: "+who, "Content-Type: application/merge-patch+json")
	}
	if r := patch(bob, `{"kubeconfig":"prod-kube"}`); r.status != 403 || !strings.Contains(string(r.body), "spec.kubeconfig") {
		t.Fatalf("bob taking alice's kubeconfig: %d %s", r.status, r.body)
	}
	if r := patch(admin, `{"kubeconfig":"prod-kube"}`); r.status != 200 || !strings.Contains(string(r.body), `"kubeconfig":"prod-kube"`) {
		t.Fatalf("admin: %d %s", r.status, r.body)
	}
	if r := patch(bob, `{"importPools":true}`); r.status != 200 {
		t.Fatalf("bob editing another field: %d %s", r.status, r.body)
	}
	if r := patch(bob, `{"kubeconfig":"prod-kube"}`); r.status != 403 {
		t.Fatalf("bob sending the kubeconfig again chooses it: %d %s", r.status, r.body)
	}
	if r := patch(bob, `{"kubeconfig":null}`); r.status != 200 || strings.Contains(string(r.body), "prod-kube") {
		t.Fatalf("bob dropping it: %d %s", r.status, r.body)
	}
}
