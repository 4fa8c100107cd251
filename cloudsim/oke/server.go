// Package oke emulates the Oracle Container Engine for Kubernetes (OKE)
// API of node pools (OCI REST, version 20180222, requests signed with OCI's
// HTTP signature) well enough for the unmodified official SDK
// (oci-go-sdk/v65/containerengine) to create, list, get, update and delete
// node pools against it and follow their work requests.
//
// This package holds the OKE wire protocol only: routes, the signature,
// OCI's error bodies, etags, node pool and node lifecycles and OKE's rules.
// Time, latency, rate limits, faults (5xx, dropped connections, operations
// that end failed), operations and the call log are the engine's
// (cloudsim/sim): tests drive it with a sim.ManualClock and never sleep.
//
// Emulated: POST/GET /20180222/nodePools (create; list with compartmentId,
// clusterId, name, lifecycleState, limit, page, sortOrder and
// opc-next-page), GET/PUT/DELETE /20180222/nodePools/{id} (etag on GET,
// if-match on PUT and DELETE, 412 NoEtagMatch, 409 IncorrectState
// while a work request holds the pool or on a FAILED pool),
// DELETE /20180222/nodePools/{id}/node/{nodeId} (DeleteNode with
// isDecrementSize: that node goes and the size drops by one, deletenode.go),
// GET /20180222/workRequests (list), /workRequests/{id}, its /errors and
// /logs (OKE explains failed work there), and GET
// /20180222/nodePoolOptions/{id} (the Kubernetes versions node pools may
// run: the control plane's and the x.y.10 patch of the two minors before
// it; the shapes of the catalogue), and Compute's GET /20160918/shapes
// (ListShapes, shapes.go: a shape catalogue with Oracle's figures and a
// few availability domain restrictions, which creates and updates are
// checked against). Every answer has an opc-request-id; errors are OCI's
// {"code","message"}: 404 NotAuthorizedOrNotFound for a resource of the
// path or query, 400 RelatedResourceNotAuthorizedOrNotFound for one named
// in the body, 400 LimitExceeded past a service limit (Limits). Bodies are
// decoded into the SDK's own types, unknown members refused; opc-retry-token
// makes a retried create return the first one's work request. The
// signature may carry the date as date (Go SDK) or x-date (JavaScript SDK).
// README.md lists every rule with its source.
//
// Pools: CREATING, ACTIVE, UPDATING, DELETING, DELETED (kept visible for an
// hour), FAILED (a create that failed: only a delete is taken),
// NEEDS_ATTENTION (an update that failed: heals after as long again as it
// took, or takes a new update). Nodes come up one at a time in the
// placement domain with the fewest nodes (CREATING, then ACTIVE) and go
// one at a time (DELETING), those outside the placement first, each with
// its own OCID, name, domain, subnet, fault domain, IP, the node tags and
// the configuration (version, shape, shape config, image, boot volume,
// preemptible, labels) of the pool when it was created: changes apply to
// new nodes only, as on OKE.
//
// Each cluster has a Kubernetes API (cloudsim/kube, under /k8s/<cluster
// OCID>, kube.go) whose nodes are its pools' ACTIVE and DELETING nodes as
// OKE registers them (named by private IP, OKE's labels, the initial labels
// of their creation); POST /20180222/clusters/{id}/kubeconfig/content
// (CreateKubeconfig, kubeconfig.go) answers its kubeconfig as OKE does,
// whose user runs `oci ce cluster generate-token`, and the API takes the
// tokens that command makes, signed with a key the emulator takes.
//
// Cluster add-ons (addons.go): install, get, list, update under an etag and
// disable, each a work request; the Cluster Autoscaler add-on's nodes
// entries move pools within their bounds when the emulated cluster asks
// (SetDemand).
//
// Node cycling (cycle.go): an update with
// nodePoolCyclingDetails.isNodeCyclingEnabled replaces the nodes that lack
// the pool's configuration, a maximumSurge at a time, draining the old
// ones through the cluster's Kubernetes API under their pods'
// PodDisruptionBudgets for at most nodeEvictionNodePoolSettings'
// evictionGraceDuration, then force deleting them or failing.
//
// Host capacity (capacity.go): each node launched takes one from the
// engine's capacity of its availability domain, shape and preemptible
// setting; one that gets none stays in the pool without an instance,
// INACTIVE with Compute's nodeError (InternalError "Out of host
// capacity."), the work request FAILED and the pool NEEDS_ATTENTION with
// the nodes it got, until an update drops the placeholders.
//
// Not reproduced: the cluster and virtual node pool APIs; boot volume
// replacement; drains other than node cycling's; kmsKeyId, NSGs and pod
// networking beyond storing them; the deprecated quantityPerSubnet/subnetIds and nodeImageName
// (refused); defined tags, tag namespaces and IAM policies (any key of
// Options.Keys may do anything); image
// compatibility with shapes and versions; the date header's freshness (the
// clock is simulated). Without node cycling, nodes keep the version they
// were created with.
package oke

