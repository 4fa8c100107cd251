package civo

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// InstanceSize is a size as GET /v2/sizes lists it: civogo v0.7.0's
// InstanceSize, whose members its instance_size_test.go
// TestListInstanceSizes records (type, name, nice_name, cpu_cores,
// gpu_count, gpu_type, ram_mb, disk_gb, transfer_tb, description,
// selectable).
type InstanceSize struct {
	Type              string `json:"type"`
	Name              string `json:"name"`
	NiceName          string `json:"nice_name"`
	CPUCores          int    `json:"cpu_cores"`
	GPUCount          int    `json:"gpu_count"`
	GPUType           string `json:"gpu_type"`
	RAMMegabytes      int    `json:"ram_mb"`
	DiskGigabytes     int    `json:"disk_gb"`
	TransferTerabytes int    `json:"transfer_tb"`
	Description       string `json:"description"`
	Selectable        bool   `json:"selectable"`
}

// catalogue is the emulator's size list, the same in every region: Civo's
// Kubernetes node sizes, standard (g4s), CPU-optimized (g4c),
// memory-optimized (g4m) and performance (g4p), with the specs Civo
// publishes (Civo's docs, kubernetes/advanced/managing-node-pools and
// civo.com/pricing), and three instance sizes (civogo's fixture's
// g4s.xsmall and its siblings), which a Kubernetes pool cannot use. The
// Kubernetes sizes are those whose names hold ".kube.", as the civo CLI
// picks them (cmd/kubernetes/kubernetes_size.go).
var catalogue = func() []InstanceSize {
	type row struct {
		name, nice         string
		cpu, ramMB, diskGB int
		transferTB         int
	}
	var out []InstanceSize
	for _, r := range []row{
		{"g4s.kube.xsmall", "Extra Small - Standard", 1, 1024, 30, 1}, {"g4s.kube.small", "Small - Standard", 1, 2048, 40, 2},
		{"g4s.kube.medium", "Medium - Standard", 2, 4096, 50, 3}, {"g4s.kube.large", "Large - Standard", 4, 8192, 60, 4},
		{"g4s.kube.xlarge", "Extra Large - Standard", 6, 16384, 80, 5},
		{"g4c.kube.small", "Small - CPU optimized", 8, 16384, 60, 5}, {"g4c.kube.medium", "Medium - CPU optimized", 16, 32768, 80, 6},
		{"g4c.kube.large", "Large - CPU optimized", 32, 65536, 120, 7}, {"g4c.kube.xlarge", "Extra Large - CPU optimized", 64, 131072, 180, 8},
		{"g4m.kube.small", "Small - Memory optimized", 2, 16384, 60, 5}, {"g4m.kube.medium", "Medium - Memory optimized", 4, 32768, 80, 6},
		{"g4m.kube.large", "Large - Memory optimized", 8, 65536, 120, 7}, {"g4m.kube.xlarge", "Extra Large - Memory optimized", 16, 131072, 180, 8},
		{"g4p.kube.small", "Small - Performance", 4, 16384, 60, 5}, {"g4p.kube.medium", "Medium - Performance", 8, 32768, 80, 6},
		{"g4p.kube.large", "Large - Performance", 16, 65536, 120, 7}, {"g4p.kube.xlarge", "Extra Large - Performance", 32, 131072, 180, 8},
	} {
		out = append(out, InstanceSize{Type: "Kubernetes", Name: r.name, NiceName: r.nice, CPUCores: r.cpu, RAMMegabytes: r.ramMB,
			DiskGigabytes: r.diskGB, TransferTerabytes: r.transferTB, Description: r.nice, Selectable: true})
	}
	for _, r := range []row{{"g4s.xsmall", "xSmall - Standard", 1, 1024, 25, 1}, {"g4s.small", "Small - Standard", 1, 2048, 25, 2},
		{"g4s.medium", "Medium - Standard", 2, 4096, 50, 3}} {
		out = append(out, InstanceSize{Type: "Instance", Name: r.name, NiceName: r.nice, CPUCores: r.cpu, RAMMegabytes: r.ramMB,
			DiskGigabytes: r.diskGB, TransferTerabytes: r.transferTB, Description: r.nice, Selectable: true})
	}
	return out
}()

// size is what the emulator uses of a Kubernetes size: its nodes' specs,
// which count towards the account's quota.
type size struct{ cpu, ramMB, diskGB int }

// sizes are the catalogue's Kubernetes sizes by name: those a pool may
// use (checkSize).
var sizes = func() map[string]size {
	out := map[string]size{}
	for _, s := range catalogue {
		if strings.Contains(s.Name, ".kube.") {
			out[s.Name] = size{s.CPUCores, s.RAMMegabytes, s.DiskGigabytes}
		}
	}
	return out
}()

// Sizes returns the Kubernetes sizes the emulator accepts, sorted.
func Sizes() []string {
	out := make([]string, 0, len(sizes))
	for s := range sizes {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// listSizes answers GET /v2/sizes: the catalogue, in the call's region
// (a region Civo does not have is 404, as for every call).
func (s *Server) listSizes(req *sim.Request) *sim.Reply {
	if _, rep := s.region(req, ""); rep != nil {
		return rep
	}
	if s.sizesDenied {
		return failf(http.StatusForbidden, codeAccessDenied, "The API key may not read the sizes")
	}
	return jsonReply(catalogue)
}

// SetSizesDenied makes GET /v2/sizes answer 403 authentication_access_denied
// (civogo's errors.go code; the status and reason the emulator's): tests
// of a key that may manage pools but not read the size list.
func (s *Server) SetSizesDenied(denied bool) { s.Do(func(time.Time) { s.sizesDenied = denied }) }

// KubernetesVersion is a version as GET /v2/kubernetes/versions lists it
// (civogo v0.7.0's KubernetesVersion: label, version, type, default,
// clusterType; its kubernetes_test.go TestListAvailableKubernetesVersions
// records version, type and default).
type KubernetesVersion struct {
	Label       string `json:"label"`
	Version     string `json:"version"`
	Type        string `json:"type"`
	Default     bool   `json:"default,omitempty"`
	ClusterType string `json:"clusterType,omitempty"`
}

// versions are the k3s versions Civo offers new clusters: the current one
// (stable, the default) and older ones (legacy), as the fixture's types
// have them; the versions of the emulator's clusters are among them, a
// cluster of another version adds it as legacy.
var versions = []string{"1.30.5-k3s1", "1.29.8-k3s1", "1.28.7-k3s1", "1.26.4-k3s1"}

// listVersions answers GET /v2/kubernetes/versions.
func (s *Server) listVersions(req *sim.Request) *sim.Reply {
	if _, rep := s.region(req, ""); rep != nil {
		return rep
	}
	all := slices.Clone(versions)
	for _, c := range s.clusters {
		if c.Version != "" && !slices.Contains(all, c.Version) {
			all = append(all, c.Version)
		}
	}
	out := make([]KubernetesVersion, len(all))
	for i, v := range all {
		out[i] = KubernetesVersion{Label: "v" + v, Version: v, Type: "legacy", ClusterType: "k3s"}
	}
	out[0].Type, out[0].Default = "stable", true
	return jsonReply(out)
}
