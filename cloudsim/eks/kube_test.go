package eks_test

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/eks"
)

// kubeEnv is the demo emulator with its CA set, and what a client of its
// cluster's Kubernetes API needs: the endpoint and CA DescribeCluster
// answers.
type kubeEnv struct {
	*env
	endpoint string
	ca       []byte
}

func newKubeEnv(t *testing.T) *kubeEnv {
	t.Helper()
	e := newEnv(t)
	e.emu.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.cert.Raw}))
	e.emu.SetTokenClock(e.clock.Now)
	out, err := e.client.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String(eks.DemoCluster)})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := base64.StdEncoding.DecodeString(aws.ToString(out.Cluster.CertificateAuthority.Data))
	if err != nil {
		t.Fatal(err)
	}
	if want := e.url + "/k8s/" + eks.KubeID(eks.DemoRegion, eks.DemoCluster); aws.ToString(out.Cluster.Endpoint) != want {
		t.Fatalf("endpoint %q, want %q", aws.ToString(out.Cluster.Endpoint), want)
	}
	return &kubeEnv{env: e, endpoint: aws.ToString(out.Cluster.Endpoint), ca: ca}
}

// presignAt signs at a fixed time (the emulator's clock), through the STS
// SDK's own presigner.
type presignAt struct{ at time.Time }

func (p presignAt) PresignHTTP(ctx context.Context, c aws.Credentials, r *http.Request, hash, service, region string, _ time.Time,
	opts ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return v4.NewSigner().PresignHTTP(ctx, c, r, hash, service, region, p.at, opts...)
}

// token makes an EKS token as `aws eks get-token` does: STS
// GetCallerIdentity presigned at stsURL with x-k8s-aws-id: cluster and
// X-Amz-Expires 60, k8s-aws-v1. and base64url.
func token(t *testing.T, stsURL, cluster, secret string, at time.Time) string {
	t.Helper()
	c := sts.NewPresignClient(sts.New(sts.Options{Region: eks.DemoRegion, BaseEndpoint: aws.String(stsURL),
		Credentials: credentials.NewStaticCredentialsProvider(eks.DemoAccessKey, secret, "")}), func(o *sts.PresignOptions) {
		o.Presigner = presignAt{at}
		o.ClientOptions = append(o.ClientOptions, func(o *sts.Options) {
			o.APIOptions = append(o.APIOptions, smithyhttp.SetHeaderValue("x-k8s-aws-id", cluster), smithyhttp.SetHeaderValue("X-Amz-Expires", "60"))
		})
	})
	req, err := c.PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	return "k8s-aws-v1." + base64.RawURLEncoding.EncodeToString([]byte(req.URL))
}

// clientset is client-go with a bearer token, to the cluster's API.
func (e *kubeEnv) clientset(t *testing.T, tok string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: e.endpoint, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: e.ca}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kube is client-go to the cluster with a token made now (a token lives
// 15 minutes; the tests' clock moves by hours).
func (e *kubeEnv) kube(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	return e.clientset(t, token(t, e.url, eks.DemoCluster, eks.DemoSecretKey, e.clock.Now()))
}

// nodes lists a node group's nodes by EKS's label.
func (e *kubeEnv) nodes(t *testing.T, group string) []corev1.Node {
	t.Helper()
	l, err := e.kube(t).CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: eks.LabelNodegroup + "=" + group})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

var (
	nodeName   = regexp.MustCompile(`^ip-10-0-\d+-\d+\.us-west-2\.compute\.internal$`)
	providerID = regexp.MustCompile(`^aws:///(us-west-2[a-d])/i-[0-9a-f]{17}$`)
	kubelet    = regexp.MustCompile(`^v1\.31\.0-eks-[0-9a-f]{7}$`)
	ami        = regexp.MustCompile(`^ami-[0-9a-f]{17}$`)
)

// checkNode checks a node as EKS makes it for the test's node group web.
func checkNode(t *testing.T, n corev1.Node, team string) {
	t.Helper()
	m := providerID.FindStringSubmatch(n.Spec.ProviderID)
	l := n.Labels
	if !nodeName.MatchString(n.Name) || m == nil || l["topology.kubernetes.io/zone"] != m[1] || l["topology.kubernetes.io/region"] != eks.DemoRegion ||
		l["topology.k8s.aws/zone-id"] != "usw2-az"+string(rune('1'+m[1][len(m[1])-1]-'a')) || l["eks.amazonaws.com/capacityType"] != "SPOT" ||
		l["node.kubernetes.io/instance-type"] != "m5.large" || !ami.MatchString(l["eks.amazonaws.com/nodegroup-image"]) ||
		len(l["k8s.io/cloud-provider-aws"]) != 32 || l["team"] != team || l["kubernetes.io/hostname"] != n.Name {
		t.Fatalf("node %s: providerID %q, labels %v", n.Name, n.Spec.ProviderID, l)
	}
	if !slices.Contains(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}) {
		t.Fatalf("node %s: taints %v", n.Name, n.Spec.Taints)
	}
	ready := slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	})
	if !ready || !kubelet.MatchString(n.Status.NodeInfo.KubeletVersion) {
		t.Fatalf("node %s: ready %v, kubelet %q", n.Name, ready, n.Status.NodeInfo.KubeletVersion)
	}
}

