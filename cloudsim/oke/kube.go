package oke

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/kube"
)

// KubePrefix is the path under which the emulator serves its clusters'
// Kubernetes APIs: a cluster's kubeconfig names
// https://<the emulator>/k8s/<cluster OCID>.
const KubePrefix = "/k8s"

// kubeState is the emulator's side of its clusters' Kubernetes APIs.
type kubeState struct {
	api *kube.API
	mu  sync.Mutex
	ca  []byte // SetCA's PEM, for CreateKubeconfig
	// synced is what SyncNodes was last given, by cluster OCID and pool
	// OCID; guarded by the engine's lock.
	synced map[string][]kube.NodeSpec
}

// ServeHTTP serves a cluster's Kubernetes API (under KubePrefix) or OKE's
// API, through the engine.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.kube.api.Handles(r.URL.Path) {
		s.kube.api.ServeHTTP(w, r)
		return
	}
	s.Engine.ServeHTTP(w, r)
}

// SetCA sets the PEM of the certificate authority that signed the
// emulator's TLS certificate, which the clusters' kubeconfigs tell their
// clients to trust (kpool cloudsim and the tests' servers call it).
func (s *Server) SetCA(pem []byte) {
	s.kube.mu.Lock()
	s.kube.ca = slices.Clone(pem)
	s.kube.mu.Unlock()
	s.kube.api.SetCA(pem)
}

func (s *Server) caPEM() []byte {
	s.kube.mu.Lock()
	defer s.kube.mu.Unlock()
	return slices.Clone(s.kube.ca)
}

// Kube is the clusters' Kubernetes API, for tests and hand-made changes.
func (s *Server) Kube() *kube.API { return s.kube.api }

// Kubeconfigs returns, for each cluster by name, the kubeconfig of its
// emulated Kubernetes API when the emulator is served at endpoint, with
// the API's static token (kube.API.Kubeconfig): what kpool cloudsim
// writes for people's kubectl, which cannot run OCI's CLI against it.
func (s *Server) Kubeconfigs(endpoint string) map[string]string {
	out := map[string]string{}
	for _, c := range s.views() {
		out[c.Name] = s.kube.api.Kubeconfig(endpoint, c.ID, c.Name)
	}
	return out
}

// initKube makes the Kubernetes API side of a new Server.
func (s *Server) initKube() {
	s.kube = &kubeState{api: kube.New(KubePrefix), synced: map[string][]kube.NodeSpec{}}
	s.kube.api.SetRefresh(func(string) { s.Do(s.tick) })
}

// addKubeCluster gives a cluster its Kubernetes API, accepting the tokens
// `oci ce cluster generate-token` makes for it (tokenCheck).
func (s *Server) addKubeCluster(id string) {
	s.kube.api.AddCluster(id)
	s.kube.api.SetTokenCheck(id, func(token string) bool { return s.tokenCheck(id, token) })
}

// syncKube hands each pool's nodes to the clusters' Kubernetes APIs when
// they changed since the last time (the engine's lock is held). OKE labels
// no node with its pool (README.md), so SyncNodes is given no pool label:
// the nodes a pool no longer has are deleted here, all of them before any
// pool's nodes are synced, so that a name (a private IP) another pool took
// over is not deleted after it was synced.
func (s *Server) syncKube() {
	want, exists := map[string][]kube.NodeSpec{}, map[string]bool{}
	for _, p := range s.pools {
		nodes := p.nodeSpecs()
		slices.SortFunc(nodes, func(a, b kube.NodeSpec) int { return strings.Compare(a.Name, b.Name) })
		want[p.cluster.ID+"\x00"+p.id], exists[p.cluster.ID+"\x00"+p.id] = nodes, true
	}
	for key := range s.kube.synced {
		if _, ok := want[key]; !ok {
			want[key] = nil
		}
	}
	changed := map[string]bool{}
	for key, nodes := range want {
		old, ok := s.kube.synced[key]
		if ok && equality.Semantic.DeepEqual(old, nodes) {
			continue
		}
		changed[key] = true
		cluster, _, _ := strings.Cut(key, "\x00")
		for _, n := range old {
			if !slices.ContainsFunc(nodes, func(m kube.NodeSpec) bool { return m.Name == n.Name }) {
				_ = s.kube.api.DeleteNode(cluster, n.Name)
			}
		}
	}
	for key := range changed {
		cluster, pool, _ := strings.Cut(key, "\x00")
		s.kube.api.SyncNodes(cluster, "", pool, want[key], kube.AtCreate)
		if !exists[key] {
			delete(s.kube.synced, key)
			continue
		}
		s.kube.synced[key] = want[key]
	}
}

