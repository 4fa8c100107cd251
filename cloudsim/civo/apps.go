package civo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The marketplace application the emulator installs: Civo's cluster
// autoscaler (civo/kubernetes-marketplace, civo-cluster-autoscaler:
// manifest.yaml names it, app.yaml is what it installs). Its Deployment
// is the one object of app.yaml the emulator makes; the ServiceAccount,
// RBAC objects and the civo-api-access Secret it reads are not emulated.
const (
	AutoscalerApp        = "civo-cluster-autoscaler"
	AutoscalerNamespace  = "kube-system"
	AutoscalerDeployment = "cluster-autoscaler"
)

// installedApp is a member of a cluster's installed_applications
// (civogo's KubernetesInstalledApplication), as manifest.yaml describes
// the application.
type installedApp struct {
	Application   string         `json:"application"`
	Name          string         `json:"name"`
	Title         string         `json:"title"`
	Version       string         `json:"version"`
	Dependencies  []string       `json:"dependencies"`
	Maintainer    string         `json:"maintainer"`
	Description   string         `json:"description"`
	PostInstall   string         `json:"post_install"`
	Installed     bool           `json:"installed"`
	URL           string         `json:"url"`
	Category      string         `json:"category"`
	UpdatedAt     time.Time      `json:"updated_at"`
	ImageURL      string         `json:"image_url"`
	Plan          *string        `json:"plan"`
	Configuration map[string]any `json:"configuration"`
}

// marketplace are the applications the emulator can install, by name.
var marketplace = map[string]installedApp{
	AutoscalerApp: {Application: AutoscalerApp, Name: AutoscalerApp, Title: "Civo cluster autoscaler", Version: "v1.25.0",
		Maintainer: "@kunal-kushwaha, vishal@civo.com", Category: "management",
		Description: "Cluster Autoscaler is a tool that automatically adjusts the size of the Kubernetes cluster.",
		URL:         "https://github.com/kubernetes/autoscaler/tree/master/cluster-autoscaler",
		PostInstall: "Civo cluster autoscaler is part of the official Kubernetes cluster autoscaler repository that will automatically adjusts the size of the Kubernetes cluster.\n",
		Installed:   true, Dependencies: []string{}, Configuration: map[string]any{}},
}

// clusterRequest is the body of the cluster PUT (civogo's
// KubernetesClusterConfig). Only applications is emulated; a PUT setting
// anything else is refused (see updateCluster).
type clusterRequest struct {
	Applications string `json:"applications"`
	Region       string `json:"region"`
	// What the emulator does not change: named so that a PUT setting
	// them is told so rather than ignored.
	Name              string          `json:"name"`
	NumTargetNodes    int             `json:"num_target_nodes"`
	TargetNodesSize   string          `json:"target_nodes_size"`
	KubernetesVersion string          `json:"kubernetes_version"`
	NodeDestroy       string          `json:"node_destroy"`
	Tags              string          `json:"tags"`
	Pools             json.RawMessage `json:"pools"`
	FirewallID        string          `json:"firewall_id"`
	CNIPlugin         string          `json:"cni_plugin"`
}

// notEmulatedMember names the first member a cluster PUT sets that the
// emulator does not change.
func (in *clusterRequest) notEmulatedMember() string {
	for _, m := range []struct {
		name string
		set  bool
	}{
		{"name", in.Name != ""}, {"num_target_nodes", in.NumTargetNodes != 0}, {"target_nodes_size", in.TargetNodesSize != ""},
		{"kubernetes_version", in.KubernetesVersion != ""}, {"node_destroy", in.NodeDestroy != ""}, {"tags", in.Tags != ""},
		{"pools", len(in.Pools) > 0 && string(in.Pools) != "null"}, {"firewall_id", in.FirewallID != ""}, {"cni_plugin", in.CNIPlugin != ""},
	} {
		if m.set {
			return m.name
		}
	}
	return ""
}

// updateCluster answers PUT /v2/kubernetes/clusters/{id} (civogo's
// UpdateKubernetesCluster: the cluster is the answer). applications, a
// comma-separated list as the civo CLI's "kubernetes applications add"
// sends it, installs each application named that is not installed; those
// installed stay. Installing civo-cluster-autoscaler makes its Deployment
// in the cluster's Kubernetes API.
func (s *Server) updateCluster(req *call) *sim.Reply {
	var in clusterRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return failf(http.StatusBadRequest, codeParameterInvalid, "The request body could not be decoded: %v", err)
	}
	if m := in.notEmulatedMember(); m != "" {
		return failf(http.StatusBadRequest, codeParameterInvalid, "The emulator changes a cluster's applications only, not its %s", m)
	}
	c := req.cluster
	var add []string
	for _, name := range strings.Split(in.Applications, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, ok := marketplace[strings.ToLower(name)]; !ok {
			return failf(http.StatusBadRequest, codeAppNotFound, "Failed to find the application %s in the Kubernetes marketplace", name)
		}
		add = append(add, strings.ToLower(name))
	}
	for _, name := range add {
		if slices.Contains(c.apps, name) {
			continue
		}
		if name == AutoscalerApp {
			if _, err := s.kube.Create(c.ID, autoscalerDeployment()); err != nil {
				return failf(http.StatusInternalServerError, "internal_error", "installing %s: %v", name, err)
			}
		}
		c.apps = append(c.apps, name)
	}
	return jsonReply(s.view(c, req.Now, baseURL(req)))
}

