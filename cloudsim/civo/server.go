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
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Options configure a Server.
type Options struct {
	// Engine are the engine's options: clock, operation and node times,
	// latency, rate limit, faults, call log.
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
	s.Engine = sim.New(o.Engine, s.serve)
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

// serve answers one request: the API key first, then the rate limit, the
// body, an injected fault, and the route.
func (s *Server) serve(req *sim.Request) *sim.Reply {
	s.heal(req.Now)
	if rep := s.authenticate(req); rep != nil {
		return rep
	}
	if ok, secs := req.Throttle(); !ok {
		rep := failf(http.StatusTooManyRequests, codeRateLimit, "Too many requests, please slow down")
		rep.Header.Set("Retry-After", strconv.Itoa(secs))
		return rep
	}
	if errors.Is(req.BodyErr, sim.ErrBodyTooLarge) {
		return failf(http.StatusRequestEntityTooLarge, codeParameterInvalid, "The request body is larger than %d bytes", sim.MaxBody)
	}
	if req.BodyErr != nil {
		return failf(http.StatusBadRequest, codeParameterInvalid, "The request body could not be read: %v", req.BodyErr)
	}
	switch req.Fault() {
	case sim.Fault500:
		return failf(http.StatusInternalServerError, codeInternal, "Internal server error (fault injected by kpool cloudsim)")
	case sim.Fault503:
		rep := failf(http.StatusServiceUnavailable, codeUnavailable, "Service temporarily unavailable (fault injected by kpool cloudsim)")
		rep.Header.Set("Retry-After", "1")
		return rep
	case sim.FaultDrop:
		return sim.Drop()
	}
	return s.route(req)
}

// authenticate checks the bearer API key, as Civo's API does before
// anything else: 401 with Civo's error body when it is missing or unknown.
func (s *Server) authenticate(req *sim.Request) *sim.Reply {
	h := req.HTTP.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "bearer") || key == "" {
		rep := failf(http.StatusUnauthorized, codeAuthentication, "Authentication with the API key provided failed: no API key was sent (Authorization: bearer <key>)")
		rep.Header.Set("WWW-Authenticate", `Bearer realm="api.civo.com"`)
		return rep
	}
	if len(s.keys) > 0 && !slices.Contains(s.keys, key) {
		rep := failf(http.StatusUnauthorized, codeAuthentication, "Authentication with the API key provided failed")
		rep.Header.Set("WWW-Authenticate", `Bearer realm="api.civo.com"`)
		return rep
	}
	return nil
}

// route dispatches on the path of the v2 pools API.
func (s *Server) route(req *sim.Request) *sim.Reply {
	path := req.HTTP.URL.EscapedPath()
	seg := strings.Split(strings.Trim(path, "/"), "/")
	for i := range seg {
		if u, err := url.PathUnescape(seg[i]); err == nil {
			seg[i] = u
		}
	}
	m := req.HTTP.Method
	if len(seg) < 5 || seg[0] != "v2" || seg[1] != "kubernetes" || seg[2] != "clusters" || seg[4] != "pools" || len(seg) > 6 {
		return failf(http.StatusNotFound, codeNotFound, "kpool cloudsim does not emulate %s %s", m, path)
	}
	var region string
	var body *poolRequest
	switch m {
	case http.MethodGet, http.MethodDelete:
		region = req.HTTP.URL.Query().Get("region")
	case http.MethodPost, http.MethodPut:
		in, rep := decode(req)
		if rep != nil {
			return rep
		}
		body, region = in, in.Region
	default:
		return failf(http.StatusMethodNotAllowed, codeNotFound, "method %s is not allowed on %s", m, path)
	}
	if region == "" {
		return failf(http.StatusBadRequest, codeRegionMissing, "A region is required (query parameter region for GET and DELETE, region in the body for POST and PUT)")
	}
	c, ok := s.clusters[seg[3]]
	if !ok || !strings.EqualFold(c.Region, region) {
		// A cluster lives in one region: another region does not know it.
		return failf(http.StatusNotFound, codeClusterNotFound, "The requested Kubernetes cluster %s could not be found in region %s", seg[3], strings.ToUpper(region))
	}
	if len(seg) == 5 {
		switch m {
		case http.MethodGet:
			return s.listPools(req, c)
		case http.MethodPost:
			return s.createPool(req, c, body)
		}
		return failf(http.StatusMethodNotAllowed, codeNotFound, "method %s is not allowed on %s", m, path)
	}
	id := seg[5]
	switch m {
	case http.MethodGet:
		return s.getPool(req, c, id)
	case http.MethodPut:
		return s.updatePool(req, c, id, body)
	case http.MethodDelete:
		return s.deletePool(req, c, id)
	}
	return failf(http.StatusMethodNotAllowed, codeNotFound, "method %s is not allowed on %s", m, path)
}

// heal brings pools whose failed operation has had its time back to
// health (called under the engine's lock before each request).
func (s *Server) heal(now time.Time) {
	for _, c := range s.clusters {
		for _, p := range c.pools {
			p.heal(now)
		}
	}
}
