package oke_test

import (
	"encoding/pem"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/internal/crossclient"
	"github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestJavaScriptClient: Oracle's own SDK for JavaScript (oci-
// containerengine), which kpool did not write and which signs with x-date,
// creates, lists, reads, updates and deletes a node pool on the demo
// cluster, following each work request; it signs with the demo key from
// the OCI config file kpool cloudsim writes (Describe), nothing else.
func TestJavaScriptClient(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	emu, err := oke.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(emu)
	t.Cleanup(srv.Close)
	emu.Describe(&strings.Builder{}, srv.URL) // writes the demo tenancy's config and key files
	ca := crossclient.CAFile(t, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	const ad = "Uocm:US-ASHBURN-AD-2"
	out := string(crossclient.Node(t, "oke.mjs", "NODE_EXTRA_CA_CERTS="+ca, "ENDPOINT="+srv.URL, "OCI_CONFIG="+filepath.Join(oke.DemoStateDir(), "config"),
		"COMPARTMENT="+oke.DemoCompartment, "CLUSTER="+oke.DemoClusterID, "AD="+ad, "SUBNET="+oke.DemoSubnets[ad], "IMAGE="+oke.DemoImage))
	for _, want := range []string{
		`{"step":"create","operationType":"NODEPOOL_CREATE","status":"SUCCEEDED"}`,
		`{"step":"list","names":["js-client","pool1"]}`,
		`{"step":"get","lifecycleState":"ACTIVE","nodeShape":"VM.Standard.E4.Flex","ocpus":2,"size":1,"nodes":1,"labels":["team=js"],"etag":true}`,
		`{"step":"update","operationType":"NODEPOOL_UPDATE","size":2,"nodes":2,"labels":["team=js","tier=batch"]}`,
		`{"step":"logs","entries":2}`,
		`{"step":"delete","operationType":"NODEPOOL_DELETE","lifecycleState":"DELETED","names":["pool1"]}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	// The pool is deleted at the emulator, not only in what the client saw.
	if st, ok := emu.PoolOf(oke.DemoClusterID, "js-client"); !ok || st.LifecycleState != "DELETED" {
		t.Errorf("js-client: %+v %v", st.LifecycleState, ok)
	}
}
