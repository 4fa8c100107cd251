// Package gke emulates the Google Kubernetes Engine v1 REST API of node
// pools (projects.locations.clusters.nodePools and
// projects.locations.operations) well enough for the unmodified official
// Go client (google.golang.org/api/container/v1) to create, read, list,
// resize, autoscale, update and delete node pools against it and follow
// their operations. GKE reports no node count on a node pool: the nodes
// are in one managed instance group per zone, which the emulator serves
// too (the Compute Engine v1 instanceGroupManagers.get of the groups a
// pool's instanceGroupUrls name).
//
// This package holds GKE's wire protocol only: routes, Google's error
// bodies, operations and GKE's rules, checked against the discovery
// document google.golang.org/api/container/v1 embeds (container-api.json)
// and GKE's documentation. Time, latency, rate limits, faults (5xx,
// dropped connections, operations that end in error), operations and the
// call log are the engine's (cloudsim/sim). What the emulator does not
// reproduce is listed in cloudsim/README.md.
package gke

import (
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/sim"
)

// Options configure a Server.
type Options struct {
	// Engine are the engine's options (sim.Options).
	Engine sim.Options
	// Token, when set, is the only bearer token accepted; otherwise any
	// non-empty one is (an OAuth2 access token is opaque to its user).
	Token string
	// Limits are the quotas and limits enforced; the zero value is GKE's
	// defaults (DefaultLimits).
	Limits Limits
}

// Server is the emulator: GKE's REST protocol on a sim.Engine, whose
// methods (ServeHTTP, Calls, SetFaultRate, SetRateLimit, SetLatency) it
// has. Serve it at the root of a TLS server (sim.TLSServer): the client's
// endpoint is the server's URL plus "/".
type Server struct {
	*sim.Engine
	token  string
	limits Limits
	// clusters and seq are guarded by the engine's lock (its handler, Do).
	clusters map[string]*cluster // key: project/location/name
	seq      int
	denied   map[string]bool // projects whose catalogue calls answer 403 (DenyCatalogue)
	ca       []byte          // the CA's PEM (SetCA), which clusters.get hands out
	// computeOps are Compute Engine's operations (deleteInstances), by
	// project/zone/name, and their keys oldest first.
	computeOps map[string]*compute.Operation
	opOrder    []string
	// kube is the clusters' Kubernetes API, under KubePrefix.
	kube *kube.API
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits()
	}
	s := &Server{token: o.Token, limits: o.Limits, clusters: map[string]*cluster{}, denied: map[string]bool{}, kube: kube.New(KubePrefix)}
	s.Engine = sim.New(o.Engine, s.protocol())
	s.kube.SetRefresh(s.refresh)
	return s
}

// AddCluster adds a running cluster in location (a region such as
// us-central1, or a zone such as us-central1-a for a zonal cluster) whose
// control plane runs version (1.30.5-gke.1014001). Its node pools default
// to locations (zones), or to the location's zones: the region's first
// three, or the zone of a zonal cluster. Adding one that exists changes its
// version.
func (s *Server) AddCluster(project, location, name, version string, locations ...string) {
	s.Do(func(time.Time) {
		key := clusterKey(project, location, name)
		if c, ok := s.clusters[key]; ok {
			c.version = version
			return
		}
		if len(locations) == 0 {
			if isZone(location) {
				locations = []string{location}
			} else {
				zs := regionZones(location)
				locations = zs[:min(3, len(zs))]
			}
		}
		c := &cluster{project: project, location: location, name: name, version: version,
			locations: append([]string(nil), locations...), pools: map[string]*pool{}, uid: clusterUID(key),
			capacity: s.Capacity()}
		s.clusters[key] = c
		s.kube.AddCluster(c.uid)
		s.kube.SetTokenCheck(c.uid, s.tokenOK)
	})
}

