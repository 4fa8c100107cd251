package gke_test

import (
	"encoding/pem"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/gke"
	"github.com/kpool/kpool/cloudsim/internal/crossclient"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestJavaScriptClient: Google's own Node.js client (@google-cloud/
// container on its REST transport, which sends enums as numbers), which
// kpool did not write, creates, lists, reads, resizes, updates and deletes
// a node pool on the demo cluster, following each operation.
func TestJavaScriptClient(t *testing.T) {
	emu, err := gke.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(emu)
	t.Cleanup(srv.Close)
	ca := crossclient.CAFile(t, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	out := string(crossclient.Node(t, "gke.mjs", "NODE_EXTRA_CA_CERTS="+ca, "ENDPOINT="+srv.URL, "PROJECT="+gke.DemoProject,
		"LOCATION="+gke.DemoLocation, "CLUSTER="+gke.DemoCluster, "TOKEN=any-token"))
	for _, want := range []string{
		`{"step":"create","operationType":"CREATE_NODE_POOL","status":"PENDING"}`,
		`{"step":"created","status":"DONE"}`,
		`{"step":"list","names":["default-pool","js-client"]}`,
		`{"step":"get","status":"RUNNING","machineType":"e2-standard-4","diskSizeGb":50,"taints":["dedicated=js:NO_SCHEDULE"]}`,
		`{"step":"serverConfig","hasClusterVersion":true}`,
		`{"step":"refused","code":3,"message":"Invalid machine type \"g2-standard-8\" in zone \"us-central1-f\": GCE_NOT_FOUND"}`,
		`{"step":"resize","operationType":"SET_NODE_POOL_SIZE"}`,
		`{"step":"update","labels":{"team":"js","tier":"batch"},"taints":["dedicated=batch:NO_EXECUTE"]}`,
		`{"step":"delete","names":["default-pool"]}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	// The client sent its enums as numbers: the emulator took them.
	if !numericEnums(emu) {
		t.Error("the client did not ask for numeric enums: the test no longer covers them")
	}
	if st, ok := emu.Pool(gke.DemoProject, gke.DemoLocation, gke.DemoCluster, "js-client"); ok {
		t.Errorf("js-client still exists: %+v", st)
	}
}

// numericEnums reports whether the client asked for numeric enums
// ($alt=json;enum-encoding=int), as its REST transport does.
func numericEnums(emu *gke.Server) bool {
	for _, c := range emu.Calls() {
		if strings.Contains(c.Query, "enum-encoding=int") && c.Method == "POST" {
			return true
		}
	}
	return false
}

// TestDescribe: kpool cloudsim tells an outside client what it needs: the
// endpoint, the demo cluster's project, location and name, that any
// bearer token is accepted, and how to point gcloud and the Node.js
// client at the emulator, and where the cluster's Kubernetes API is.
func TestDescribe(t *testing.T) {
	emu, err := gke.Demo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	emu.Describe(&b, "https://127.0.0.1:8443")
	for _, want := range []string{"any OAuth2 bearer token", "https://127.0.0.1:8443/", "project:    " + gke.DemoProject,
		"location:   " + gke.DemoLocation, "cluster:    " + gke.DemoCluster, "api_endpoint_overrides/container https://127.0.0.1:8443/",
		"auth/access_token_file", "fallback: 'rest'", `apiEndpoint: "127.0.0.1", port: 8443`,
		"kube API:   https://127.0.0.1:8443" + gke.KubePrefix + "/" + emu.KubeID(gke.DemoProject, gke.DemoLocation, gke.DemoCluster)} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}
