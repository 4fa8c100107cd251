package civo

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// clusterView is a cluster as GET /v2/kubernetes/clusters/{id} returns it
// (civogo's KubernetesCluster; the members civogo's kubernetes_test.go
// TestGetKubernetesClusters and TestListKubernetesClusters record, and
// the pools the civo CLI's node-pool commands read). The emulator serves
// clusters read only: what a client needs to find a cluster and its pools.
type clusterView struct {
	ID                    string         `json:"id"`
	Name                  string         `json:"name"`
	Version               string         `json:"version"`
	Status                string         `json:"status"`
	Ready                 bool           `json:"ready"`
	ClusterType           string         `json:"cluster_type"`
	NumTargetNodes        int            `json:"num_target_nodes"`
	TargetNodesSize       string         `json:"target_nodes_size"`
	BuiltAt               time.Time      `json:"built_at"`
	KubeConfig            string         `json:"kubeconfig"`
	KubernetesVersion     string         `json:"kubernetes_version"`
	APIEndpoint           string         `json:"api_endpoint"`
	MasterIP              string         `json:"master_ip"`
	DNSEntry              string         `json:"dns_entry"`
	NetworkID             string         `json:"network_id"`
	Tags                  []string       `json:"tags"`
	CreatedAt             time.Time      `json:"created_at"`
	Instances             []Instance     `json:"instances"`
	Pools                 []Pool         `json:"pools"`
	RequiredPools         []requiredPool `json:"required_pools"`
	InstalledApplications []installedApp `json:"installed_applications"`
	FirewallID            string         `json:"firewall_id"`
	CNIPlugin             string         `json:"cni_plugin"`
	CCMInstalled          string         `json:"ccm_installed"`
	Conditions            []condition    `json:"conditions"`
	VolumeType            string         `json:"volume_type"`
}

// requiredPool is a pool as the cluster asks for it (civogo's
// RequiredPools): the civo CLI's node-pool ls and scale find pools here.
type requiredPool struct {
	ID               string            `json:"id"`
	Size             string            `json:"size"`
	Count            int               `json:"count"`
	Labels           map[string]string `json:"labels,omitempty"`
	Taints           []Taint           `json:"taints,omitempty"`
	PublicIPNodePool bool              `json:"public_ip_node_pool,omitempty"`
}

// view returns the cluster as Civo's GET returns it at now, from the
// emulator at base (https://host:port): kubeconfig is the cluster's
// emulated Kubernetes API's (kube.API.Kubeconfig), api_endpoint its
// server URL; master_ip and dns_entry are empty (no DNS: the server is
// the emulator's loopback address).
func (s *Server) view(c *cluster, now time.Time, base string) clusterView {
	v := clusterView{KubeConfig: s.kube.Kubeconfig(base, c.ID, c.Name), APIEndpoint: s.kube.ServerURL(base, c.ID), ID: c.ID, Name: c.Name, Version: c.Version, KubernetesVersion: c.Version, Status: "ACTIVE", Ready: true,
		ClusterType: "k3s", BuiltAt: c.created.UTC(), CreatedAt: c.created.UTC(), NetworkID: c.networkID(), FirewallID: c.ID,
		CNIPlugin: "flannel", CCMInstalled: "true", VolumeType: "civo-volume", Tags: []string{}, Instances: []Instance{},
		Pools: []Pool{}, RequiredPools: []requiredPool{}, InstalledApplications: []installedApp{}, Conditions: c.conditions(now)}
	for _, name := range c.apps {
		app := marketplace[name]
		app.UpdatedAt = c.created.UTC()
		v.InstalledApplications = append(v.InstalledApplications, app)
	}
	for _, p := range c.sortedPools() {
		pv := p.view(now)
		v.Pools = append(v.Pools, pv)
		v.RequiredPools = append(v.RequiredPools, requiredPool{ID: p.id, Size: p.size, Count: p.count, Labels: pv.Labels, Taints: pv.Taints, PublicIPNodePool: p.publicIP})
		v.NumTargetNodes += p.count
		if v.TargetNodesSize == "" {
			v.TargetNodesSize = p.size
		}
		for _, in := range pv.Instances {
			in.Region = strings.ToLower(c.Region) // as civogo's cluster fixtures have it: "lon1"
			v.Instances = append(v.Instances, in)
		}
	}
	return v
}

// sortedPools are the cluster's pools, oldest first.
func (c *cluster) sortedPools() []*pool {
	out := make([]*pool, 0, len(c.pools))
	for _, p := range c.pools {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *pool) int {
		if d := a.created.Compare(b.created); d != 0 {
			return d
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// getCluster answers GET /v2/kubernetes/clusters/{id}.
func (s *Server) getCluster(req *call) *sim.Reply {
	return jsonReply(s.view(req.cluster, req.Now, baseURL(req)))
}

// listClusters answers GET /v2/kubernetes/clusters: the region's
// clusters, a page at a time ({"page","per_page","pages","items"}, 20 a
// page unless per_page says otherwise, as civogo's
// TestListKubernetesClusters records).
func (s *Server) listClusters(req *call) *sim.Reply {
	var all []*cluster
	for _, c := range s.clusters {
		if c.Region == req.region {
			all = append(all, c)
		}
	}
	slices.SortFunc(all, func(a, b *cluster) int { return strings.Compare(a.Name+"/"+a.ID, b.Name+"/"+b.ID) })
	q := req.HTTP.URL.Query()
	pageNo, perPage := atLeast1(q.Get("page"), 1), min(atLeast1(q.Get("per_page"), 20), 100)
	pages := max(1, (len(all)+perPage-1)/perPage)
	out := struct {
		Page    int           `json:"page"`
		PerPage int           `json:"per_page"`
		Pages   int           `json:"pages"`
		Items   []clusterView `json:"items"`
	}{Page: pageNo, PerPage: perPage, Pages: pages, Items: []clusterView{}}
	for i := (pageNo - 1) * perPage; i < len(all) && i < pageNo*perPage; i++ {
		out.Items = append(out.Items, s.view(all[i], req.Now, baseURL(req)))
	}
	return jsonReply(out)
}

// atLeast1 reads a positive number; anything else is def.
func atLeast1(v string, def int) int {
	if n, err := strconv.Atoi(v); err == nil && n >= 1 {
		return n
	}
	return def
}