// AddPool adds a node pool that is already running with all its nodes,
// as GKE would have it after a create of np: the same defaults and checks
// apply.
func (s *Server) AddPool(project, location, clusterName string, np container.NodePool) (err error) {
	s.Do(func(now time.Time) {
		c, ok := s.clusters[clusterKey(project, location, clusterName)]
		if !ok {
			err = fmt.Errorf("gke: no cluster %s/%s/%s", project, location, clusterName)
			return
		}
		p, rep := s.newPool(c, &np)
		if rep != nil {
			err = fmt.Errorf("gke: %s", rep.Body)
			return
		}
		p.ready = p.claim(p.np)
		if len(p.short()) > 0 {
			p.outOfStock(opCreate, 0)
		}
		c.pools[p.np.Name] = p
		s.syncNodes(c, now)
	})
	return err
}

// PoolState is a node pool as GKE would return it, plus what only the
// emulator knows.
type PoolState struct {
	container.NodePool
	// PerZone is the node count each zone's instance group targets (its
	// size as setSize last set it); Nodes the nodes that exist now, over
	// all zones.
	PerZone, Nodes int
	// Groups are the target sizes of the pool's instance groups, by zone:
	// PerZone less the instances deleteInstances took from each.
	Groups map[string]int
	// Operation is the type of the operation in progress
	// (CREATE_NODE_POOL, ...); "" when idle.
	Operation string
}

// Pool returns a copy of a node pool as it is now; false if there is none.
func (s *Server) Pool(project, location, clusterName, name string) (st PoolState, found bool) {
	s.Do(func(now time.Time) {
		p, err := s.poolOf(project, location, clusterName, name)
		if err != nil {
			return
		}
		p.heal(now)
		s.syncNodes(p.cluster, now)
		st, found = PoolState{NodePool: *p.view(""), PerZone: p.perZone, Nodes: p.readyAt(now), Groups: map[string]int{}}, true
		for _, z := range p.np.Locations {
			st.Groups[z] = p.target(z)
		}
		if p.op != nil {
			st.Operation = infoOf(p.op).opType
		}
	})
	return st, found
}

// Mutate changes a node pool behind the client's back, as someone using
// the console or gcloud would: fn may change its configuration (the
// config's labels, its autoscaling...). The pool gets a new etag.
func (s *Server) Mutate(project, location, clusterName, name string, fn func(*container.NodePool)) (err error) {
	s.Do(func(now time.Time) {
		var p *pool
		if p, err = s.poolOf(project, location, clusterName, name); err == nil {
			fn(p.np)
			p.etag = s.NewID()
			s.syncNodes(p.cluster, now)
		}
	})
	return err
}

// poolOf finds a node pool for the emulator's own methods, under the
// engine's lock (Do).
func (s *Server) poolOf(project, location, clusterName, name string) (*pool, error) {
	c, ok := s.clusters[clusterKey(project, location, clusterName)]
	if !ok {
		return nil, fmt.Errorf("gke: no cluster %s/%s/%s", project, location, clusterName)
	}
	p, ok := c.pools[name]
	if !ok {
		return nil, fmt.Errorf("gke: no node pool %s in cluster %s", name, clusterName)
	}
	return p, nil
}

// heal brings the pools whose instance groups have caught up after a
// failed operation back to RUNNING (the protocol's Tick: before each
// request).
func (s *Server) heal(now time.Time) {
	for _, c := range s.clusters {
		for _, p := range c.pools {
			p.heal(now)
		}
		s.syncNodes(c, now)
	}
}

