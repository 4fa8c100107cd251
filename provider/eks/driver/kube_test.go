package driver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	ekssim "github.com/kpool/kpool/cloudsim/eks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/kubeapi"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// TestKubeAccess: the driver's access reaches the emulated cluster's API
// through kubeapi (client-go), where a node group's nodes are listed by
// EKS's label, as many as the node group has.
func TestKubeAccess(t *testing.T) {
	e := newEmulated(t)
	s := providertest.Spec(e.Cluster, "web", kpool.NodePoolSpec{NodeCount: ptr.To(3), Zones: []string{"1", "2", "3"},
		Platform: kpool.NodePoolPlatform{AWS: &kpool.AWSNodePool{InstanceType: "m5.large", VolumeSize: 50}}})
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	cs, err := kubeapi.Clientset(ctx, func(ctx context.Context) (*provider.KubeAccess, error) { return e.Driver.KubeAccess(ctx, e.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "eks.amazonaws.com/nodegroup=" + s.ProviderName})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := e.Sim.NodegroupOf(region, clusterName, s.ProviderName)
	if len(nodes.Items) != 3 || st.ReadyNodes != 3 {
		t.Fatalf("%d nodes listed, the node group has %d", len(nodes.Items), st.ReadyNodes)
	}
	for _, n := range nodes.Items {
		lt := st.LaunchTemplate // the driver puts the volume in a launch template
		if n.Labels[provider.LabelPool] != "web" || n.Labels["node.kubernetes.io/instance-type"] != "m5.large" || lt == nil ||
			n.Labels["eks.amazonaws.com/sourceLaunchTemplateId"] != *lt.ID || n.Labels["eks.amazonaws.com/sourceLaunchTemplateVersion"] != *lt.Version {
			t.Fatalf("node %s: labels %v", n.Name, n.Labels)
		}
	}
}

// TestKubeToken: the access is DescribeCluster's endpoint and CA, and a
// token that is k8s-aws-v1. and the base64url, unpadded, of STS
// GetCallerIdentity presigned at the cluster's endpoint (the emulator)
// with the test's key, x-k8s-aws-id signed, X-Amz-Expires 60, signed now,
// used for 14 minutes.
func TestKubeToken(t *testing.T) {
	e := newEmulated(t)
	before := time.Now().UTC().Truncate(time.Second)
	a, err := e.Driver.KubeAccess(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.Server.Certificate().Raw})
	if a.Server != e.URL+"/k8s/"+ekssim.KubeID(region, clusterName) || !bytes.Equal(a.CA, ca) {
		t.Fatalf("server %q, CA %q", a.Server, a.CA)
	}
	if d := time.Until(a.Expires); d < 13*time.Minute || d > 14*time.Minute {
		t.Fatalf("expires in %v, want 14 minutes", d)
	}
	enc, ok := strings.CutPrefix(a.Token, "k8s-aws-v1.")
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil {
		t.Fatalf("token: prefix %v, %v", ok, err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	date, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil || date.Before(before) || date.After(time.Now()) {
		t.Fatalf("X-Amz-Date %q (%v), want now", q.Get("X-Amz-Date"), err)
	}
	want := map[string]string{"Action": "GetCallerIdentity", "Version": "2011-06-15", "X-Amz-Expires": "60", "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
		"X-Amz-SignedHeaders": "host;x-k8s-aws-id", "X-Amz-Credential": accessKey + "/" + date.Format("20060102") + "/" + region + "/sts/aws4_request"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
	if "https://"+u.Host != e.URL || u.Path != "/" || len(q.Get("X-Amz-Signature")) != 64 || strings.Contains(string(raw), secretKey) {
		t.Fatalf("presigned at %s%s, signature %q", u.Host, u.Path, q.Get("X-Amz-Signature"))
	}
}

// TestKubeForeignServer: a DescribeCluster that names an API server the
// credential may not reach (here, rewritten on its way) is refused with a
// RefusedHostError before any token is made for it.
func TestKubeForeignServer(t *testing.T) {
	emu := setup.Emulator(sim.Options{})
	srv := providertest.Serve(t, rewrite{emu, "https://evil.example.com/k8s/x"})
	d := setup.Driver(t, srv.Client().Transport, providertest.FastRetry(), srv.URL)
	_, err := d.KubeAccess(ctx, clusterAt(srv.URL))
	var re *provider.RefusedHostError
	if !errors.As(err, &re) || re.Host != "https://evil.example.com" {
		t.Fatalf("err %v, want a RefusedHostError for evil.example.com", err)
	}
}

// rewrite answers DescribeCluster with another endpoint.
type rewrite struct {
	*ekssim.Server
	endpoint string
}

func (h rewrite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	h.Server.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if r.Method == http.MethodGet && r.URL.Path == "/clusters/"+clusterName {
		var v map[string]map[string]any
		if err := json.Unmarshal(body, &v); err == nil {
			v["cluster"]["endpoint"] = h.endpoint
			body, _ = json.Marshal(v)
		}
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}
