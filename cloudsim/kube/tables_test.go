package kube_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpool/kpool/cloudsim/kube"
)

// TestTableNegotiation: the Table's version follows the Accept header,
// includeObject=None leaves rows without objects and Object gives whole
// ones, an unknown includeObject is 400, and a first media range asking
// for another as= falls through to the next (here, plain JSON).
func TestTableNegotiation(t *testing.T) {
	api := kube.New("/k8s")
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	token := api.AddCluster("c1")
	api.SyncNodes("c1", "pool", "p", []kube.NodeSpec{{Name: "n1", Labels: map[string]string{"pool": "p"}, Ready: true}}, kube.Propagate)
	get := func(query, accept string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/k8s/c1/api/v1/nodes"+query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", accept)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	const v1beta1 = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
	if code, body := get("?includeObject=None", v1beta1); code != http.StatusOK || body["apiVersion"] != "meta.k8s.io/v1beta1" ||
		body["rows"].([]any)[0].(map[string]any)["object"] != nil {
		t.Fatalf("None: %d %v", code, body)
	}
	code, body := get("?includeObject=Object", "application/json;as=Table;v=v1;g=meta.k8s.io")
	obj, _ := body["rows"].([]any)[0].(map[string]any)["object"].(map[string]any)
	if code != http.StatusOK || obj["kind"] != "Node" || obj["status"] == nil {
		t.Fatalf("Object: %d %v", code, body)
	}
	if code, body := get("?includeObject=All", v1beta1); code != http.StatusBadRequest || body["reason"] != string(metav1.StatusReasonBadRequest) {
		t.Fatalf("bad includeObject: %d %v", code, body)
	}
	if code, body := get("", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"); code != http.StatusOK || body["kind"] != "NodeList" {
		t.Fatalf("another as=: %d %v", code, body)
	}
}