// authenticate checks the OAuth2 bearer token; nil means it is accepted.
func (s *Server) authenticate(req *sim.Request) *sim.Reply {
	h := req.HTTP.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	var rep *sim.Reply
	switch {
	case h == "":
		rep = detailed(codeUnauthenticated, []any{errorInfo("CREDENTIALS_MISSING")},
			"Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
	case !strings.EqualFold(scheme, "Bearer") || tok == "",
		s.token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1:
		rep = detailed(codeUnauthenticated, []any{errorInfo("ACCESS_TOKEN_TYPE_UNSUPPORTED")},
			"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
	default:
		return nil
	}
	rep.Header.Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
	return rep
}

// protocol is GKE's: the OAuth2 token, then the quota, the body, faults,
// and GKE's node-pool and operation paths, the cluster's GET,
// getServerConfig, and Compute Engine's instanceGroupManagers.get,
// aggregatedList and deleteInstances, zoneOperations.get, and machineTypes.list and get.
func (s *Server) protocol() sim.Protocol {
	rt := sim.NewRouter(notFound, methodNotFound)
	const (
		loc     = "/v1/projects/{project}/locations/{location}"
		cluster = loc + "/clusters/{cluster}"
		pool    = cluster + "/nodePools/{pool}"
	)
	for pattern, h := range map[string]sim.Handler{
		"GET /compute/v1/projects/{project}/zones/{zone}/instanceGroupManagers/{group}":                  s.getGroup,
		"GET /compute/v1/projects/{project}/aggregated/instanceGroupManagers":                            s.aggregatedGroups,
		"POST /compute/v1/projects/{project}/zones/{zone}/instanceGroupManagers/{group}/deleteInstances": s.deleteInstances,
		"GET /compute/v1/projects/{project}/zones/{zone}/operations/{operation}":                         s.getZoneOperation,
		"GET /compute/v1/projects/{project}/zones/{zone}/machineTypes":                                   s.listMachineTypes,
		"GET /compute/v1/projects/{project}/zones/{zone}/machineTypes/{machineType}":                     s.getMachineType,
		"GET " + loc + "/serverConfig":                                                                   s.getServerConfig,

		loc + "/operations":                      unimplemented("kpool cloudsim does not emulate operations.list."),
		"GET " + loc + "/operations/{operation}": s.getOperation,
		loc + "/operations/{operation}":          unimplemented("kpool cloudsim emulates operations.get only."),

		"GET " + cluster: s.getCluster,
		cluster:          unimplemented("kpool cloudsim does not emulate writing clusters."),
		cluster + "/{rest...}": func(req *sim.Request) *sim.Reply {
			return errorReply(codeUnimplemented, "kpool cloudsim does not emulate %s.", req.HTTP.URL.Path)
		},
		"GET " + cluster + "/nodePools":  s.listPools,
		"POST " + cluster + "/nodePools": s.createPool,

		"GET " + pool:    plain(s.getPool),
		"PUT " + pool:    plain(s.updatePool),
		"DELETE " + pool: plain(s.deletePool),
		"POST " + pool:   s.poolVerb, // nodePools/NP:setSize, ...
	} {
		rt.Handle(pattern, h)
	}
	return sim.Protocol{Tick: s.heal, Authenticate: s.authenticate, Codec: codec{}, Routes: rt.Serve}
}

// plain refuses a custom method (nodePools/NP:verb) to a route of the
// resource itself, as Google's front end has no such method.
func plain(h sim.Handler) sim.Handler {
	return func(req *sim.Request) *sim.Reply {
		if strings.Contains(req.HTTP.PathValue("pool"), ":") {
			return methodNotFound(req)
		}
		return h(req)
	}
}

func unimplemented(msg string) sim.Handler {
	return func(*sim.Request) *sim.Reply { return errorReply(codeUnimplemented, "%s", msg) }
}

// methodNotFound is Google's answer to a verb a path does not take.
func methodNotFound(req *sim.Request) *sim.Reply {
	return errorReply(codeNotFound, "Method not found: %s %s.", req.HTTP.Method, req.HTTP.URL.Path)
}

func notFound(req *sim.Request) *sim.Reply {
	return errorReply(codeNotFound, "The requested URL %s was not found on this server (kpool cloudsim GKE emulator).", req.HTTP.URL.Path)
}

func clusterKey(project, location, name string) string { return project + "/" + location + "/" + name }