// nodeSpecs are the pool's nodes as Kubernetes has them: a node registers
// when it is ACTIVE (its kubelet up) and stays while it is DELETING (OKE
// drains it, then terminates the instance).
func (p *pool) nodeSpecs() []kube.NodeSpec {
	var out []kube.NodeSpec
	for _, n := range p.nodes {
		if n.state == string(ce.NodeLifecycleStateCreating) || n.failed() {
			continue
		}
		out = append(out, kube.NodeSpec{Name: n.ip, Labels: p.nodeLabels(n), Ready: true, KubeletVersion: n.cfg.KubernetesVersion,
			ProviderID: n.id, InternalIP: n.ip})
	}
	return out
}

// nodeLabels are the labels OKE's node has: the pool's initial node
// labels when the node was created, then OKE's own (README.md, "Nodes in
// the cluster's Kubernetes API"), none of which names the pool.
func (p *pool) nodeLabels(n *node) map[string]string {
	l := map[string]string{}
	for k, v := range n.cfg.Labels {
		l[k] = v
	}
	region, zone := regionLabel(p.cluster.Region), shortAD(n.ad)
	for k, v := range map[string]string{
		"displayName": n.name, "hostname": n.name, "internal_addr": n.ip,
		"node.kubernetes.io/instance-type": n.cfg.Shape, "beta.kubernetes.io/instance-type": n.cfg.Shape,
		"topology.kubernetes.io/region": region, "failure-domain.beta.kubernetes.io/region": region,
		"topology.kubernetes.io/zone": zone, "failure-domain.beta.kubernetes.io/zone": zone,
		"oci.oraclecloud.com/fault-domain":             n.faultDomain,
		"oci.oraclecloud.com/node.info.managed":        "true",
		"oke.oraclecloud.com/node.info.private_subnet": "true",
		"oke.oraclecloud.com/node.info.private_worker": "true",
		"node-role.kubernetes.io/node":                 "",
		"node.info/compartment.id":                     ocidSuffix(p.cluster.CompartmentID),
		"node.info/kubeletVersion":                     minor(n.cfg.KubernetesVersion),
	} {
		l[k] = v
	}
	return l
}

// shortAD is an availability domain's name without its tenancy prefix
// ("Uocm:US-ASHBURN-AD-1" is US-ASHBURN-AD-1), as the zone label has it.
func shortAD(ad string) string {
	if _, after, ok := strings.Cut(ad, ":"); ok {
		return after
	}
	return ad
}

// regionKeys are OCI's three-letter region keys, which newer OKE nodes'
// region labels carry; another region's label is its identifier.
var regionKeys = map[string]string{"us-ashburn-1": "iad", "us-phoenix-1": "phx", "uk-london-1": "lhr", "eu-frankfurt-1": "fra",
	"ca-toronto-1": "yyz", "ap-tokyo-1": "nrt", "sa-saopaulo-1": "gru"}

func regionLabel(region string) string {
	if k, ok := regionKeys[region]; ok {
		return k
	}
	return region
}

// ocidSuffix is an OCID's unique part (after its last dot).
func ocidSuffix(id string) string { return id[strings.LastIndex(id, ".")+1:] }

// minor is "v1.31" of "v1.31.1".
func minor(v string) string {
	if i := strings.LastIndex(v, "."); strings.Count(v, ".") == 2 && i > 0 {
		return v[:i]
	}
	return v
}

// tokenWindow is how far a token's date may be from the clock: OCI's
// allowed client clock skew.
const tokenWindow = 5 * time.Minute
