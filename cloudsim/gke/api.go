package gke

import (
	"encoding/base64"
	"slices"
	"strings"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// lookup finds the cluster of the path, answering GKE's 404 when it is
// missing.
func (s *Server) lookup(req *sim.Request) (*cluster, *sim.Reply) {
	project, location, name := req.HTTP.PathValue("project"), req.HTTP.PathValue("location"), req.HTTP.PathValue("cluster")
	if c, ok := s.clusters[clusterKey(project, location, name)]; ok {
		return c, nil
	}
	return nil, errorReply(codeNotFound, "Not found: projects/%s/locations/%s/clusters/%s.", project, location, name)
}

// find finds the node pool of the path (nodePools/NP, or NP:verb),
// answering GKE's 404s.
func (s *Server) find(req *sim.Request) (*pool, *sim.Reply) {
	c, rep := s.lookup(req)
	if rep != nil {
		return nil, rep
	}
	name, _, _ := strings.Cut(req.HTTP.PathValue("pool"), ":")
	p, ok := c.pools[name]
	if !ok {
		return nil, errorReply(codeNotFound, "Not found: %s/nodePools/%s.", c.path(), name)
	}
	return p, nil
}

func (s *Server) getCluster(req *sim.Request) *sim.Reply {
	c, rep := s.lookup(req)
	if rep != nil {
		return rep
	}
	out := &container.Cluster{
		Name: c.name, Location: c.location, Zone: c.location, Locations: c.locations, Status: statusRunning,
		CurrentMasterVersion: c.version, InitialClusterVersion: c.version, SelfLink: req.BaseURL() + "/v1/" + c.path(),
	}
	out.NodePools = c.views(req.BaseURL())
	// The cluster's Kubernetes API: GKE's endpoint is the control plane's
	// IP address, the emulator's its own host:port and the API's path
	// (README.md, "Kubernetes API").
	out.Id, out.Endpoint = c.uid, req.HTTP.Host+KubePrefix+"/"+c.uid
	if c.kubeEndpoint != "" {
		out.Endpoint = c.kubeEndpoint
	}
	out.MasterAuth = &container.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString(s.ca)}
	return jsonReply(200, out)
}

func (s *Server) listPools(req *sim.Request) *sim.Reply {
	c, rep := s.lookup(req)
	if rep != nil {
		return rep
	}
	return jsonReply(200, container.ListNodePoolsResponse{NodePools: append([]*container.NodePool{}, c.views(req.BaseURL())...)})
}

// views are the cluster's node pools as GKE returns them, in the order
// they were created; base is the URL the request came to.
func (c *cluster) views(base string) []*container.NodePool {
	var out []*container.NodePool
	for _, p := range c.sorted() {
		out = append(out, p.view(base))
	}
	return out
}

func (s *Server) getPool(req *sim.Request) *sim.Reply {
	p, rep := s.find(req)
	if rep != nil {
		return rep
	}
	return jsonReply(200, p.view(req.BaseURL()))
}

// newPool checks a node pool of a create and fills in GKE's defaults.
func (s *Server) newPool(c *cluster, in *container.NodePool) (*pool, *sim.Reply) {
	np := sim.CloneJSON(in)
	// Output-only fields in a request are ignored.
	np.Status, np.StatusMessage, np.Conditions, np.Etag, np.SelfLink, np.InstanceGroupUrls = "", "", nil, "", "", nil
	np.PodIpv4CidrSize, np.UpdateInfo = 0, nil
	if !poolName.MatchString(np.Name) {
		return nil, invalid("nodePool.name", "Node pool name %q is invalid: 1-40 lowercase letters, digits or '-', starting with a letter and not ending with '-'.", np.Name)
	}
	if _, exists := c.pools[np.Name]; exists {
		return nil, errorReply(codeAlreadyExists, "Already exists: %s/nodePools/%s.", c.path(), np.Name)
	}
	if np.InitialNodeCount < 0 || np.InitialNodeCount > maxPerZone {
		return nil, invalid("nodePool.initialNodeCount", "initial_node_count must be between 0 and %d per zone, got %d.", maxPerZone, np.InitialNodeCount)
	}
	if len(np.Locations) == 0 {
		np.Locations = slices.Clone(c.locations)
	}
	if rep := checkLocations(c, "nodePool.locations", np.Locations); rep != nil {
		return nil, rep
	}
	v, rep := resolveVersion(c, "nodePool.version", np.Version)
	if rep != nil {
		return nil, rep
	}
	np.Version = v
	if np.Config == nil {
		np.Config = &container.NodeConfig{}
	}
	cfg := np.Config
	if cfg.MachineType == "" {
		cfg.MachineType = "e2-medium"
	}
	if cfg.DiskSizeGb == 0 {
		cfg.DiskSizeGb = 100
	}
	if cfg.DiskType == "" {
		cfg.DiskType = "pd-standard"
	}
	if cfg.ImageType == "" {
		cfg.ImageType = "COS_CONTAINERD"
	}
	if rep := checkConfig("nodePool.config", cfg, v); rep != nil {
		return nil, rep
	}
	if rep := checkOffered(cfg.MachineType, np.Locations); rep != nil {
		return nil, rep
	}
	if rep := checkLabelSize("nodePool.config.labels", cfg.Labels); rep != nil {
		return nil, rep
	}
	addGPUTaint(c, cfg)
	if rep := checkAutoscaling("nodePool.autoscaling", np.Autoscaling); rep != nil {
		return nil, rep
	}
	if np.Management == nil {
		np.Management = &container.NodeManagement{AutoRepair: true, AutoUpgrade: true}
	}
	if np.UpgradeSettings, rep = upgradeOf("nodePool.upgradeSettings", np.UpgradeSettings); rep != nil {
		return nil, rep
	}
	s.seq++
	return &pool{cluster: c, np: np, perZone: int(np.InitialNodeCount), status: statusRunning, etag: s.NewID(), seq: s.seq}, nil
}

func (s *Server) createPool(req *sim.Request) *sim.Reply {
	c, rep := s.lookup(req)
	if rep != nil {
		return rep
	}
	var body container.CreateNodePoolRequest
	if rep := decode(req, &body); rep != nil {
		return rep
	}
	if body.NodePool == nil {
		return invalid("nodePool", "node_pool is required.")
	}
	p, rep := s.newPool(c, body.NodePool)
	if rep != nil {
		return rep
	}
	if rep := clusterBusy(c, nil, true, false); rep != nil {
		return rep
	}
	if rep := s.checkQuota(c, nil, p.perZone, p.np.Locations, p.np.Config.MachineType); rep != nil {
		return rep
	}
	c.pools[p.np.Name] = p
	o := s.start(req, p, opCreate, p.claim(p.np), 0, nil)
	rep = jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
	rep.Created, rep.Resource = true, req.HTTP.URL.Path+"/"+p.np.Name
	return rep
}

func (s *Server) deletePool(req *sim.Request) *sim.Reply {
	p, rep := s.find(req)
	if rep != nil {
		return rep
	}
	if rep := clusterBusy(p.cluster, p, true, true); rep != nil {
		return rep
	}
	o := s.start(req, p, opDelete, 0, 0, nil)
	return jsonReply(200, s.operation(req.BaseURL(), o, req.Now))
}
