// Package civo emulates the parts of Civo's v2 API that Civo's own Go
// client (civogo), its CLI and its Terraform provider call to manage the
// node pools of a Kubernetes cluster, well enough for kpool's Civo driver
// and for the civo CLI:
//
//	GET    /v2/kubernetes/clusters/{cluster}/pools                   a JSON array of pools
//	POST   /v2/kubernetes/clusters/{cluster}/pools                   {"id","count","size","labels","taints","public_ip_node_pool","region"}
//	GET    /v2/kubernetes/clusters/{cluster}/pools/{pool}            the pool
//	PUT    /v2/kubernetes/clusters/{cluster}/pools/{pool}            {"count","labels","taints","region"}: the pool
//	DELETE /v2/kubernetes/clusters/{cluster}/pools/{pool}            {"result":"success"}
//	DELETE /v2/kubernetes/clusters/{cluster}/pools/{pool}/instances/{instance}
//	GET    /v2/kubernetes/clusters, /v2/kubernetes/clusters/{cluster} the clusters, read only
//	GET    /v2/regions, /v2/quota                                     the regions, the account's quota
//	GET    /v2/sizes, /v2/kubernetes/versions                         the size catalogue, the Kubernetes versions
//
// Every call takes the region as the query parameter region (civogo sends
// it on every method); a POST or PUT may carry it in its body instead, and
// a call with neither is served in the account's default region, as Civo
// serves it. README.md in this folder lists every rule with its source.
//
// This package holds the Civo wire protocol only: routes, the bearer API
// key, regions, Civo's error bodies, the shapes of pools, instances,
// clusters, regions and the quota, and Civo's rules. Time, latency, rate
// limits, faults, operations and the call log are the engine's
// (cloudsim/sim): tests drive it with a sim.ManualClock and never sleep.
package civo

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/sim"
)

// Options configure a Server.
type Options struct {
	// Engine are the engine's options (sim.Options).
	Engine sim.Options
	// Keys are the API keys accepted. None: any non-empty key.
	Keys []string
	// DefaultRegion is the account's default region, where a call that
	// names no region is served. "" is NYC1: a region other than the demo
	// cluster's, so that a client that forgets the region meets the
	// not-found answer Civo gives it for a cluster elsewhere.
	DefaultRegion string
	// Quota is the account's quota, checked when nodes are added; the
	// zero value limits nothing.
	Quota Quota
}

// Server is the emulator: Civo's API on a sim.Engine, whose methods
// (ServeHTTP, Calls, SetFaultRate, SetRateLimit, SetLatency) it has.
type Server struct {
	*sim.Engine
	keys          []string
	defaultRegion string
	quota         Quota
	// sizesDenied: GET /v2/sizes answers 403 (SetSizesDenied).
	sizesDenied bool
	// clusters is guarded by the engine's lock; key: the cluster id.
	clusters map[string]*cluster
	// kube is the clusters' Kubernetes API, under KubePrefix.
	kube *kube.API
}

// KubePrefix is the path under which the emulator serves its clusters'
// Kubernetes APIs: a cluster's kubeconfig names
// https://<the emulator>/k8s/<cluster id>.
const KubePrefix = "/k8s"

// ServeHTTP serves a cluster's Kubernetes API (under KubePrefix) or
// Civo's API, through the engine.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.kube.Handles(r.URL.Path) {
		s.kube.ServeHTTP(w, r)
		return
	}
	s.Engine.ServeHTTP(w, r)
}

// SetCA sets the PEM of the certificate authority that signed the
// emulator's TLS certificate, which the clusters' kubeconfigs tell their
// clients to trust (kpool cloudsim calls it with its CA).
func (s *Server) SetCA(pem []byte) { s.kube.SetCA(pem) }

// Kube is the clusters' Kubernetes API, for tests and hand-made changes
// (a person editing the autoscaler's Deployment).
func (s *Server) Kube() *kube.API { return s.kube }

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{keys: slices.Clone(o.Keys), defaultRegion: strings.ToUpper(o.DefaultRegion), quota: o.Quota, clusters: map[string]*cluster{},
		kube: kube.New(KubePrefix)}
	if s.defaultRegion == "" {
		s.defaultRegion = "NYC1"
	}
	s.Engine = sim.New(o.Engine, s.protocol())
	s.kube.SetRefresh(s.refresh)
	return s
}

// Cluster is a Civo Kubernetes cluster the emulator holds.
type Cluster struct {
	ID      string // a UUID
	Name    string
	Region  string // LON1, NYC1, FRA1, ...; a region Civo does not have is added to the emulator's
	Version string
}