func zonesOf(ns []corev1.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Labels["topology.kubernetes.io/zone"])
	}
	slices.Sort(out)
	return out
}

// TestKubeTokens: the cluster's API takes an EKS token presigned with the
// demo key at the emulator, and the static token of Kubeconfigs' kubeconfig
// for people, and refuses (401) one that is malformed,
// expired (15 minutes after its X-Amz-Date), for another cluster, signed
// with a wrong secret, or presigned for another STS host.
func TestKubeTokens(t *testing.T) {
	e := newKubeEnv(t)
	now := e.clock.Now()
	good := token(t, e.url, eks.DemoCluster, eks.DemoSecretKey, now)
	if _, err := e.clientset(t, good).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("a good token: %v", err)
	}
	for name, tok := range map[string]string{
		"malformed":     "k8s-aws-v1.bm90IGEgdXJs",
		"other cluster": token(t, e.url, "other", eks.DemoSecretKey, now),
		"wrong secret":  token(t, e.url, eks.DemoCluster, "not-the-secret", now),
		"other host":    token(t, "https://sts.us-west-2.amazonaws.com", eks.DemoCluster, eks.DemoSecretKey, now),
		"old":           token(t, e.url, eks.DemoCluster, eks.DemoSecretKey, now.Add(-16*time.Minute)),
	} {
		_, err := e.clientset(t, tok).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: %v, want 401", name, err)
		}
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(e.emu.Kubeconfigs(e.url)[eks.DemoCluster]))
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := kubernetes.NewForConfig(cfg); err != nil || cfg.Host != e.endpoint {
		t.Fatalf("the kubeconfig's server %q, %v", cfg.Host, err)
	} else if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the kubeconfig's static token: %v", err)
	}
	e.clock.Advance(14 * time.Minute)
	if _, err := e.clientset(t, good).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("a token 14 minutes old: %v", err)
	}
	e.clock.Advance(2 * time.Minute)
	if _, err := e.clientset(t, good).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a token 16 minutes old: %v, want 401", err)
	}
}

// TestKubeNodes: a node group's nodes appear in the cluster's API with
// EKS's names, provider ids and labels, spread over its subnets' zones;
// they follow scaling, a label update (at its end, leaving a label set
// with kubectl), a version update (every node replaced in its zone) and
// the delete.
func TestKubeNodes(t *testing.T) {
	e := newKubeEnv(t)
	in := create("web", func(in *awseks.CreateNodegroupInput) {
		in.Subnets = []string{eks.DemoSubnets["us-west-2a"], eks.DemoSubnets["us-west-2b"], eks.DemoSubnets["us-west-2c"]}
		in.ScalingConfig = &types.NodegroupScalingConfig{MinSize: aws.Int32(0), MaxSize: aws.Int32(6), DesiredSize: aws.Int32(3)}
		in.CapacityType = types.CapacityTypesSpot
		in.Taints = []types.Taint{{Key: aws.String("dedicated"), Value: aws.String("web"), Effect: types.TaintEffectNoSchedule}}
	})
	if _, err := e.client.CreateNodegroup(ctx, in); err != nil {
		t.Fatal(err)
	}
	if n := e.nodes(t, "web"); len(n) != 0 {
		t.Fatalf("%d nodes at the create", len(n))
	}
	e.clock.Advance(15 * time.Second) // a node every 10 s (the engine counts machines being made)
	if n := e.nodes(t, "web"); len(n) != 1 {
		t.Fatalf("%d nodes 15 s in, want 1", len(n))
	}
	e.clock.Advance(time.Hour)
	nodes := e.nodes(t, "web")
	if z := zonesOf(nodes); len(nodes) != 3 || !slices.Equal(z, []string{"us-west-2a", "us-west-2b", "us-west-2c"}) {
		t.Fatalf("%d nodes in %v", len(nodes), z)
	}
	for _, n := range nodes {
		checkNode(t, n, "a")
	}
	e.scale(t, 5, "a")
	e.scale(t, 1, "a")
	e.relabel(t)
	e.upgrade(t)
	if _, err := e.client.DeleteNodegroup(ctx, &awseks.DeleteNodegroupInput{ClusterName: aws.String(eks.DemoCluster), NodegroupName: aws.String("web")}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if n := e.nodes(t, "web"); len(n) != 0 {
		t.Fatalf("%d nodes after the delete", len(n))
	}
}

// scale sets the desired size and checks the nodes once it is done: as
// many, balanced over the zones, with the node group's label team.
func (e *kubeEnv) scale(t *testing.T, desired int32, team string) {
	t.Helper()
	if _, err := e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster),
		NodegroupName: aws.String("web"), ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(desired)}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	nodes, want := e.nodes(t, "web"), int(desired)
	if len(nodes) != want {
		t.Fatalf("%d nodes, want %d", len(nodes), want)
	}
	per := map[string]int{}
	for _, n := range nodes {
		checkNode(t, n, team)
		per[n.Labels["topology.kubernetes.io/zone"]]++
	}
	for z, n := range per {
		if n > (want+2)/3 {
			t.Fatalf("zones unbalanced: %s has %d of %d", z, n, want)
		}
	}
}

