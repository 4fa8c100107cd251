// Package civo emulates Civo's v2 Kubernetes pools API (the API civogo's
// ListKubernetesClusterPools, GetKubernetesClusterPool,
// CreateKubernetesClusterPool, UpdateKubernetesClusterPool and
// DeleteKubernetesClusterPool call) well enough for kpool's Civo driver to
// create, list, scale, relabel and delete pools against it:
//
//	GET    /v2/kubernetes/clusters/{cluster}/pools?region=R         a JSON array of pools
//	POST   /v2/kubernetes/clusters/{cluster}/pools                  {"id","count","size","labels","taints","public_ip_node_pool","region"}
//	GET    /v2/kubernetes/clusters/{cluster}/pools/{pool}?region=R  the pool
//	PUT    /v2/kubernetes/clusters/{cluster}/pools/{pool}           {"count","labels","taints","region"}
//	DELETE /v2/kubernetes/clusters/{cluster}/pools/{pool}?region=R  {"result":"success"}
//
// This package holds the Civo wire protocol only: routes, the bearer API
// key, the region parameter, Civo's error body ({"code","reason"}), pool
// and instance shapes and Civo's rules. Time, latency, rate limits, faults,
// operations and the call log are the engine's (cloudsim/sim): tests drive
// it with a sim.ManualClock and never sleep.
//
// Not reproduced: Civo's other APIs (clusters, instances, firewalls,
// applications, the v1 cluster PUT that also resizes pools); per-instance
// DELETE; the pool's nodes as Kubernetes nodes; quotas and capacity; error
// codes Civo does not document (the pool-not-found, duplicate-pool,
// rate-limit and busy answers use the emulator's own codes and statuses);
// the exact instance statuses and node hostnames of real pools; whether
// Civo takes a second scale while one runs (the emulator answers 409).
package civo

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Options configure a Server.
type Options struct {
	// Engine are the engine's options (sim.Options).
	Engine sim.Options
	// Keys are the API keys accepted. None: any non-empty key.
	Keys []string
}

// Server is the emulator: the Civo pools API on a sim.Engine, whose
// methods (ServeHTTP, Calls, SetFaultRate, SetRateLimit, SetLatency) it
// has.
type Server struct {
	*sim.Engine
	keys []string
	// clusters is guarded by the engine's lock; key: the cluster id.
	clusters map[string]*cluster
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{keys: slices.Clone(o.Keys), clusters: map[string]*cluster{}}
	s.Engine = sim.New(o.Engine, s.protocol())
	return s
}

// Cluster is a Civo Kubernetes cluster the emulator holds.
type Cluster struct {
	ID      string // a UUID
	Name    string
	Region  string // LON1, NYC1, FRA1, ...
	Version string
}

type cluster struct {
	Cluster
	pools map[string]*pool
}

// AddCluster adds a cluster with no pools; adding one that exists changes
// its name, region and version.
func (s *Server) AddCluster(c Cluster) {
	s.Do(func(time.Time) {
		if old, ok := s.clusters[c.ID]; ok {
			old.Cluster = c
			return
		}
		s.clusters[c.ID] = &cluster{Cluster: c, pools: map[string]*pool{}}
	})
}

// authenticate checks the bearer API key, as Civo's API does before
// anything else: 401 with Civo's error body when it is missing or unknown.
func (s *Server) authenticate(req *sim.Request) *sim.Reply {
	h := req.HTTP.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	key = strings.TrimSpace(key)
	why := "Authentication with the API key provided failed"
	switch {
	case !ok || !strings.EqualFold(scheme, "bearer") || key == "":
		why += ": no API key was sent (Authorization: bearer <key>)"
	case len(s.keys) > 0 && !slices.Contains(s.keys, key):
	default:
		return nil
	}
	rep := failf(http.StatusUnauthorized, codeAuthentication, "%s", why)
	rep.Header.Set("WWW-Authenticate", `Bearer realm="api.civo.com"`)
	return rep
}

// call is a request to the pools API with what its route needs: the
// cluster it names (in the request's region), the pool id of the path,
// and the body of a POST or PUT.
type call struct {
	*sim.Request
	cluster *cluster
	pool    string
	body    *poolRequest
}

// protocol is Civo's: the API key, then the rate limit, the body, faults,
// and the v2 pools API. Civo reads the region (and the body) and finds the
// cluster before it looks at the method: a method a path does not take is
// 405 only then.
func (s *Server) protocol() sim.Protocol {
	rt := sim.NewRouter(notEmulated, notAllowed)
	const pools = "/v2/kubernetes/clusters/{cluster}/pools"
	for pattern, h := range map[string]func(*call) *sim.Reply{
		"GET " + pools:                s.listPools,
		"POST " + pools:               s.createPool,
		pools:                         refuse,
		"GET " + pools + "/{pool}":    s.getPool,
		"PUT " + pools + "/{pool}":    s.updatePool,
		"DELETE " + pools + "/{pool}": s.deletePool,
		pools + "/{pool}":             refuse,
	} {
		rt.Handle(pattern, s.scoped(h))
	}
	return sim.Protocol{Tick: s.heal, Authenticate: s.authenticate, Codec: codec{}, Routes: rt.Serve}
}

// scoped reads what every route of the API needs, as Civo does first:
// the region (the query's for GET and DELETE, the body's for POST and PUT)
// and the cluster, which another region does not know.
func (s *Server) scoped(h func(*call) *sim.Reply) sim.Handler {
	return func(req *sim.Request) *sim.Reply {
		cl := &call{Request: req, pool: req.HTTP.PathValue("pool")}
		var region string
		switch req.HTTP.Method {
		case http.MethodGet, http.MethodDelete:
			region = req.HTTP.URL.Query().Get("region")
		case http.MethodPost, http.MethodPut:
			in, rep := decode(req)
			if rep != nil {
				return rep
			}
			cl.body, region = in, in.Region
		default:
			return notAllowed(req)
		}
		if region == "" {
			return failf(http.StatusBadRequest, codeRegionMissing, "A region is required (query parameter region for GET and DELETE, region in the body for POST and PUT)")
		}
		id := req.HTTP.PathValue("cluster")
		c, ok := s.clusters[id]
		if !ok || !strings.EqualFold(c.Region, region) {
			return failf(http.StatusNotFound, codeClusterNotFound, "The requested Kubernetes cluster %s could not be found in region %s", id, strings.ToUpper(region))
		}
		cl.cluster = c
		return h(cl)
	}
}

// refuse answers a method a path does not take.
func refuse(c *call) *sim.Reply { return notAllowed(c.Request) }

func notAllowed(req *sim.Request) *sim.Reply {
	return failf(http.StatusMethodNotAllowed, codeNotFound, "method %s is not allowed on %s", req.HTTP.Method, req.HTTP.URL.EscapedPath())
}

func notEmulated(req *sim.Request) *sim.Reply {
	return failf(http.StatusNotFound, codeNotFound, "kpool cloudsim does not emulate %s %s", req.HTTP.Method, req.HTTP.URL.EscapedPath())
}

// heal brings pools whose failed operation has had its time back to
// health (the protocol's Tick: before each request).
func (s *Server) heal(now time.Time) {
	for _, c := range s.clusters {
		for _, p := range c.pools {
			p.heal(now)
		}
	}
}
