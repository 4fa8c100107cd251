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

// DemoAPIKey is the API key Demo's emulator accepts. It is no secret: it
// opens the emulator only.
const DemoAPIKey = "kpool-cloudsim-civo-demo-api-key"

// Demo returns an emulator on an engine with options o that holds the
// demo cluster and its pool "default" of one g4s.kube.medium node (already
// up), accepting the demo API key.
func Demo(o sim.Options) (*Server, error) {
	s := New(Options{Engine: o, Keys: []string{DemoAPIKey}})
	s.AddCluster(Cluster{ID: DemoClusterID, Name: DemoClusterName, Region: DemoRegion, Version: DemoVersion})
	s.Do(func(now time.Time) {
		c := s.clusters[DemoClusterID]
		p := &pool{cluster: c, id: DemoPool, size: DemoSize, count: 1, created: now,
			labels: map[string]string{}}
		in := s.newInstance(p, now)
		in.status = StatusActive
		p.insts = []*instance{in}
		c.pools[p.id] = p
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
// it is served at endpoint.
func (s *Server) Describe(w io.Writer, endpoint string) {
	auth := "Authorization: bearer <any non-empty API key>"
	if len(s.keys) > 0 {
		auth = "Authorization: bearer " + DemoAPIKey
		if !slices.Contains(s.keys, DemoAPIKey) {
			auth = fmt.Sprintf("Authorization: bearer <one of its %d API keys>", len(s.keys))
		}
	}
	fmt.Fprintf(w, "  auth:      %s (CIVO_TOKEN for kpool's driver)\n  api:       Civo v2 Kubernetes pools (%s/v2/kubernetes/clusters/{id}/pools)\n", auth, endpoint)
	views := s.views()
	for _, c := range sortedClusters(views) {
		fmt.Fprintf(w, "  Civo cluster %s (id %s, region %s, Kubernetes %s, pools: %s):\n", c.Name, c.ID, c.Region, c.Version, demo.List(views[c]))
		fmt.Fprintf(w, "    pools:          %s/v2/kubernetes/clusters/%s/pools?region=%s\n", endpoint, c.ID, c.Region)
	}
}
