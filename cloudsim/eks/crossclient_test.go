package eks_test

import (
	"encoding/pem"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/internal/crossclient"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestJavaScriptClient: AWS's own JavaScript SDK (@aws-sdk/client-eks and
// @aws-sdk/client-ec2), which kpool did not write, makes a launch
// template on EC2's Query API, then creates, describes, lists, updates
// (labels and scaling), rolls to a new template version and deletes a
// node group on it, and deletes the template, on the demo cluster; then
// reads EC2's catalogue, paged, and sees an instance type its subnet's
// zone does not offer refused.
func TestJavaScriptClient(t *testing.T) {
	emu, err := eks.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(emu)
	t.Cleanup(srv.Close)
	ca := crossclient.CAFile(t, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	out := string(crossclient.Node(t, "eks.mjs", "NODE_EXTRA_CA_CERTS="+ca, "ENDPOINT="+srv.URL, "REGION="+eks.DemoRegion,
		"CLUSTER="+eks.DemoCluster, "NODE_ROLE="+eks.DemoNodeRole, "SUBNET="+eks.DemoSubnets["us-west-2a"],
		"AWS_ACCESS_KEY_ID="+eks.DemoAccessKey, "AWS_SECRET_ACCESS_KEY="+eks.DemoSecretKey))
	for _, want := range []string{
		`{"step":"template","name":"js-client-lt","version":1}`,
		`{"step":"create","status":"CREATING","name":"js-client","launchTemplate":"1"}`,
		`{"step":"describe","name":"js-client","desired":2}`,
		`{"step":"list","names":["js-client"]}`,
		`{"step":"created","status":"ACTIVE"}`,
		`{"step":"update-config","type":"ConfigUpdate","status":"InProgress"}`,
		`{"step":"updated","status":"ACTIVE","desired":3,"labels":{"tier":"batch"}}`,
		`{"step":"update-version","type":"VersionUpdate","params":["Version=1.31","ReleaseVersion=1.31.0-20260101","LaunchTemplateName=js-client-lt","LaunchTemplateVersion=2"]}`,
		`{"step":"rolled","update":"Successful","launchTemplate":"2"}`,
		`{"step":"template-version","version":2,"volumeType":"gp3","volumeSize":40}`,
		`{"step":"delete","status":"DELETING"}`,
		`{"step":"deleted","names":[]}`,
		`{"step":"template-deleted","name":"js-client-lt"}`,
		`{"step":"subnet","zone":"us-west-2a"}`,
		`{"step":"offerings","many":true,"m5":true,"p4d":false}`,
		`{"step":"instance-type","name":"g5.xlarge","vcpus":4,"memory":16384,"gpus":1,"usage":["on-demand","spot"]}`,
		`{"step":"unoffered","refused":"InvalidRequestException","status":400}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
}
