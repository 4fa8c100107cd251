package civo

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/internal/demo"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The demo cluster Demo holds.
const (
	DemoClusterID   = "5b0c8a2e-6d1f-4c3a-9e7b-2f4d6a8c0e13"
	DemoClusterName = "demo-civo"
	DemoRegion      = "LON1"
	DemoVersion     = "1.30.5-k3s1"
)

// Its pool, of one node of DemoSize.
const (
	DemoPool = "default"
	DemoSize = "g4s.kube.medium"
)

// DemoAPIKey is the API key Demo's emulator accepts: a demo-only
// constant of kpool's source, no secret, that opens this emulator and
// nothing else (no Civo account has it).
const DemoAPIKey = "kpool-cloudsim-civo-demo-api-key"

// Demo returns an emulator on an engine with options o that holds the
// demo cluster and its pool "default" of one g4s.kube.medium node (already
// up), accepting the demo API key, with DemoQuota and NYC1 as the
// account's default region.
func Demo(o sim.Options) (*Server, error) {
	s := New(Options{Engine: o, Keys: []string{DemoAPIKey}, Quota: DemoQuota})
	s.AddCluster(Cluster{ID: DemoClusterID, Name: DemoClusterName, Region: DemoRegion, Version: DemoVersion})
	s.Do(func(now time.Time) {
		c := s.clusters[DemoClusterID]
		p := &pool{cluster: c, id: DemoPool, size: DemoSize, count: 1, created: now,
			labels: map[string]string{}}
		s.grow(p, p.count, now)
		p.insts[0].status = StatusActive
		c.pools[p.id] = p
		s.syncNodes(c, now)
	})
	return s, nil
}

// views are the clusters for Clusters and Describe, with their pools' ids,
// by name and id.
func (s *Server) views() map[Cluster][]string {
	out := map[Cluster][]string{}
	s.Do(func(time.Time) {
		for _, c := range s.clusters {
			out[c.Cluster] = slices.Sorted(maps.Keys(c.pools))
		}
	})
	return out
}

// sortedClusters are the clusters of views, by name and id.
func sortedClusters(views map[Cluster][]string) []Cluster {
	return slices.SortedFunc(maps.Keys(views), func(a, b Cluster) int { return strings.Compare(a.Name+"/"+a.ID, b.Name+"/"+b.ID) })
}

// Identity returns Civo and the demo API key, which Demo's emulator takes.
func (s *Server) Identity() (kpool.PlatformType, any) { return kpool.PlatformCivo, DemoAPIKey }

// Clusters returns the emulator's clusters as kpool registers them when the
// emulator is served at endpoint (only Name and Spec set).
func (s *Server) Clusters(endpoint string) []kpool.Cluster {
	var out []kpool.Cluster
	for _, c := range sortedClusters(s.views()) {
		civo := &kpool.CivoCluster{Region: c.Region, ClusterID: c.ID}
		out = append(out, demo.Cluster(c.Name, endpoint, kpool.ClusterPlatform{Type: kpool.PlatformCivo, Civo: civo}))
	}
	return out
}

// Describe writes, for people, how to reach the emulator's clusters when
// it is served at endpoint: the API key, the region rule, the quota, each
// cluster's id, region and pools, and how to point curl and the civo CLI
// at it.
func (s *Server) Describe(w io.Writer, endpoint string) {
	key := "<any non-empty API key>"
	if len(s.keys) > 0 {
		key = DemoAPIKey
		if !slices.Contains(s.keys, DemoAPIKey) {
			key = fmt.Sprintf("<one of its %d API keys>", len(s.keys))
		}
	}
	fmt.Fprintf(w, "  auth:      Authorization: bearer %s\n", key)
	if key == DemoAPIKey {
		fmt.Fprintf(w, "             (the demo API key: a constant of kpool's source that opens this emulator only; CIVO_TOKEN for kpool's driver)\n")
	}
	fmt.Fprintf(w, "  api:       Civo v2: %s/v2/kubernetes/clusters/{id}/pools[/{pool}], /v2/kubernetes/clusters[/{id}] (PUT: applications only), /v2/regions, /v2/quota\n", endpoint)
	fmt.Fprintf(w, "  autoscaler: the cluster PUT {\"applications\":\"%s\"} installs Civo's cluster autoscaler; its --nodes=MIN:MAX:<pool> flags are in kube-system/cluster-autoscaler\n", AutoscalerApp)
	fmt.Fprintf(w, "  region:    ?region=<code> on every call, as civogo sends it; a call without one is served in %s, the account's default\n", s.defaultRegion)
	if q := s.quota; q != (Quota{}) {
		fmt.Fprintf(w, "  quota:     %d nodes, %d CPU cores, %d MB RAM, %d GB disk for the account (0: no limit); beyond it quota_limit_reached\n",
			q.Instances, q.CPUCores, q.RAMMB, q.DiskGB)
	}
	fmt.Fprintf(w, "  capacity:  per size, no zones: kpool cloudsim capacity %s --machine-type %s --available N (-1 lifts it); beyond it out_of_capacity (none can start) or nodes in ERROR (some can)\n",
		endpoint, DemoSize)
	views := s.views()
	var first *Cluster
	for _, c := range sortedClusters(views) {
		if first == nil {
			first = &c
		}
		fmt.Fprintf(w, "  Civo cluster %s (id %s, region %s, Kubernetes %s, pools: %s):\n", c.Name, c.ID, c.Region, c.Version, demo.List(views[c]))
		fmt.Fprintf(w, "    pools:          %s/v2/kubernetes/clusters/%s/pools?region=%s\n", endpoint, c.ID, c.Region)
		fmt.Fprintf(w, "    curl:           curl --cacert <CA file> -H 'Authorization: bearer %s' '%s/v2/kubernetes/clusters/%s/pools?region=%s'\n", key, endpoint, c.ID, c.Region)
		fmt.Fprintf(w, "    kubernetes:     %s (its pools' nodes, labelled %s=<pool id>, following their pools; pods, PDBs and eviction; the autoscaler's Deployment; its kubeconfig is the cluster GET's \"kubeconfig\")\n", s.kube.ServerURL(endpoint, c.ID), PoolLabel)
	}
	if first != nil {
		describeCLI(w, endpoint, key, *first)
	}
}

// describeCLI says how to point the civo CLI at the emulator: the CLI has
// no flag for the API's URL; it reads it from its config file's meta.url
// (civo/cli config/config.go), which CIVO_CONFIG names, and takes a key
// from "civo apikey add" (an alias of save) or CIVO_TOKEN.
func describeCLI(w io.Writer, endpoint, key string, c Cluster) {
	fmt.Fprintf(w, "  civo CLI:  no --url flag: write a config file whose meta.url is the endpoint, and trust the CA file (Linux):\n")
	fmt.Fprintf(w, "    echo '{\"apikeys\":{},\"meta\":{\"url\":\"%s\",\"default_region\":\"%s\"}}' > civo-cloudsim.json\n", endpoint, c.Region)
	fmt.Fprintf(w, "    export CIVO_CONFIG=$PWD/civo-cloudsim.json SSL_CERT_FILE=<CA file>\n")
	fmt.Fprintf(w, "    civo apikey add kpool-demo %s && civo apikey use kpool-demo\n", key)
	fmt.Fprintf(w, "    civo kubernetes node-pool ls %s; civo kubernetes node-pool create %s -n 2 -s g4s.kube.small\n", c.Name, c.Name)
	fmt.Fprintf(w, "    (node-pool delete sends the cluster PUT with pools, which the emulator refuses; the CLI also asks GitHub for its latest release)\n")
}