type cluster struct {
	Cluster
	created time.Time
	pools   map[string]*pool
	apps    []string // the installed applications' names, in install order
	// synced are the pools whose nodes the cluster's Kubernetes API
	// holds (syncNodes), so that a pool gone takes its nodes with it.
	synced map[string]bool
}

// AddCluster adds a cluster with no pools; adding one that exists changes
// its name, region and version.
func (s *Server) AddCluster(c Cluster) {
	c.Region = strings.ToUpper(c.Region)
	s.kube.AddCluster(c.ID)
	s.Do(func(now time.Time) {
		if old, ok := s.clusters[c.ID]; ok {
			old.Cluster = c
			return
		}
		s.clusters[c.ID] = &cluster{Cluster: c, created: now, pools: map[string]*pool{}}
	})
}

// authenticate checks the bearer API key, as Civo's API does before
// anything else ("Authorization: bearer 12345", civo.com/api): 401 with
// Civo's error body when it is missing or unknown.
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
	return failf(http.StatusUnauthorized, codeAuthentication, "%s", why)
}

// protocol is Civo's: the API key, then the rate limit, the body, faults,
// and the routes. A method or path the API does not have is Rails' plain
// 404 page (civo.com/api: "404 Not Found pages are a standard page of
// text").
func (s *Server) protocol() sim.Protocol {
	rt := sim.NewRouter(notEmulated, notEmulated)
	const clusters = "/v2/kubernetes/clusters"
	const pools = clusters + "/{cluster}/pools"
	for pattern, h := range map[string]func(*call) *sim.Reply{
		"GET " + pools:                                     s.listPools,
		"POST " + pools:                                    s.createPool,
		"GET " + pools + "/{pool}":                         s.getPool,
		"PUT " + pools + "/{pool}":                         s.updatePool,
		"DELETE " + pools + "/{pool}":                      s.deletePool,
		"DELETE " + pools + "/{pool}/instances/{instance}": s.deleteInstance,
		"GET " + clusters + "/{cluster}":                   s.getCluster,
		"PUT " + clusters + "/{cluster}":                   s.updateCluster,
	} {
		rt.Handle(pattern, s.scoped(h))
	}
	rt.Handle("GET "+clusters, s.inRegion(s.listClusters))
	rt.Handle("GET /v2/regions", s.listRegions)
	rt.Handle("GET /v2/quota", s.getQuota)
	rt.Handle("GET /v2/sizes", s.listSizes)
	rt.Handle("GET /v2/kubernetes/versions", s.listVersions)
	// Finish: what a call changed (a pool made, scaled, relabelled,
	// deleted) reaches the clusters' nodes before the answer goes.
	return sim.Protocol{Tick: s.heal, Authenticate: s.authenticate, Codec: codec{}, Routes: rt.Serve, Finish: s.afterCall}
}

// call is a request to a cluster's API with what its route needs: the
// region it is served in, the cluster it names (found in that region),
// the pool id of the path, and the body of a POST or PUT.
type call struct {
	*sim.Request
	region  string
	cluster *cluster
	pool    string
	body    *poolRequest
}

// inRegion resolves the region of a call that names no cluster.
func (s *Server) inRegion(h func(*call) *sim.Reply) sim.Handler {
	return func(req *sim.Request) *sim.Reply {
		region, rep := s.region(req, "")
		if rep != nil {
			return rep
		}
		return h(&call{Request: req, region: region})
	}
}

// scoped reads what every route under a cluster needs, as Civo does
// first: the body of a POST or PUT, the region (see region) and the
// cluster, which another region does not know ("clusters are displayed
// only on the listings in the region where they are deployed", Civo's
// docs, overview/regions).
func (s *Server) scoped(h func(*call) *sim.Reply) sim.Handler {
	return func(req *sim.Request) *sim.Reply {
		cl := &call{Request: req, pool: req.HTTP.PathValue("pool")}
		var inBody string
		if req.HTTP.Method == http.MethodPost || req.HTTP.Method == http.MethodPut {
			in, rep := decode(req)
			if rep != nil {
				return rep
			}
			cl.body, inBody = in, in.Region
		}
		var rep *sim.Reply
		if cl.region, rep = s.region(req, inBody); rep != nil {
			return rep
		}
		c, ok := s.clusters[req.HTTP.PathValue("cluster")]
		if !ok || c.Region != cl.region {
			return failf(http.StatusNotFound, codeClusterNotFound, reasonClusterNotFound)
		}
		cl.cluster = c
		return h(cl)
	}
}

// heal brings pools whose failed operation has had its time back to
// health (the protocol's Tick: before each request).
func (s *Server) heal(now time.Time) {
	for _, c := range s.clusters {
		for _, p := range c.pools {
			p.heal(s, now)
		}
	}
}
