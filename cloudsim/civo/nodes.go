package civo

import (
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The labels Civo's cloud controller manager and its k3s agents put on a
// pool's nodes besides PoolLabel and the kubelet's own (README.md: "nodes").
const (
	labelInstanceType     = "node.kubernetes.io/instance-type"
	labelInstanceTypeBeta = "beta.kubernetes.io/instance-type"
	labelRegion           = "topology.kubernetes.io/region"
)

// nodeSpecs are the pool's Kubernetes nodes at now, as Civo's k3s agents
// register them: a node per instance that is up or being built past its
// machine's start (NotReady until ACTIVE), none for an instance not
// started yet or whose build failed; a node being removed stays Ready
// until its instance is gone.
func (p *pool) nodeSpecs(now time.Time) []kube.NodeSpec {
	insts, st := p.statuses(now)
	registered := len(insts)
	if o := p.op; o != nil && grows(o) {
		registered = o.Nodes(now) // machines started, one every NodeTime
	}
	labels := p.nodeLabels()
	taints := make([]corev1.Taint, 0, len(p.taints))
	for _, t := range p.taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	version := kubeletVersion(p.cluster.Version)
	var out []kube.NodeSpec
	for i, in := range insts {
		switch {
		case st[i] == StatusBuilding && i >= registered:
			continue // its machine is not started yet
		case st[i] == StatusError && i < p.count:
			continue // its build failed: no kubelet registered
		}
		out = append(out, kube.NodeSpec{Name: in.hostname, Labels: maps.Clone(labels), Taints: taints,
			Ready: st[i] != StatusBuilding, KubeletVersion: version, ProviderID: "civo://" + in.id, InternalIP: in.privateIP})
	}
	return out
}

// nodeLabels are the labels of every node of the pool: the pool's own,
// Civo's pool label, the size as the instance type and the region.
func (p *pool) nodeLabels() map[string]string {
	labels := maps.Clone(p.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[PoolLabel] = p.id
	labels[labelInstanceType] = p.size
	labels[labelInstanceTypeBeta] = p.size
	labels[labelRegion] = strings.ToLower(p.cluster.Region)
	return labels
}

// kubeletVersion is the kubelet's version of a k3s release as Civo names
// it: 1.30.5-k3s1 is v1.30.5+k3s1.
func kubeletVersion(v string) string {
	v = "v" + strings.TrimPrefix(v, "v")
	if base, build, ok := strings.Cut(v, "-k3s"); ok {
		return base + "+k3s" + build
	}
	if strings.Contains(v, "+k3s") {
		return v
	}
	return v + "+k3s1"
}

// syncNodes makes the nodes of a cluster's API what its pools hold at
// now (kube.API.SyncNodes, a pool at a time; a pool gone takes its nodes
// with it). Civo applies a pool's label and taint changes to the nodes it
// has (kube.Propagate). Run under the engine's lock: the kube API has its
// own.
func (s *Server) syncNodes(c *cluster, now time.Time) {
	if c.synced == nil {
		c.synced = map[string]bool{}
	}
	for id := range c.synced {
		if _, ok := c.pools[id]; !ok {
			s.kube.SyncNodes(c.ID, PoolLabel, id, nil, kube.Propagate)
			delete(c.synced, id)
		}
	}
	for _, p := range c.sortedPools() {
		s.kube.SyncNodes(c.ID, PoolLabel, p.id, p.nodeSpecs(now), kube.Propagate)
		c.synced[p.id] = true
	}
}

// afterCall brings the nodes of the cluster a Civo call named up to the
// call's time (every cluster's, for a call that names none), under the
// engine's lock: what the call changed reaches them before it answers.
func (s *Server) afterCall(req *sim.Request, _ *sim.Reply) {
	rest, ok := strings.CutPrefix(req.HTTP.URL.Path, "/v2/kubernetes/clusters/")
	id, _, _ := strings.Cut(rest, "/")
	if c, found := s.clusters[id]; ok && found {
		s.syncNodes(c, req.Now)
		return
	}
	for _, c := range s.clusters {
		s.syncNodes(c, req.Now)
	}
}

// refresh runs before each request to a cluster's Kubernetes API: the
// engine's clock has moved on, so operations may have ended, pools healed
// and nodes come up since the last call.
func (s *Server) refresh(id string) {
	s.Do(func(now time.Time) {
		s.heal(now)
		if c, ok := s.clusters[id]; ok {
			s.syncNodes(c, now)
		}
	})
}

// Kubeconfigs returns, for the emulator served at endpoint, each
// cluster's name and the kubeconfig of its emulated Kubernetes API (the
// one the cluster GET returns), for kpool cloudsim to write to files.
func (s *Server) Kubeconfigs(endpoint string) map[string]string {
	out := map[string]string{}
	for _, c := range sortedClusters(s.views()) {
		out[c.Name] = s.kube.Kubeconfig(endpoint, c.ID, c.Name)
	}
	return out
}
