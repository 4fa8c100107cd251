package civo

import (
	"net/http"
	"slices"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Region is a region as GET /v2/regions lists it (civogo's Region and
// Feature; the shape of civogo's region_test.go TestListRegions).
type Region struct {
	Code          string   `json:"code"`
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	OutOfCapacity bool     `json:"out_of_capacity"`
	Country       string   `json:"country"`
	CountryName   string   `json:"country_name"`
	Features      Features `json:"features"`
	Default       bool     `json:"default"`
}

// Features are what a region offers.
type Features struct {
	IaaS              bool `json:"iaas"`
	Kubernetes        bool `json:"kubernetes"`
	ObjectStore       bool `json:"object_store"`
	LoadBalancer      bool `json:"loadbalancer"`
	GPU               bool `json:"gpu"`
	DBaaS             bool `json:"dbaas"`
	Volume            bool `json:"volume"`
	PaaS              bool `json:"paas"`
	PublicIPNodePools bool `json:"public_ip_node_pools"`
}

// civoRegions are Civo's public regions (Civo's docs, overview/regions:
// LON1, FRA1, NYC1, PHX1 and MUM1 all offer CPU Kubernetes; only LON1
// GPUs).
var civoRegions = []Region{
	{Code: "LON1", Name: "London 1", Country: "uk", CountryName: "United Kingdom"},
	{Code: "FRA1", Name: "Frankfurt 1", Country: "de", CountryName: "Germany"},
	{Code: "NYC1", Name: "New York 1", Country: "us", CountryName: "United States"},
	{Code: "PHX1", Name: "Phoenix 1", Country: "us", CountryName: "United States"},
	{Code: "MUM1", Name: "Mumbai 1", Country: "in", CountryName: "India"},
}

// regions lists Civo's regions and those of the emulator's clusters that
// Civo does not have, by code, the account's default marked.
func (s *Server) regions() []Region {
	out := slices.Clone(civoRegions)
	for _, c := range s.clusters {
		if !slices.ContainsFunc(out, func(r Region) bool { return r.Code == c.Region }) {
			out = append(out, Region{Code: c.Region, Name: c.Region, Country: "zz", CountryName: "kpool cloudsim"})
		}
	}
	for i := range out {
		out[i].Type = "civostack"
		out[i].Features = Features{IaaS: true, Kubernetes: true, ObjectStore: true, LoadBalancer: true, DBaaS: true, Volume: true,
			PublicIPNodePools: true, GPU: out[i].Code == "LON1"}
		out[i].Default = out[i].Code == s.defaultRegion
	}
	slices.SortFunc(out, func(a, b Region) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// region is the region a call is served in: the query's region (civogo
// adds it to every GET, POST, PUT, PATCH and DELETE: client.go
// sendRequest, since v0.3.x), else the body's (civogo's
// CreateKubernetesClusterPool, the CLI's and the Terraform provider's
// pool calls put it there; civogo#62 fixed instance actions by sending it
// in the body alone), else the account's default region (a call with no
// region looks for the resource there: civogo#61, civo/cli#136, #137).
// Regions compare without case. A region Civo does not know is 404
// database_region_not_found (recorded in civo/cli#329).
func (s *Server) region(req *sim.Request, inBody string) (string, *sim.Reply) {
	r := req.HTTP.URL.Query().Get("region")
	if r == "" {
		r = inBody
	}
	if r == "" {
		r = s.defaultRegion
	}
	r = strings.ToUpper(r)
	if !slices.ContainsFunc(s.regions(), func(x Region) bool { return x.Code == r }) {
		return "", failf(http.StatusNotFound, codeRegionNotFound, reasonRegionNotFound)
	}
	return r, nil
}

// listRegions answers GET /v2/regions.
func (s *Server) listRegions(*sim.Request) *sim.Reply { return jsonReply(s.regions()) }
