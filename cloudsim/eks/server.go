// Package eks emulates the Amazon EKS API of managed node groups (REST-JSON,
// signed with AWS Signature Version 4) well enough for the unmodified
// official SDK (aws-sdk-go-v2/service/eks) to create, describe, list,
// update, tag and delete node groups against it.
//
// This package holds the EKS wire protocol only: routes, SigV4, error
// shapes (X-Amzn-ErrorType and the model's status codes), node group
// statuses and updates, and EKS's rules. Time, latency, rate limits,
// faults (5xx, dropped connections, operations that end failed),
// operations and the call log are the engine's (cloudsim/sim): tests drive
// it with a sim.ManualClock and never sleep. What the emulator does not
// reproduce of the real service is listed in cloudsim/README.md.
package eks

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/sim"
)

// Options configure a Server.
type Options struct {
	// Engine are the engine's options (sim.Options).
	Engine sim.Options
	// Keys are the access keys accepted (id to secret access key): a
	// request must be signed with one of them and its signature must be
	// right. None: any well-formed SigV4 Authorization header is accepted,
	// whatever its key.
	Keys map[string]string
	// PageSize is the maxResults of a list that gives none; 0 is 100,
	// EKS's own.
	PageSize int
}

// Server is the emulator: the EKS protocol on a sim.Engine, whose methods
// (ServeHTTP, Calls, SetFaultRate, SetRateLimit, SetLatency) it has.
type Server struct {
	*sim.Engine
	keys     map[string]string
	pageSize int
	// clusters is guarded by the engine's lock; key: region/name.
	clusters map[string]*cluster
	// templates are EC2's launch templates, by region/name; ltSeq numbers
	// their ids. Both guarded by the engine's lock.
	templates map[string]*launchTemplate
	ltSeq     int
	// denied are the EC2 actions the callers' policy does not allow
	// (Deny); guarded by the engine's lock.
	denied map[string]bool
	// kube is the clusters' Kubernetes API, under KubePrefix.
	kube *kube.API
	// tokenNow is the clock of the tokens' 15 minutes (SetTokenClock).
	tokenNow func() time.Time
	// local guards the CA and the origins the emulator was reached at
	// (not the engine's state).
	local   sync.Mutex
	ca      []byte
	origins map[string]bool
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{keys: o.Keys, pageSize: cmp.Or(max(o.PageSize, 0), 100), clusters: map[string]*cluster{},
		templates: map[string]*launchTemplate{}, denied: map[string]bool{}, kube: kube.New(KubePrefix), origins: map[string]bool{}}
	s.Engine = sim.New(o.Engine, s.protocol())
	s.kube.SetRefresh(s.refreshKube)
	return s
}

// Cluster is an EKS cluster the emulator holds.
type Cluster struct {
	Name    string
	Region  string
	Account string // 12 digits
	Version string // major.minor
	// Subnets are the cluster's subnets by availability zone name.
	Subnets map[string]string
}

// AddCluster adds an ACTIVE cluster with no node groups, and its
// Kubernetes API; adding one that exists changes its version and subnets.
func (s *Server) AddCluster(c Cluster) {
	s.addKube(c.Region, c.Name)
	s.Do(func(time.Time) {
		key := clusterKey(c.Region, c.Name)
		subnets := map[string]string{}
		for z, id := range c.Subnets {
			subnets[id] = z
		}
		if old, ok := s.clusters[key]; ok {
			old.version, old.subnets = c.Version, subnets
			return
		}
		s.clusters[key] = &cluster{name: c.Name, region: c.Region, account: c.Account, version: c.Version,
			subnets: subnets, nodegroups: map[string]*nodegroup{}, updates: map[string]*update{}, synced: map[string]string{},
			capacity: s.Capacity()}
	})
}

func clusterKey(region, name string) string { return region + "/" + name }

// heal brings the DEGRADED node groups that have caught up back to ACTIVE
// (the protocol's Tick: before each request).
func (s *Server) heal(now time.Time) {
	for _, c := range s.clusters {
		for _, g := range c.nodegroups {
			g.heal(now)
		}
	}
}

// call is a request with what its route needs: the region it was signed
// for and, on a cluster's paths, the cluster.
type call struct {
	*sim.Request
	region  string
	cluster *cluster
}

