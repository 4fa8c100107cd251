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
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	container "google.golang.org/api/container/v1"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Options configure a Server.
type Options struct {
	// Engine are the engine's options: clock, operation and node times,
	// latency, rate limit, faults, call log.
	Engine sim.Options
	// Token, when set, is the only bearer token accepted; otherwise any
	// non-empty one is (an OAuth2 access token is opaque to its user).
	Token string
}

// Server is the emulator: GKE's REST protocol on a sim.Engine, whose
// methods (ServeHTTP, Calls, SetFaultRate, SetRateLimit, SetLatency) it
// has. Serve it at the root of a TLS server (sim.TLSServer): the client's
// endpoint is the server's URL plus "/".
type Server struct {
	*sim.Engine
	token string
	// clusters and seq are guarded by the engine's lock (its handler, Do).
	clusters map[string]*cluster // key: project/location/name
	seq      int
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{token: o.Token, clusters: map[string]*cluster{}}
	s.Engine = sim.New(o.Engine, s.serve)
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
		s.clusters[key] = &cluster{project: project, location: location, name: name, version: version,
			locations: append([]string(nil), locations...), pools: map[string]*pool{}}
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
		p.ready = p.nodes()
		c.pools[p.np.Name] = p
	})
	return err
}

// PoolState is a node pool as GKE would return it, plus what only the
// emulator knows.
type PoolState struct {
	container.NodePool
	// PerZone is the node count each zone's instance group targets; Nodes
	// the nodes that exist now, over all zones.
	PerZone, Nodes int
	// Operation is the type of the operation in progress
	// (CREATE_NODE_POOL, ...); "" when idle.
	Operation string
}

// Pool returns a copy of a node pool as it is now; false if there is none.
func (s *Server) Pool(project, location, clusterName, name string) (st PoolState, found bool) {
	s.Do(func(now time.Time) {
		c, ok := s.clusters[clusterKey(project, location, clusterName)]
		if !ok {
			return
		}
		p, ok := c.pools[name]
		if !ok {
			return
		}
		p.heal(now)
		st, found = PoolState{NodePool: *p.view(""), PerZone: p.perZone, Nodes: p.readyAt(now)}, true
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
	s.Do(func(time.Time) {
		c, ok := s.clusters[clusterKey(project, location, clusterName)]
		if !ok {
			err = fmt.Errorf("gke: no cluster %s/%s/%s", project, location, clusterName)
			return
		}
		p, ok := c.pools[name]
		if !ok {
			err = fmt.Errorf("gke: no node pool %s in cluster %s", name, clusterName)
			return
		}
		fn(p.np)
		p.etag = s.NewID()
	})
	return err
}

// serve answers one request: GKE's checks in its order (authentication,
// quota, the body), an injected fault, then the route.
func (s *Server) serve(req *sim.Request) *sim.Reply {
	for _, c := range s.clusters {
		for _, p := range c.pools {
			p.heal(req.Now)
		}
	}
	if rep := s.authenticate(req.HTTP); rep != nil {
		return rep
	}
	if ok, secs := req.Throttle(); !ok {
		rate, burst := req.RateLimit()
		rep := detailed(codeResourceExhausted, []any{errorInfo("RATE_LIMIT_EXCEEDED"),
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(secs) + "s"}},
			"Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service 'container.googleapis.com' (kpool cloudsim: %g requests per second, burst %d).", rate, burst)
		rep.Header.Set("Retry-After", strconv.Itoa(secs))
		return rep
	}
	if errors.Is(req.BodyErr, sim.ErrBodyTooLarge) {
		return errorReply(codeInvalidArgument, "Request payload size exceeds the limit: %d bytes.", sim.MaxBody)
	}
	if req.BodyErr != nil {
		return errorReply(codeInvalidArgument, "The request body could not be read: %v", req.BodyErr)
	}
	switch req.Fault() {
	case sim.Fault500:
		return errorReply(codeInternal, "Internal error encountered (fault injected by kpool cloudsim).")
	case sim.Fault503:
		rep := errorReply(codeUnavailable, "The service is currently unavailable (fault injected by kpool cloudsim).")
		rep.Header.Set("Retry-After", "1")
		return rep
	case sim.FaultDrop:
		return sim.Drop()
	}
	return s.route(req)
}

// authenticate checks the OAuth2 bearer token; nil means it is accepted.
func (s *Server) authenticate(r *http.Request) *sim.Reply {
	h := r.Header.Get("Authorization")
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

// route dispatches on the path: /v1/projects/P/locations/L/clusters/C
// [/nodePools[/NP[:verb]]], /v1/projects/P/locations/L/operations/OP, and
// Compute Engine's /compute/v1/projects/P/zones/Z/instanceGroupManagers/N.
func (s *Server) route(req *sim.Request) *sim.Reply {
	path := req.HTTP.URL.Path
	seg := strings.Split(strings.Trim(path, "/"), "/")
	method := req.HTTP.Method
	at := func(i int, want string) bool { return i < len(seg) && seg[i] == want }
	switch {
	case len(seg) == 8 && at(0, "compute") && at(1, "v1") && at(2, "projects") && at(4, "zones") && at(6, "instanceGroupManagers"):
		if method != http.MethodGet {
			return methodNotFound(method, path)
		}
		return s.getGroup(req, seg[3], seg[5], seg[7])
	case len(seg) == 6 && at(0, "v1") && at(1, "projects") && at(3, "locations") && at(5, "operations"):
		return errorReply(codeUnimplemented, "kpool cloudsim does not emulate operations.list.")
	case len(seg) == 7 && at(0, "v1") && at(1, "projects") && at(3, "locations") && at(5, "operations"):
		if method != http.MethodGet {
			return errorReply(codeUnimplemented, "kpool cloudsim emulates operations.get only.")
		}
		return s.getOperation(req, seg[2], seg[4], seg[6])
	case len(seg) >= 7 && at(0, "v1") && at(1, "projects") && at(3, "locations") && at(5, "clusters"):
		project, location, name := seg[2], seg[4], seg[6]
		rest := seg[7:]
		switch {
		case len(rest) == 0:
			if method == http.MethodGet {
				return s.getCluster(req, project, location, name)
			}
			return errorReply(codeUnimplemented, "kpool cloudsim does not emulate writing clusters.")
		case len(rest) == 1 && rest[0] == "nodePools":
			switch method {
			case http.MethodGet:
				return s.listPools(req, project, location, name)
			case http.MethodPost:
				return s.createPool(req, project, location, name)
			}
		case len(rest) == 2 && rest[0] == "nodePools":
			np, verb, custom := strings.Cut(rest[1], ":")
			switch {
			case custom && method == http.MethodPost:
				return s.poolVerb(req, project, location, name, np, verb)
			case custom:
			case method == http.MethodGet:
				return s.getPool(req, project, location, name, np)
			case method == http.MethodPut:
				return s.updatePool(req, project, location, name, np)
			case method == http.MethodDelete:
				return s.deletePool(req, project, location, name, np)
			}
		default:
			return errorReply(codeUnimplemented, "kpool cloudsim does not emulate %s.", path)
		}
		return methodNotFound(method, path)
	}
	return errorReply(codeNotFound, "The requested URL %s was not found on this server (kpool cloudsim GKE emulator).", path)
}

// methodNotFound is Google's answer to a verb a path does not take.
func methodNotFound(method, path string) *sim.Reply {
	return errorReply(codeNotFound, "Method not found: %s %s.", method, path)
}

func clusterKey(project, location, name string) string { return project + "/" + location + "/" + name }
