package civo_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpool/kpool/cloudsim/civo"
)

const clusterPath = "/v2/kubernetes/clusters/" + cid

// TestApplications: the cluster PUT installs the marketplace's
// civo-cluster-autoscaler (its Deployment, app.yaml's, in the cluster's
// Kubernetes API; a second install changes nothing), lists it in
// installed_applications, and refuses an application the emulator does
// not know and the members it does not emulate.
func TestApplications(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
		installed  bool
	}{
		{"install the autoscaler", `{"applications":"civo-cluster-autoscaler","region":"LON1"}`, 200, "", true},
		{"with another case and spaces", `{"applications":" Civo-Cluster-Autoscaler ","region":"LON1"}`, 200, "", true},
		{"nothing to install", `{"region":"LON1"}`, 200, "", false},
		{"an unknown application", `{"applications":"civo-cluster-autoscaler,nope","region":"LON1"}`, 400, "database_kubernetes_application_not_found", false},
		{"pools are not emulated", `{"pools":[{"id":"a","count":1}],"region":"LON1"}`, 400, "parameter_invalid", false},
		{"nor the node count", `{"num_target_nodes":3,"applications":"civo-cluster-autoscaler","region":"LON1"}`, 400, "parameter_invalid", false},
		{"another region", `{"applications":"civo-cluster-autoscaler","region":"FRA1"}`, 404, "database_kubernetes_cluster_not_found", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a := e.do(http.MethodPut, clusterPath, key, tc.body)
			if a.status != tc.status || a.code() != tc.code {
				t.Fatalf("%d %s, want %d %s: %s", a.status, a.code(), tc.status, tc.code, a.body)
			}
			get := e.do(http.MethodGet, clusterPath+"?region="+region, key, "")
			var c struct {
				Apps []struct {
					Application string `json:"application"`
					Installed   bool   `json:"installed"`
				} `json:"installed_applications"`
			}
			if err := json.Unmarshal(get.body, &c); err != nil {
				t.Fatal(err)
			}
			_, deployed := e.emu.Kube().Deployment(cid, civo.AutoscalerNamespace, civo.AutoscalerDeployment)
			listed := len(c.Apps) == 1 && c.Apps[0].Application == civo.AutoscalerApp && c.Apps[0].Installed
			if deployed != tc.installed || listed != tc.installed || !tc.installed && len(c.Apps) != 0 {
				t.Fatalf("deployed %v, installed_applications %+v; want installed %v", deployed, c.Apps, tc.installed)
			}
		})
	}
}

// TestInstallTwice: installing the application again keeps its
// Deployment as it is (a person's change to it included).
func TestInstallTwice(t *testing.T) {
	e := newEnv(t)
	body := `{"applications":"civo-cluster-autoscaler","region":"LON1"}`
	e.do(http.MethodPut, clusterPath, key, body)
	first, _ := e.emu.Kube().Deployment(cid, civo.AutoscalerNamespace, civo.AutoscalerDeployment)
	if a := e.do(http.MethodPut, clusterPath, key, body); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	again, _ := e.emu.Kube().Deployment(cid, civo.AutoscalerNamespace, civo.AutoscalerDeployment)
	if again.ResourceVersion != first.ResourceVersion {
		t.Fatalf("a second install rewrote the Deployment: %s, then %s", first.ResourceVersion, again.ResourceVersion)
	}
}

// TestKubeconfigAndAutoscaler: the kubeconfig of the cluster GET reaches
// the cluster's API with client-go; the autoscaler's Deployment holds
// app.yaml's --nodes=3:10:workers, which bounds every pool while no entry
// names one; once one does, SetDemand moves that pool within its bounds
// and never touches a pool without one.
func TestKubeconfigAndAutoscaler(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewUnstartedServer(e.emu)
	srv.StartTLS()
	defer srv.Close()
	e.emu.SetCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	e.do(http.MethodPut, clusterPath, key, `{"applications":"civo-cluster-autoscaler","region":"LON1"}`)
	for _, id := range []string{"web", "other"} {
		if a := e.do(http.MethodPost, pools, key, `{"id":"`+id+`","count":3,"size":"g4s.kube.medium","region":"LON1"}`); a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	e.clock.Advance(time.Hour) // the pools are up
	var c struct {
		KubeConfig  string `json:"kubeconfig"`
		APIEndpoint string `json:"api_endpoint"`
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+clusterPath+"?region="+region, nil)
	req.Header.Set("Authorization", "bearer "+key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.APIEndpoint != srv.URL+civo.KubePrefix+"/"+cid {
		t.Fatalf("api_endpoint %q", c.APIEndpoint)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(c.KubeConfig))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := appsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deps := cs.Deployments(civo.AutoscalerNamespace)
	ctx := context.Background()
	d, err := deps.Get(ctx, civo.AutoscalerDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := d.Spec.Template.Spec.Containers[0].Command
	if !slices.Contains(cmd, "--nodes=3:10:workers") || !slices.Contains(cmd, "--cloud-provider=civo") {
		t.Fatalf("command %v", cmd)
	}
	if n, err := e.emu.SetDemand(region, cid, "other", 12); err != nil || n != 10 {
		t.Fatalf("workers alone bounds every pool: SetDemand(other, 12) = %d, %v; want 10", n, err)
	}
	if n, err := e.emu.SetDemand(region, cid, "other", 1); err != nil || n != 3 {
		t.Fatalf("SetDemand(other, 1) = %d, %v; want 3", n, err)
	}
	d.Spec.Template.Spec.Containers[0].Command = append(cmd, "--nodes=2:6:web")
	if _, err := deps.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pool     string
		demand   int
		want     int
		untouchd bool
	}{
		{"web", 5, 5, false}, {"web", 10, 6, false}, {"web", 0, 2, false}, {"other", 9, 3, true}, {"workers", 4, 0, true},
	} {
		got, err := e.emu.SetDemand(region, cid, tc.pool, tc.demand)
		if tc.untouchd != (err != nil) || got != tc.want && !tc.untouchd {
			t.Fatalf("SetDemand(%s, %d) = %d, %v; want %d", tc.pool, tc.demand, got, err, tc.want)
		}
		if st, ok := e.emu.PoolOf(region, cid, tc.pool); ok && tc.untouchd && st.Count != tc.want {
			t.Fatalf("pool %s without an entry moved to %d", tc.pool, st.Count)
		}
	}
}
