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
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Options configure a Server.
type Options struct {
	// Engine are the engine's options: clock, operation and node times,
	// latency, rate limit, faults, call log.
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
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{keys: o.Keys, pageSize: o.PageSize, clusters: map[string]*cluster{}}
	if s.pageSize <= 0 {
		s.pageSize = 100
	}
	s.Engine = sim.New(o.Engine, s.serve)
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

// AddCluster adds an ACTIVE cluster with no node groups; adding one that
// exists changes its version and subnets.
func (s *Server) AddCluster(c Cluster) {
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
			subnets: subnets, nodegroups: map[string]*nodegroup{}, updates: map[string]*update{}}
	})
}

func clusterKey(region, name string) string { return region + "/" + name }

// heal brings the DEGRADED node groups that have caught up back to ACTIVE
// (called under the engine's lock, before each request is handled).
func (s *Server) heal(now time.Time) {
	for _, c := range s.clusters {
		for _, g := range c.nodegroups {
			g.heal(now)
		}
	}
}

// serve answers one request, with the request id AWS puts on every answer.
func (s *Server) serve(req *sim.Request) *sim.Reply {
	s.heal(req.Now)
	rep := s.answer(req)
	if !rep.Dropped() {
		rep.Header.Set("X-Amzn-Requestid", s.NewID())
	}
	return rep
}

// answer checks what AWS checks, in its order (the signature, throttling,
// the body), lets the engine inject a fault, and routes the request.
func (s *Server) answer(req *sim.Request) *sim.Reply {
	region, rep := s.authenticate(req)
	if rep != nil {
		return rep
	}
	if ok, _ := req.Throttle(); !ok {
		// EKS sends no Retry-After: the SDK backs off on its own.
		return failf(errThrottling, "Rate exceeded")
	}
	if errors.Is(req.BodyErr, sim.ErrBodyTooLarge) {
		return failf(errSerialization, "The request body is larger than %d bytes.", sim.MaxBody)
	}
	if req.BodyErr != nil {
		return failf(errSerialization, "The request body could not be read: %v", req.BodyErr)
	}
	switch req.Fault() {
	case sim.Fault500:
		return failf(errServer, "An internal error occurred (fault injected by kpool cloudsim).")
	case sim.Fault503:
		return failf(errUnavailable, "Service is unavailable, please retry (fault injected by kpool cloudsim).")
	case sim.FaultDrop:
		return sim.Drop()
	}
	return s.route(req, region)
}

// route dispatches on the REST path of the EKS model's operations.
func (s *Server) route(req *sim.Request, region string) *sim.Reply {
	path := req.HTTP.URL.EscapedPath()
	seg := strings.Split(strings.Trim(path, "/"), "/")
	for i := range seg {
		if u, err := url.PathUnescape(seg[i]); err == nil {
			seg[i] = u
		}
	}
	m := req.HTTP.Method
	q := req.HTTP.URL.Query()
	switch {
	case len(seg) == 2 && seg[0] == "tags":
		switch m {
		case http.MethodPost:
			return s.tagResource(req, region, seg[1])
		case http.MethodDelete:
			return s.untagResource(req, region, seg[1], q["tagKeys"])
		case http.MethodGet:
			return s.listTags(req, region, seg[1])
		}
	case len(seg) >= 2 && seg[0] == "clusters":
		c, rep := s.lookup(region, seg[1])
		if rep != nil {
			return rep
		}
		rest := seg[2:]
		switch {
		case len(rest) == 0 && m == http.MethodGet:
			return s.describeCluster(req, c)
		case len(rest) == 1 && rest[0] == "node-groups" && m == http.MethodPost:
			return s.createNodegroup(req, c)
		case len(rest) == 1 && rest[0] == "node-groups" && m == http.MethodGet:
			return s.listNodegroups(req, c)
		case len(rest) == 2 && rest[0] == "node-groups" && m == http.MethodGet:
			return s.describeNodegroup(req, c, rest[1])
		case len(rest) == 2 && rest[0] == "node-groups" && m == http.MethodDelete:
			return s.deleteNodegroup(req, c, rest[1])
		case len(rest) == 3 && rest[0] == "node-groups" && rest[2] == "update-config" && m == http.MethodPost:
			return s.updateConfig(req, c, rest[1])
		case len(rest) == 3 && rest[0] == "node-groups" && rest[2] == "update-version" && m == http.MethodPost:
			return s.updateVersion(req, c, rest[1])
		case len(rest) == 1 && rest[0] == "updates" && m == http.MethodGet:
			return s.listUpdates(req, c)
		case len(rest) == 2 && rest[0] == "updates" && m == http.MethodGet:
			return s.describeUpdate(req, c, rest[1])
		}
	}
	// API Gateway-style answer of AWS's front door to an unknown route.
	rep := failf(errInvalidRequest, "kpool cloudsim does not emulate %s %s.", req.HTTP.Method, path)
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

// sortedNodegroups returns a cluster's node groups by name.
func (c *cluster) sortedNodegroups() []*nodegroup {
	out := make([]*nodegroup, 0, len(c.nodegroups))
	for _, ng := range c.nodegroups {
		out = append(out, ng)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (s *Server) describeCluster(req *sim.Request, c *cluster) *sim.Reply {
	var subnets []string
	for id := range c.subnets {
		subnets = append(subnets, id)
	}
	slices.Sort(subnets)
	return jsonReply(map[string]any{"cluster": map[string]any{
		"name": c.name, "arn": c.arn(), "version": c.version, "status": statusActive,
		"endpoint":           fmt.Sprintf("https://%X.gr7.%s.eks.amazonaws.com", c.name, c.region),
		"platformVersion":    "eks.1",
		"resourcesVpcConfig": map[string]any{"subnetIds": subnets, "vpcId": "vpc-0123456789abcdef0"},
		"createdAt":          epoch(req.Now.Add(-24 * time.Hour)),
		"tags":               map[string]string{},
	}})
}