import (
	"crypto/rsa"
	"maps"
	"net/http"
	"sort"
	"strings"
	"time"

	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/sim"
)

// APIVersion is the path prefix of every Container Engine operation.
const APIVersion = "20180222"

// Options configure a Server.
type Options struct {
	// Engine are the engine's options (sim.Options).
	Engine sim.Options
	// Keys are the API signing keys accepted, by keyId
	// ("<tenancy>/<user>/<fingerprint>"): a request must be signed with one
	// of them and its signature must verify. None: any well-formed
	// signature is accepted, whatever its key.
	Keys map[string]*rsa.PublicKey
	// PageSize is the limit of a list that gives none; 0 is 100.
	PageSize int
	// Limits are the service limits enforced (LimitExceeded).
	Limits Limits
}

// Server is the emulator: the OKE protocol on a sim.Engine, whose methods
// (ServeHTTP, Calls, SetFaultRate, SetRateLimit, SetLatency) it has.
type Server struct {
	*sim.Engine
	keys     map[string]*rsa.PublicKey
	pageSize int
	limits   Limits
	nodeTime time.Duration
	// The state below is guarded by the engine's lock.
	clusters map[string]*cluster // by OCID
	pools    map[string]*pool    // by OCID, every cluster's
	works    map[string]*work    // work requests by OCID
	tokens   map[string]string   // opc-retry-token to work request OCID
	// held are the launched nodes' offerings, whose capacity each
	// holds until it is gone (capacity.go).
	held map[*node]sim.Offering
	seq  int
	// shapesDenied: ListShapes answers 404 (SetShapesDenied).
	shapesDenied bool
	// kube is the clusters' Kubernetes API (kube.go), under KubePrefix.
	kube *kubeState
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{keys: o.Keys, pageSize: o.PageSize, limits: o.Limits, nodeTime: o.Engine.NodeTime,
		clusters: map[string]*cluster{}, pools: map[string]*pool{}, works: map[string]*work{}, tokens: map[string]string{}, held: map[*node]sim.Offering{}}
	if s.pageSize <= 0 {
		s.pageSize = 100
	}
	s.initKube()
	s.Engine = sim.New(o.Engine, s.protocol())
	return s
}

// Cluster is an OKE cluster the emulator holds.
type Cluster struct {
	ID            string // ocid1.cluster.…
	Name          string
	Region        string
	CompartmentID string
	Version       string // the control plane's, "v1.31.1"
	ImageID       string // the default node image, for Clusters and Describe
	// Subnets are the worker subnets by availability domain name.
	Subnets map[string]string
}

type cluster struct {
	Cluster
	addons map[string]*addon // installed add-ons by name
}

// AddCluster adds an ACTIVE cluster with no node pools; adding one that
// exists changes its version, image and subnets.
func (s *Server) AddCluster(c Cluster) {
	s.addKubeCluster(c.ID)
	s.Do(func(time.Time) {
		c.Subnets = maps.Clone(c.Subnets)
		if old, ok := s.clusters[c.ID]; ok {
			old.Version, old.ImageID, old.Subnets = c.Version, c.ImageID, c.Subnets
			return
		}
		s.clusters[c.ID] = &cluster{Cluster: c, addons: map[string]*addon{}}
	})
}