// protocol is EKS's: SigV4, then the rate limit, the body, faults, and
// the REST paths of the EKS model's operations, each answer with AWS's
// request id.
func (s *Server) protocol() sim.Protocol {
	rt := sim.NewRouter(s.unknown, s.unknown)
	rt.Handle(ec2Path+"{$}", s.ec2)
	for pattern, h := range map[string]func(*call) *sim.Reply{
		"POST /tags/{arn}":   s.tagResource,
		"DELETE /tags/{arn}": s.untagResource,
		"GET /tags/{arn}":    s.listTags,
	} {
		rt.Handle(pattern, s.signed(h))
	}
	const c = "/clusters/{cluster}"
	for pattern, h := range map[string]func(*call) *sim.Reply{
		"GET " + c:                                              s.describeCluster,
		"POST " + c + "/node-groups":                            s.createNodegroup,
		"GET " + c + "/node-groups":                             s.listNodegroups,
		"GET " + c + "/node-groups/{nodegroup}":                 s.describeNodegroup,
		"DELETE " + c + "/node-groups/{nodegroup}":              s.deleteNodegroup,
		"POST " + c + "/node-groups/{nodegroup}/update-config":  s.updateConfig,
		"POST " + c + "/node-groups/{nodegroup}/update-version": s.updateVersion,
		"GET " + c + "/updates":                                 s.listUpdates,
		"GET " + c + "/updates/{id}":                            s.describeUpdate,
	} {
		rt.Handle(pattern, s.inCluster(h))
	}
	rt.Handle(c+"/{rest...}", s.unknown)
	// EKS sends no Retry-After: the SDK backs off on its own.
	tick := func(now time.Time) {
		s.heal(now)
		s.syncKube(now) // the nodes as they are before the request changes anything
	}
	return sim.Protocol{Tick: tick, Authenticate: s.authenticate, Codec: codec{}, NoRetryAfter: true, Routes: rt.Serve,
		Finish: func(req *sim.Request, rep *sim.Reply) {
			rep.Header.Set("X-Amzn-Requestid", s.NewID())
			s.syncKube(req.Now) // what the request changed reaches the nodes
		}}
}

// signed gives h the region the request was signed for.
func (s *Server) signed(h func(*call) *sim.Reply) sim.Handler {
	return func(req *sim.Request) *sim.Reply { return h(&call{Request: req, region: signedRegion(req.HTTP)}) }
}

// inCluster gives h the cluster of the path, in the request's region; EKS
// answers a cluster it does not have before anything else of the path.
func (s *Server) inCluster(h func(*call) *sim.Reply) sim.Handler {
	return s.signed(func(c *call) *sim.Reply {
		cl, rep := s.lookup(c.region, c.HTTP.PathValue("cluster"))
		if rep != nil {
			return rep
		}
		c.cluster = cl
		return h(c)
	})
}

// unknown answers what the emulator does not serve as AWS's front door
// does (API Gateway's 404), after the cluster a path names, as EKS checks
// it first.
func (s *Server) unknown(req *sim.Request) *sim.Reply {
	if name := req.HTTP.PathValue("cluster"); name != "" {
		if _, rep := s.lookup(signedRegion(req.HTTP), name); rep != nil {
			return rep
		}
	}
	rep := failf(errInvalidRequest, "kpool cloudsim does not emulate %s %s.", req.HTTP.Method, req.HTTP.URL.EscapedPath())
	rep.Status = http.StatusNotFound
	return rep
}

// lookup finds a cluster of the request's region.
func (s *Server) lookup(region, name string) (*cluster, *sim.Reply) {
	if c, ok := s.clusters[clusterKey(region, name)]; ok {
		return c, nil
	}
	return nil, fail(errNotFound, apiError{Message: "No cluster found for name: " + name + ".", ClusterName: name})
}

// sortedTemplates returns a region's launch templates by name.
func (s *Server) sortedTemplates(region string) []*launchTemplate {
	var out []*launchTemplate
	for _, t := range s.templates {
		if t.region == region {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *launchTemplate) int { return strings.Compare(a.name, b.name) })
	return out
}

// sortedNodegroups returns a cluster's node groups by name.
func (c *cluster) sortedNodegroups() []*nodegroup {
	return slices.SortedFunc(maps.Values(c.nodegroups), func(a, b *nodegroup) int { return strings.Compare(a.name, b.name) })
}

func (s *Server) describeCluster(req *call) *sim.Reply {
	c := req.cluster
	var subnets []string
	for id := range c.subnets {
		subnets = append(subnets, id)
	}
	slices.Sort(subnets)
	return jsonReply(map[string]any{"cluster": map[string]any{
		"name": c.name, "arn": c.arn(), "version": c.version, "status": statusActive,
		"endpoint":             s.endpointOf(c, req.BaseURL()),
		"certificateAuthority": map[string]string{"data": s.caData()},
		"platformVersion":      "eks.1",
		"resourcesVpcConfig":   map[string]any{"subnetIds": subnets, "vpcId": "vpc-0123456789abcdef0"},
		"createdAt":            epoch(req.Now.Add(-24 * time.Hour)),
		"tags":                 map[string]string{},
	}})
}