// relabel changes the node group's label team to b and adds a taint: the
// node keeps a until the update ends, then has b, the taint, and still the
// label set by hand.
func (e *kubeEnv) relabel(t *testing.T) {
	t.Helper()
	n := e.nodes(t, "web")[0]
	patch := []byte(`{"metadata":{"labels":{"by-hand":"yes"}}}`)
	if _, err := e.kube(t).CoreV1().Nodes().Patch(ctx, n.Name, k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.UpdateNodegroupConfig(ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eks.DemoCluster),
		NodegroupName: aws.String("web"), Labels: &types.UpdateLabelsPayload{AddOrUpdateLabels: map[string]string{"team": "b"}},
		Taints: &types.UpdateTaintsPayload{AddOrUpdateTaints: []types.Taint{{Key: aws.String("spot"), Effect: types.TaintEffectPreferNoSchedule}}}}); err != nil {
		t.Fatal(err)
	}
	if got := e.nodes(t, "web")[0].Labels["team"]; got != "a" {
		t.Fatalf("team %q while the update runs, want a", got)
	}
	e.clock.Advance(time.Hour)
	got := e.nodes(t, "web")[0]
	checkNode(t, got, "b")
	spot := corev1.Taint{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}
	if got.Name != n.Name || got.Labels["by-hand"] != "yes" || !slices.Contains(got.Spec.Taints, spot) {
		t.Fatalf("node %s (was %s), labels %v", got.Name, n.Name, got.Labels)
	}
}

// upgrade moves the node group to a newer AMI release: at its end, its
// node is a new one in the same zone with the release's kubelet.
func (e *kubeEnv) upgrade(t *testing.T) {
	t.Helper()
	e.scale(t, 2, "b")
	before := e.nodes(t, "web")
	if _, err := e.client.UpdateNodegroupVersion(ctx, &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(eks.DemoCluster),
		NodegroupName: aws.String("web"), ReleaseVersion: aws.String("1.31.5-20260301")}); err != nil {
		t.Fatal(err)
	}
	// 70 s (30 s + 10 s for each of the 4 nodes counted: 2 up, 2
	// drained): one of its two batches (maxUnavailable 1) is done half way.
	e.clock.Advance(35 * time.Second)
	mid := e.nodes(t, "web")
	e.clock.Advance(time.Hour)
	after := e.nodes(t, "web")
	if len(mid) != 2 || len(after) != 2 || !slices.Equal(zonesOf(before), zonesOf(after)) {
		t.Fatalf("nodes: %d half way, %d after; zones %v, then %v", len(mid), len(after), zonesOf(before), zonesOf(after))
	}
	old := func(n corev1.Node) bool {
		return slices.ContainsFunc(before, func(b corev1.Node) bool { return b.Name == n.Name })
	}
	if k := slices.IndexFunc(mid, old); k < 0 || len(slices.DeleteFunc(slices.Clone(mid), old)) != 1 {
		t.Fatalf("half way, want one old node and one new: %v", names(mid))
	}
	for _, n := range after {
		if old(n) || !regexp.MustCompile(`^v1\.31\.5-eks-[0-9a-f]{7}$`).MatchString(n.Status.NodeInfo.KubeletVersion) {
			t.Fatalf("after the update: node %s, kubelet %s", n.Name, n.Status.NodeInfo.KubeletVersion)
		}
	}
}

func names(ns []corev1.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

// TestKubeFailedUpgrade: a version update that fails (an injected fault)
// leaves a node on the old release, the others replaced.
func TestKubeFailedUpgrade(t *testing.T) {
	e := newKubeEnv(t)
	in := create("batch", func(in *awseks.CreateNodegroupInput) {
		in.ScalingConfig = &types.NodegroupScalingConfig{MinSize: aws.Int32(0), MaxSize: aws.Int32(3), DesiredSize: aws.Int32(3)}
		in.UpdateConfig = &types.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(2)}
	})
	if _, err := e.client.CreateNodegroup(ctx, in); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	e.emu.FailNextOperations(1)
	if _, err := e.client.UpdateNodegroupVersion(ctx, &awseks.UpdateNodegroupVersionInput{ClusterName: aws.String(eks.DemoCluster),
		NodegroupName: aws.String("batch"), ReleaseVersion: aws.String("1.31.5-20260301")}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	nodes := e.nodes(t, "batch")
	old := 0
	for _, n := range nodes {
		if kubelet.MatchString(n.Status.NodeInfo.KubeletVersion) {
			old++
		}
	}
	if len(nodes) != 3 || old != 1 {
		t.Fatalf("%d nodes, %d on the old release; want 3 and 1", len(nodes), old)
	}
}