// requestID puts on an answer the opc-request-id OCI puts on every one:
// the client's, or a new one.
func (s *Server) requestID(req *sim.Request, rep *sim.Reply) {
	id := req.HTTP.Header.Get("opc-request-id")
	if id == "" {
		id = strings.ToUpper(strings.ReplaceAll(s.NewID(), "-", ""))
	}
	rep.Header.Set("opc-request-id", id)
}

// protocol is OCI's: the HTTP signature, then the rate limit, the body,
// faults, and the REST paths of the Container Engine operations emulated,
// each answer with an opc-request-id.
func (s *Server) protocol() sim.Protocol {
	rt := sim.NewRouter(notEmulated, notEmulated)
	const v = "/" + APIVersion
	for pattern, h := range map[string]sim.Handler{
		"POST " + v + "/nodePools":                        s.createPool,
		"GET " + v + "/nodePools":                         s.listPools,
		v + "/nodePools":                                  methodNotAllowed,
		"GET " + v + "/nodePools/{id}":                    s.getPool,
		"PUT " + v + "/nodePools/{id}":                    s.updatePool,
		"DELETE " + v + "/nodePools/{id}":                 s.deletePool,
		v + "/nodePools/{id}":                             methodNotAllowed,
		"DELETE " + v + "/nodePools/{id}/node/{node}":     s.deleteNode,
		v + "/nodePools/{id}/node/{node}":                 methodNotAllowed,
		"GET " + v + "/nodePoolOptions/{id}":              s.nodePoolOptions,
		"GET /" + ComputeAPIVersion + "/shapes":           s.listShapes,
		"GET " + v + "/workRequests":                      s.listWorks,
		"GET " + v + "/workRequests/{id}":                 s.getWork,
		"GET " + v + "/workRequests/{id}/errors":          s.workErrors,
		"GET " + v + "/workRequests/{id}/logs":            s.workLogs,
		"POST " + v + "/clusters/{id}/addons":             s.installAddon,
		"GET " + v + "/clusters/{id}/addons":              s.listAddons,
		"GET " + v + "/clusters/{id}/addons/{name}":       s.getAddon,
		"PUT " + v + "/clusters/{id}/addons/{name}":       s.updateAddon,
		"DELETE " + v + "/clusters/{id}/addons/{name}":    s.disableAddon,
		"POST " + v + "/clusters/{id}/kubeconfig/content": s.createKubeconfig,
	} {
		rt.Handle(pattern, h)
	}
	return sim.Protocol{Tick: s.tick, Authenticate: s.authenticate, Codec: codec{}, Routes: rt.Serve, Finish: s.requestID}
}

func methodNotAllowed(req *sim.Request) *sim.Reply {
	return failf(http.StatusMethodNotAllowed, "MethodNotAllowed", "Method %s is not allowed on %s.", req.HTTP.Method, req.HTTP.URL.EscapedPath())
}

func notEmulated(req *sim.Request) *sim.Reply {
	return failf(http.StatusNotFound, errNotFound, "kpool cloudsim does not emulate %s %s.", req.HTTP.Method, req.HTTP.URL.EscapedPath())
}

// sortedPools returns the pools of a compartment (and a cluster, when
// given) oldest first.
func (s *Server) sortedPools(compartment, clusterID string) []*pool {
	var out []*pool
	for _, p := range s.pools {
		if p.np.CompartmentId != nil && *p.np.CompartmentId == compartment && (clusterID == "" || p.cluster.ID == clusterID) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].created.Equal(out[j].created) {
			return out[i].created.Before(out[j].created)
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// nodePoolOptions answers GetNodePoolOptions for a cluster (or "all").
func (s *Server) nodePoolOptions(req *sim.Request) *sim.Reply {
	id := req.HTTP.PathValue("id")
	var versions []string
	if id == "all" {
		seen := map[string]bool{}
		for _, c := range s.clusters {
			for _, v := range c.versions() {
				if !seen[v] {
					seen[v] = true
					versions = append(versions, v)
				}
			}
		}
	} else {
		c, ok := s.clusters[id]
		if !ok {
			return notFound("cluster", id)
		}
		versions = c.versions()
	}
	return jsonReply(http.StatusOK, ce.NodePoolOptions{KubernetesVersions: versions,
		Shapes: shapeNames(),
		Images: []string{}, Sources: []ce.NodeSourceOption{}})
}
