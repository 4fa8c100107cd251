package eks_test

import (
	"encoding/pem"
	"strings"
	"testing"

	"github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/internal/crossclient"
)

// TestJavaScriptClient: AWS's own JavaScript SDK, which kpool did not
// write, creates, reads and lists a node group on the emulator.
func TestJavaScriptClient(t *testing.T) {
	e := newEnv(t)
	ca := crossclient.CAFile(t, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.cert.Raw}))
	out := string(crossclient.Node(t, "eks.mjs", "NODE_EXTRA_CA_CERTS="+ca, "ENDPOINT="+e.url, "REGION="+eks.DemoRegion,
		"CLUSTER="+eks.DemoCluster, "NODE_ROLE="+eks.DemoNodeRole, "SUBNET="+eks.DemoSubnets["us-west-2a"],
		"AWS_ACCESS_KEY_ID="+eks.DemoAccessKey, "AWS_SECRET_ACCESS_KEY="+eks.DemoSecretKey))
	for _, want := range []string{`"step":"create","status":"CREATING"`, `"step":"list","names":["js-client"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
}