// baseURL is the emulator's own URL as the request reached it.
func baseURL(req *call) string { return req.BaseURL() }

// autoscalerDeployment is app.yaml's Deployment: the cluster autoscaler
// for Civo, whose only pool entry is the application's own --nodes=3:10:workers.
func autoscalerDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": AutoscalerDeployment}
	cpu, mem := resource.MustParse("100m"), resource.MustParse("300Mi")
	res := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	env := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "civo-api-access"}, Key: key}}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: AutoscalerDeployment, Namespace: AutoscalerNamespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8085"}},
				Spec: corev1.PodSpec{ServiceAccountName: AutoscalerDeployment, PriorityClassName: "system-cluster-critical",
					Containers: []corev1.Container{{
						Name: AutoscalerDeployment, Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.29.1", ImagePullPolicy: corev1.PullAlways,
						Resources: corev1.ResourceRequirements{Limits: res, Requests: res},
						Command: []string{"./cluster-autoscaler", "--v=4", "--stderrthreshold=info", "--cloud-provider=civo",
							"--nodes=3:10:workers", "--skip-nodes-with-local-storage=false", "--skip-nodes-with-system-pods=false"},
						Env: []corev1.EnvVar{env("CIVO_API_URL", "api-url"), env("CIVO_API_KEY", "api-key"),
							env("CIVO_CLUSTER_ID", "cluster-id"), env("CIVO_REGION", "region")},
					}},
				},
			},
		},
	}
}

// nodeBounds are a pool's bounds as the cluster autoscaler's Civo
// provider finds them in its --nodes=MIN:MAX:NAME flags (kubernetes/
// autoscaler, cluster-autoscaler/cloudprovider/civo/civo_manager.go,
// Manager.Refresh): an entry named after a pool's id bounds that pool;
// the name "workers" bounds every pool of the cluster, but only while no
// entry names a pool (once one does, the pool entries win and a pool
// without one is not scaled).
func nodeBounds(d *appsv1.Deployment, pool string) (lo, hi int, ok bool) {
	var workers *[2]int
	perPool := false
	for _, ct := range d.Spec.Template.Spec.Containers {
		for _, arg := range append(slices.Clone(ct.Command), ct.Args...) {
			name, b, valid := parseNodes(arg)
			switch {
			case !valid:
			case name == "workers":
				workers = &b
			case name == pool:
				return b[0], b[1], true
			default:
				perPool = true
			}
		}
	}
	if workers != nil && !perPool {
		return workers[0], workers[1], true
	}
	return 0, 0, false
}

// parseNodes reads one --nodes=MIN:MAX:NAME flag.
func parseNodes(arg string) (string, [2]int, bool) {
	v, found := strings.CutPrefix(arg, "--nodes=")
	if !found {
		return "", [2]int{}, false
	}
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 {
		return "", [2]int{}, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || a > b {
		return "", [2]int{}, false
	}
	return parts[2], [2]int{a, b}, true
}

// SetDemand is the emulated cluster autoscaler at work: the cluster's
// workloads want n nodes of a pool, and the autoscaler moves the pool's
// count to n within its bounds (nodeBounds: its own --nodes entry, or the
// "workers" one while no entry names a pool), through Civo's pool API as
// the real one does (applied at once here, its nodes up). A pool the
// autoscaler does not bound, or a cluster without the application, is
// never touched, nor is a pool with an operation running (an error says
// so). It returns the pool's count.
func (s *Server) SetDemand(region, clusterID, pool string, n int) (int, error) {
	d, ok := s.kube.Deployment(clusterID, AutoscalerNamespace, AutoscalerDeployment)
	if !ok {
		return 0, fmt.Errorf("civo: cluster %s has no cluster autoscaler", clusterID)
	}
	lo, hi, ok := nodeBounds(d, pool)
	if !ok {
		return 0, fmt.Errorf("civo: the cluster autoscaler does not scale pool %s (no --nodes entry of its own while others have one)", pool)
	}
	want := min(max(n, lo), hi)
	if st, ok := s.PoolOf(region, clusterID, pool); ok && st.Operation != "" {
		return st.Count, fmt.Errorf("civo: pool %s is %s; the autoscaler waits", pool, strings.ToLower(st.Operation))
	}
	if err := s.Mutate(region, clusterID, pool, func(p *Pool) { p.Count = want }); err != nil {
		return 0, err
	}
	st, _ := s.PoolOf(region, clusterID, pool)
	return st.Count, nil
}
