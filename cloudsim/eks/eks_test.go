package eks_test

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/internal/simtest"
	"github.com/kpool/kpool/cloudsim/sim"
)

var ctx = context.Background()

// env is the demo emulator on a loopback TLS port, driven by a manual
// clock, and an unmodified SDK client of it.
type env struct {
	emu    *eks.Server
	clock  *sim.ManualClock
	url    string
	http   *http.Client
	client *awseks.Client
	cert   *x509.Certificate // the TLS server's, for clients of other languages
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu, err := eks.Demo(sim.Options{Clock: clock, OperationTime: 30 * time.Second, NodeTime: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(emu)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &env{emu: emu, clock: clock, url: srv.URL, http: srv.Client(), client: sdk(srv, eks.DemoAccessKey, eks.DemoSecretKey), cert: srv.Certificate()}
}

func sdk(srv *httptest.Server, key, secret string) *awseks.Client {
	return awseks.New(awseks.Options{Region: eks.DemoRegion, BaseEndpoint: aws.String(srv.URL), HTTPClient: srv.Client(),
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), RetryMaxAttempts: 1})
}

func create(name string, mod func(*awseks.CreateNodegroupInput)) *awseks.CreateNodegroupInput {
	in := &awseks.CreateNodegroupInput{
		ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String(name), NodeRole: aws.String(eks.DemoNodeRole),
		Subnets:       []string{eks.DemoSubnets["us-west-2a"]},
		ScalingConfig: &types.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(3), DesiredSize: aws.Int32(2)},
		InstanceTypes: []string{"m5.large"},
		Labels:        map[string]string{"team": "a"},
	}
	if mod != nil {
		mod(in)
	}
	return in
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestLifecycle: CREATING -> ACTIVE, a config update UPDATING -> ACTIVE
// with its update Successful, a second update refused while one runs,
// DELETING -> gone, all over the engine's clock.
func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	out, err := e.client.CreateNodegroup(ctx, create("web", nil))
	if err != nil {
		t.Fatal(err)
	}
	if out.Nodegroup.Status != types.NodegroupStatusCreating {
		t.Fatalf("created: %s", out.Nodegroup.Status)
	}
	if _, err := e.client.CreateNodegroup(ctx, create("web", nil)); code(err) != "ResourceInUseException" {
		t.Fatalf("a second create: %v", err)
	}
	describe := func() *types.Nodegroup {
		t.Helper()
		d, err := e.client.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")})
		if err != nil {
			t.Fatal(err)
		}
		return d.Nodegroup
	}
	e.clock.Advance(time.Hour)
	if ng := describe(); ng.Status != types.NodegroupStatusActive || aws.ToInt32(ng.ScalingConfig.DesiredSize) != 2 {
		t.Fatalf("settled: %+v", ng)
	}
	up, err := e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web"),
		ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(3)},
		Labels:        &types.UpdateLabelsPayload{RemoveLabels: []string{"team"}, AddOrUpdateLabels: map[string]string{"tier": "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Update.Status != types.UpdateStatusInProgress || up.Update.Type != types.UpdateTypeConfigUpdate {
		t.Fatalf("update: %+v", up.Update)
	}
	if _, err := e.client.UpdateNodegroupVersion(ctx, &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")}); code(err) != "ResourceInUseException" {
		t.Fatalf("an update during an update: %v", err)
	}
	if ng := describe(); ng.Status != types.NodegroupStatusUpdating {
		t.Fatalf("updating: %s", ng.Status)
	}
	e.clock.Advance(time.Hour)
	du, err := e.client.DescribeUpdate(ctx, &awseks.DescribeUpdateInput{Name: aws.String(eks.DemoCluster), UpdateId: up.Update.Id, NodegroupName: aws.String("web")})
	if err != nil || du.Update.Status != types.UpdateStatusSuccessful {
		t.Fatalf("update after: %+v, %v", du, err)
	}
	ids, err := e.client.ListUpdates(ctx, &awseks.ListUpdatesInput{Name: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")})
	if err != nil || len(ids.UpdateIds) != 1 {
		t.Fatalf("updates: %+v, %v", ids, err)
	}
	if ng := describe(); ng.Status != types.NodegroupStatusActive || ng.Labels["tier"] != "b" || ng.Labels["team"] != "" {
		t.Fatalf("updated: %+v", ng)
	}
	if _, err := e.client.TagResource(ctx, &awseks.TagResourceInput{ResourceArn: describe().NodegroupArn, Tags: map[string]string{"a": "1", "b": "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.UntagResource(ctx, &awseks.UntagResourceInput{ResourceArn: describe().NodegroupArn, TagKeys: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if tags := describe().Tags; len(tags) != 1 || tags["b"] != "2" {
		t.Fatalf("tags %v", tags)
	}
	if _, err := e.client.TagResource(ctx, &awseks.TagResourceInput{ResourceArn: aws.String("arn:aws:eks:us-west-2:111122223333:nodegroup/demo-eks/x/y"), Tags: map[string]string{"a": "1"}}); code(err) != "NotFoundException" {
		t.Fatalf("tagging a missing node group: %v", err)
	}
	d, err := e.client.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")})
	if err != nil || d.Nodegroup.Status != types.NodegroupStatusDeleting {
		t.Fatalf("delete: %+v, %v", d, err)
	}
	e.clock.Advance(time.Hour)
	var nf *types.ResourceNotFoundException
	_, err = e.client.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")})
	if !errors.As(err, &nf) || aws.ToString(nf.NodegroupName) != "web" {
		t.Fatalf("deleted: %v", err)
	}
}

// TestPaging: ListNodegroups pages by maxResults and nextToken, and
// refuses a maxResults outside 1..100.
func TestPaging(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		if _, err := e.client.CreateNodegroup(ctx, create(n, nil)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	pages := 0
	p := awseks.NewListNodegroupsPaginator(e.client, &awseks.ListNodegroupsInput{ClusterName: aws.String(eks.DemoCluster), MaxResults: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, page.Nodegroups...)
	}
	if strings.Join(got, ",") != "a,b,c,d,e" || pages != 3 {
		t.Fatalf("%d pages: %v", pages, got)
	}
	_, err := e.client.ListNodegroups(ctx, &awseks.ListNodegroupsInput{ClusterName: aws.String(eks.DemoCluster), MaxResults: aws.Int32(101)})
	if code(err) != "InvalidParameterException" {
		t.Fatalf("maxResults 101: %v", err)
	}
}

// TestRefusals: what EKS refuses, with its error shapes.
func TestRefusals(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		mod  func(*awseks.CreateNodegroupInput)
		want string
	}{
		{"min over max", func(in *awseks.CreateNodegroupInput) { in.ScalingConfig.MinSize = aws.Int32(4) }, "InvalidParameterException"},
		{"desired over max", func(in *awseks.CreateNodegroupInput) { in.ScalingConfig.DesiredSize = aws.Int32(9) }, "InvalidParameterException"},
		{"max 0", func(in *awseks.CreateNodegroupInput) {
			in.ScalingConfig = &types.NodegroupScalingConfig{MinSize: aws.Int32(0), MaxSize: aws.Int32(0), DesiredSize: aws.Int32(0)}
		}, "InvalidParameterException"},
		{"capacity type", func(in *awseks.CreateNodegroupInput) { in.CapacityType = "CHEAP" }, "InvalidParameterException"},
		{"ami type", func(in *awseks.CreateNodegroupInput) { in.AmiType = "UBUNTU" }, "InvalidParameterException"},
		{"taint effect", func(in *awseks.CreateNodegroupInput) {
			in.Taints = []types.Taint{{Key: aws.String("k"), Effect: "NoSchedule"}}
		}, "InvalidParameterException"},
		{"label key", func(in *awseks.CreateNodegroupInput) { in.Labels = map[string]string{"-bad": "x"} }, "InvalidParameterException"},
		{"name", func(in *awseks.CreateNodegroupInput) { in.NodegroupName = aws.String("-web") }, "InvalidParameterException"},
		{"subnet of another VPC", func(in *awseks.CreateNodegroupInput) { in.Subnets = []string{"subnet-0123456789abcdef0"} }, "InvalidParameterException"},
		{"node role", func(in *awseks.CreateNodegroupInput) { in.NodeRole = aws.String("nodes") }, "InvalidParameterException"},
		{"newer version", func(in *awseks.CreateNodegroupInput) { in.Version = aws.String("1.32") }, "InvalidParameterException"},
		{"aws: tag", func(in *awseks.CreateNodegroupInput) { in.Tags = map[string]string{"aws:x": "y"} }, "InvalidParameterException"},
		{"tag character", func(in *awseks.CreateNodegroupInput) { in.Tags = map[string]string{"team": "a<b"} }, "InvalidParameterException"},
		{"tag key too long", func(in *awseks.CreateNodegroupInput) { in.Tags = map[string]string{strings.Repeat("k", 129): "v"} }, "InvalidParameterException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.client.CreateNodegroup(ctx, create("ng-"+strings.ReplaceAll(tc.name, " ", "-"), tc.mod))
			if code(err) != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
	if _, err := e.client.CreateNodegroup(ctx, create("web", nil)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	for name, in := range map[string]*awseks.UpdateNodegroupConfigInput{
		"nothing":                 {},
		"label added and removed": {Labels: &types.UpdateLabelsPayload{AddOrUpdateLabels: map[string]string{"team": "b"}, RemoveLabels: []string{"team"}}},
		"absent label":            {Labels: &types.UpdateLabelsPayload{RemoveLabels: []string{"nope"}}},
		"absent taint":            {Taints: &types.UpdateTaintsPayload{RemoveTaints: []types.Taint{{Key: aws.String("k"), Effect: types.TaintEffectNoSchedule}}}},
		"desired under min":       {ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(0)}},
	} {
		in.ClusterName, in.NodegroupName = aws.String(eks.DemoCluster), aws.String("web")
		if _, err := e.client.UpdateNodegroupConfig(ctx, in); code(err) != "InvalidParameterException" {
			t.Errorf("%s: %v", name, err)
		}
	}
	var nf *types.ResourceNotFoundException
	_, err := e.client.ListNodegroups(ctx, &awseks.ListNodegroupsInput{ClusterName: aws.String("nope")})
	if !errors.As(err, &nf) || nf.NodegroupName != nil {
		t.Fatalf("a missing cluster: %v", err)
	}
}

// TestSignature: the raw wire rules of SigV4, and the SDK with a wrong
// secret or an unknown key.
func TestSignature(t *testing.T) {
	e := newEnv(t)
	resp, err := e.http.Get(e.url + "/clusters/" + eks.DemoCluster + "/node-groups")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), "MissingAuthenticationTokenException") ||
		!strings.Contains(string(body), `"message":"Missing Authentication Token"`) {
		t.Fatalf("unsigned: %d %s %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/clusters/"+eks.DemoCluster+"/node-groups", nil)
	req.Header.Set("Authorization", "Bearer x")
	resp, err = e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), "IncompleteSignatureException") {
		t.Fatalf("not SigV4: %d %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"))
	}
	for key, want := range map[[2]string]string{
		{eks.DemoAccessKey, "wrong"}:           "InvalidSignatureException",
		{"AKIAUNKNOWNUNKNOWN01", "x"}:          "UnrecognizedClientException",
		{eks.DemoAccessKey, eks.DemoSecretKey}: "",
	} {
		c := awseks.New(awseks.Options{Region: eks.DemoRegion, BaseEndpoint: aws.String(e.url), HTTPClient: e.http,
			Credentials: credentials.NewStaticCredentialsProvider(key[0], key[1], ""), RetryMaxAttempts: 1})
		_, err := c.ListNodegroups(ctx, &awseks.ListNodegroupsInput{ClusterName: aws.String(eks.DemoCluster)})
		if code(err) != want {
			t.Errorf("key %s: %v, want %q", key[0], err, want)
		}
	}
}

// TestThrottlingAndFaults: the engine's rate limit is ThrottlingException
// 429; its faults are ServerException 500, ServiceUnavailableException 503
// or a dropped connection.
func TestThrottlingAndFaults(t *testing.T) {
	e := newEnv(t)
	e.emu.SetRateLimit(0.001, 1)
	list := func() error {
		_, err := e.client.ListNodegroups(ctx, &awseks.ListNodegroupsInput{ClusterName: aws.String(eks.DemoCluster)})
		return err
	}
	_ = list()
	var th *types.ThrottlingException
	if err := list(); !errors.As(err, &th) {
		t.Fatalf("over the limit: %v", err)
	}
	e.emu.SetRateLimit(0, 0)
	e.emu.SetFaultRate(1)
	seen := map[string]bool{}
	for range 30 {
		err := list()
		switch c := code(err); {
		case c != "":
			seen[c] = true
		case err != nil:
			seen["drop"] = true
		}
	}
	for _, want := range []string{"ServerException", "ServiceUnavailableException", "drop"} {
		if !seen[want] {
			t.Errorf("no %s in 30 faults: %v", want, seen)
		}
	}
}

// TestDegradedHeals: a scale whose launches fail leaves the node group
// DEGRADED with a health issue; its Auto Scaling group keeps launching, and
// as long again as the operation took, it is ACTIVE at full size.
func TestDegradedHeals(t *testing.T) {
	e := newEnv(t)
	if _, err := e.client.CreateNodegroup(ctx, create("web", nil)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	degraded := simtest.FailOperation(e.emu, 0.5, 100, func(i int) bool {
		_, err := e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web"),
			ScalingConfig: &types.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(3), DesiredSize: aws.Int32(int32(1 + (i+1)%3))}})
		return err == nil
	}, func(int, bool) { e.clock.Advance(55*time.Second + time.Hour) })
	if !degraded {
		t.Fatal("no scale failed in 100 tries")
	}
	e.clock.Advance(55 * time.Second) // the operation ends (30s + 10s a node, at most two), its healing has not
	if st, _ := e.emu.NodegroupOf(eks.DemoRegion, eks.DemoCluster, "web"); st.Status != "DEGRADED" || len(st.Health.Issues) != 1 {
		t.Fatalf("after a failed scale: %s, issues %+v", st.Status, st.Health.Issues)
	}
	e.clock.Advance(10 * time.Minute)
	out, err := e.client.DescribeNodegroup(ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")})
	if err != nil {
		t.Fatal(err)
	}
	if ng := out.Nodegroup; ng.Status != types.NodegroupStatusActive || len(ng.Health.Issues) != 0 {
		t.Fatalf("after the launches caught up: %s, issues %+v", ng.Status, ng.Health.Issues)
	}
}
