package gke

import (
	"fmt"
	"slices"
	"time"

	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// machineType is a Compute Engine machine type of the emulator's
// catalogue: its figures as https://cloud.google.com/compute/docs/machine-resource
// lists them (memory in MiB, as Compute's memoryMb), the GPUs an
// accelerator-optimized type comes with, and the zones of the catalogue's
// regions it is missing from.
type machineType struct {
	name     string
	cpus     int64
	memoryMb int64
	shared   bool   // a shared-core type (isSharedCpu)
	gpu      string // the accelerator type it comes with; "" none
	gpus     int64
	// missing are the zones of the catalogue's regions that do not offer
	// it: G2 (NVIDIA L4) is offered in us-central1-a, b and c, not f
	// (https://cloud.google.com/compute/docs/gpus/gpu-regions-zones).
	missing []string
}

// catalogue is what the emulator's regions offer: the machine types
// kpool's tests, demos and examples use, in every zone of catalogueRegions
// but those a type is missing from. Other regions have no catalogue: their
// machineTypes.list is empty and any well-formed machine type is taken.
var catalogue = []machineType{
	{name: "e2-micro", cpus: 2, memoryMb: 1024, shared: true},
	{name: "e2-small", cpus: 2, memoryMb: 2048, shared: true},
	{name: "e2-medium", cpus: 2, memoryMb: 4096, shared: true},
	{name: "e2-standard-2", cpus: 2, memoryMb: 8192},
	{name: "e2-standard-4", cpus: 4, memoryMb: 16384},
	{name: "e2-standard-8", cpus: 8, memoryMb: 32768},
	{name: "f1-micro", cpus: 1, memoryMb: 614, shared: true},
	{name: "g1-small", cpus: 1, memoryMb: 1740, shared: true},
	{name: "n1-standard-1", cpus: 1, memoryMb: 3840},
	{name: "n1-standard-4", cpus: 4, memoryMb: 15360},
	{name: "n1-standard-8", cpus: 8, memoryMb: 30720},
	{name: "n2-standard-4", cpus: 4, memoryMb: 16384},
	{name: "n2-standard-8", cpus: 8, memoryMb: 32768},
	{name: "a2-highgpu-1g", cpus: 12, memoryMb: 87040, gpu: "nvidia-tesla-a100", gpus: 1},
	{name: "g2-standard-8", cpus: 8, memoryMb: 32768, gpu: "nvidia-l4", gpus: 1, missing: []string{"us-central1-f"}},
	{name: "g2-standard-16", cpus: 16, memoryMb: 65536, gpu: "nvidia-l4", gpus: 1, missing: []string{"us-central1-f"}},
}

// catalogueRegions are the regions whose zones have the catalogue: the
// demo cluster's (us-central1) and every region kpool's tests name.
var catalogueRegions = []string{"us-central1", "europe-west1", "us-east1"}

// nodeVersions are the GKE versions getServerConfig offers node pools, as
// well as every control plane's version of the location (the emulator's
// data: GKE's real list changes every week).
var nodeVersions = []string{"1.31.2-gke.1115000", "1.30.5-gke.1014001", "1.29.9-gke.1177000", "1.28.14-gke.1175000", "1.27.16-gke.1287000"}

// offers reports whether a zone has a machine type; a zone outside the
// catalogue's regions takes any.
func offers(zone, name string) bool {
	if !slices.Contains(catalogueRegions, region(zone)) {
		return true
	}
	i := slices.IndexFunc(catalogue, func(m machineType) bool { return m.name == name })
	return i >= 0 && !slices.Contains(catalogue[i].missing, zone)
}

// checkOffered refuses a machine type one of a pool's zones does not offer,
// as GKE does: 400 INVALID_ARGUMENT `Invalid machine type "e2-standard-4"
// in zone "us-central2-b": GCE_NOT_FOUND` (GKE's answer recorded in
// keras-team/kinetic#305), with no BadRequest detail.
func checkOffered(machineType string, zones []string) *sim.Reply {
	for _, z := range zones {
		if !offers(z, machineType) {
			return errorReply(codeInvalidArgument, "Invalid machine type %q in zone %q: GCE_NOT_FOUND", machineType, z)
		}
	}
	return nil
}

// view is a machine type as Compute Engine's v1 API returns it in zone.
func (m machineType) view(base, project, zone string) *compute.MachineType {
	out := &compute.MachineType{Kind: "compute#machineType", Name: m.name, GuestCpus: m.cpus, MemoryMb: m.memoryMb,
		IsSharedCpu: m.shared, Zone: zone, Architecture: "X86_64", MaximumPersistentDisks: 128, MaximumPersistentDisksSizeGb: 263168,
		Description: fmt.Sprintf("%d vCPUs, %d MB RAM", m.cpus, m.memoryMb), Id: machineTypeID(m.name),
		SelfLink: base + "/compute/v1/projects/" + project + "/zones/" + zone + "/machineTypes/" + m.name}
	if m.gpus > 0 {
		out.Accelerators = []*compute.MachineTypeAccelerators{{GuestAcceleratorType: m.gpu, GuestAcceleratorCount: m.gpus}}
	}
	return out
}

// machineTypeID is a fixed numeric id of a name (Compute's ids are
// opaque numbers).
func machineTypeID(name string) uint64 {
	id := uint64(1e15)
	for _, r := range name {
		id = id*31 + uint64(r)
	}
	return id % 1e18
}

// zoneTypes are the machine types a zone offers, as Compute returns them;
// false for a zone that is not one.
func zoneTypes(base, project, zone string) ([]*compute.MachineType, bool) {
	if !slices.Contains(regionZones(region(zone)), zone) {
		return nil, false
	}
	out := []*compute.MachineType{}
	if !slices.Contains(catalogueRegions, region(zone)) {
		return out, true
	}
	for _, m := range catalogue {
		if !slices.Contains(m.missing, zone) {
			out = append(out, m.view(base, project, zone))
		}
	}
	return out, true
}

// catalogueDenied answers a project whose callers may not read the
// catalogue (Server.DenyCatalogue): Compute's 403 for a missing permission.
func (s *Server) catalogueDenied(project, permission string) *sim.Reply {
	if !s.denied[project] {
		return nil
	}
	return errorReply(codePermissionDenied, "Required '%s' permission for 'projects/%s'", permission, project)
}

// listMachineTypes answers Compute Engine's machineTypes.list of a zone,
// in one page.
func (s *Server) listMachineTypes(req *sim.Request) *sim.Reply {
	project, zone := req.HTTP.PathValue("project"), req.HTTP.PathValue("zone")
	if rep := s.catalogueDenied(project, "compute.machineTypes.list"); rep != nil {
		return rep
	}
	items, ok := zoneTypes(req.BaseURL(), project, zone)
	if !ok {
		return errorReply(codeNotFound, "The resource 'projects/%s/zones/%s' was not found", project, zone)
	}
	path := "projects/" + project + "/zones/" + zone + "/machineTypes"
	return jsonReply(200, compute.MachineTypeList{Kind: "compute#machineTypeList", Id: path, Items: items, SelfLink: req.BaseURL() + "/compute/v1/" + path})
}

// getMachineType answers Compute Engine's machineTypes.get.
func (s *Server) getMachineType(req *sim.Request) *sim.Reply {
	project, zone, name := req.HTTP.PathValue("project"), req.HTTP.PathValue("zone"), req.HTTP.PathValue("machineType")
	if rep := s.catalogueDenied(project, "compute.machineTypes.get"); rep != nil {
		return rep
	}
	items, _ := zoneTypes(req.BaseURL(), project, zone)
	for _, m := range items {
		if m.Name == name {
			return jsonReply(200, m)
		}
	}
	return errorReply(codeNotFound, "The resource 'projects/%s/zones/%s/machineTypes/%s' was not found", project, zone, name)
}

// getServerConfig answers GKE's projects.locations.getServerConfig: the
// versions a location offers control planes and node pools.
func (s *Server) getServerConfig(req *sim.Request) *sim.Reply {
	project, location := req.HTTP.PathValue("project"), req.HTTP.PathValue("location")
	if rep := s.catalogueDenied(project, "container.clusters.list"); rep != nil {
		return rep
	}
	if !regionRE.MatchString(location) && !isZone(location) {
		return errorReply(codeInvalidArgument, "Location %q is not a valid region or zone.", location)
	}
	versions := slices.Clone(nodeVersions)
	for _, c := range s.clusters {
		if c.project == project && c.location == location && !slices.Contains(versions, c.version) {
			versions = append(versions, c.version)
		}
	}
	slices.SortFunc(versions, func(a, b string) int { return compareVersions(b, a) })
	return jsonReply(200, container.ServerConfig{DefaultClusterVersion: versions[0], ValidMasterVersions: versions, ValidNodeVersions: versions,
		DefaultImageType: "COS_CONTAINERD", ValidImageTypes: []string{"COS_CONTAINERD", "UBUNTU_CONTAINERD", "WINDOWS_LTSC_CONTAINERD"}})
}

// DenyCatalogue makes the project's catalogue calls (machineTypes.list
// and get, getServerConfig) answer 403, as for a credential without
// those permissions.
func (s *Server) DenyCatalogue(project string) {
	s.Do(func(_ time.Time) { s.denied[project] = true })
}
