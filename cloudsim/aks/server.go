// Package aks emulates the Azure Resource Manager API of AKS agent pools
// (Microsoft.ContainerService/managedClusters/agentPools, api-version
// 2025-02-01) well enough for the unmodified official Go SDK
// (armcontainerservice/v6) to create, read, list, update and delete agent
// pools against it, long-running operations included.
//
// This package holds the ARM wire protocol only: routes, error bodies,
// Azure-AsyncOperation and Location operations, and AKS's rules. Time,
// latency, rate limits, faults (5xx, dropped connections, operations that
// end Failed), operations and the call log are the engine's (cloudsim/sim):
// tests drive it with a sim.ManualClock and never sleep. What the emulator
// does not reproduce of the real service is listed in cloudsim/README.md.
package aks

import (
	"cmp"
	"crypto/subtle"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/sim"
)

// APIVersion is the api-version armcontainerservice/v6 v6.6.0 sends. Any
// well-formed api-version is accepted and answered the same way.
const APIVersion = "2025-02-01"

// Options configure a Server.
type Options struct {
	// Engine are the engine's options (sim.Options).
	Engine sim.Options
	// Token, when set, is the only bearer token accepted; otherwise any
	// non-empty bearer token is, until an application is registered
	// (AddApp): then only the tokens the emulator issued, and Token.
	Token string
	// PageSize is the number of pools (and SKUs) in a page of a list; 0
	// is 100. The model (AgentPoolListResult) pages with nextLink but sets
	// no size; a cluster holds at most 100 agent pools (AKS's quota), so
	// by default a cluster's pools are one page. Tests set a small size to
	// make kpool follow nextLink.
	PageSize int
	// Limits are the subscription's quotas and AKS's limits (quota.go).
	Limits Limits
}

// PoolState is a pool as ARM would return it, plus what only the
// emulator knows.
type PoolState struct {
	armcontainerservice.AgentPool
	// ReadyNodes is the number of nodes that exist now: it moves one node
	// at a time towards count while an operation runs, whereas ARM
	// reports count as the desired count at once.
	ReadyNodes int
	// Operation is the provisioning state of the operation in progress
	// (Creating, Updating, Scaling, Upgrading, Deleting); "" when idle.
	Operation string
	// OperationID is the id of that operation; "" when idle.
	OperationID string
	// ProvisioningError is why the last operation failed ("code: message
	// (details)"), as properties.status.provisioningError says it from
	// api-version 2025-05-01; "" when it did not.
	ProvisioningError string
}

// Server is the emulator: the ARM protocol on a sim.Engine, whose
// methods (ServeHTTP, Calls, SetFaultRate, SetRateLimit, SetLatency) it
// has. Serve it at the root of a TLS server (sim.TLSServer), since ARM
// paths are absolute.
type Server struct {
	*sim.Engine
	token    string
	pageSize int
	limits   Limits
	// clusters is guarded by the engine's lock (its handler, Do).
	clusters map[string]*cluster // key: lower(sub/rg/name)
	// apps are the applications of the Entra ID token endpoint (key:
	// lower(tenant/client), value: secret); issued the access tokens it
	// gave, with their expiry, and issuedOrder the same in order. Guarded
	// by the engine's lock.
	apps        map[string]string
	issued      map[string]time.Time
	issuedOrder []string
	// deniedSKUs are the subscriptions (lower case) whose Resource SKUs
	// list answers 403 (DenySKUs). Guarded by the engine's lock.
	deniedSKUs map[string]bool
	// skuPageSize is the number of SKUs in a page of their list.
	skuPageSize int
	// scopes are the scopes the Entra ID endpoint issued each token for.
	// Guarded by the engine's lock.
	scopes map[string]string
	// kube is the clusters' Kubernetes API, under KubePrefix (kubeapi.go);
	// rewrite, when set, changes the kubeconfigs the credential actions
	// answer (SetKubeconfigRewrite; guarded by the engine's lock).
	kube    *kube.API
	rewrite func(string) string
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{token: o.Token, pageSize: cmp.Or(max(o.PageSize, 0), defaultPools), limits: o.Limits,
		clusters: map[string]*cluster{}, apps: map[string]string{}, issued: map[string]time.Time{},
		deniedSKUs: map[string]bool{}, skuPageSize: cmp.Or(max(o.PageSize, 0), 10), scopes: map[string]string{},
		kube: kube.New(KubePrefix)}
	// Entra ID is another service: ARM's checks are not its.
	s.Engine = sim.New(o.Engine, sim.Protocol{Bypass: s.entra, Authenticate: s.authenticate, Check: checkAPIVersion,
		Codec: codec{}, Routes: s.route, Finish: s.finish})
	s.kube.SetRefresh(s.refreshKube)
	return s
}

// AddCluster adds a managed cluster (in state Succeeded, with no agent
// pools) running Kubernetes version (major.minor.patch) in location.
// Adding one that exists changes its location and version.
func (s *Server) AddCluster(subscription, resourceGroup, name, location, version string) {
	s.kube.AddCluster(s.KubeID(subscription, resourceGroup, name))
	s.Do(func(time.Time) {
		key := clusterKey(subscription, resourceGroup, name)
		if c, ok := s.clusters[key]; ok {
			c.location, c.version = normLocation(location), version
			return
		}
		s.clusters[key] = &cluster{
			subscription: subscription, resourceGroup: resourceGroup, name: name,
			location: normLocation(location), version: version, pools: map[string]*pool{},
		}
	})
}

// AddPool adds an agent pool that is already provisioned (Succeeded, all
// nodes ready), as the real service would have it after a create with
// these properties: the same defaults and checks apply.
func (s *Server) AddPool(subscription, resourceGroup, clusterName string, ap armcontainerservice.AgentPool) (err error) {
	s.Do(func(now time.Time) {
		defer s.syncNodes(now)
		c, ok := s.clusters[clusterKey(subscription, resourceGroup, clusterName)]
		if !ok {
			err = fmt.Errorf("aks: no cluster %s/%s/%s", subscription, resourceGroup, clusterName)
			return
		}
		if ap.Name == nil {
			err = fmt.Errorf("aks: AddPool needs a pool name")
			return
		}
		name := *ap.Name
		if _, exists := c.pools[strings.ToLower(name)]; exists {
			err = fmt.Errorf("aks: pool %s exists", name)
			return
		}
		props, rep := s.desired(c, name, nil, ap.Properties)
		if rep != nil {
			err = fmt.Errorf("aks: %s", rep.Body)
			return
		}
		p := &pool{cluster: c, name: name, props: props, state: stateSucceeded, etag: s.NewID()}
		p.setReady(int(ptr.Deref(props.Count, 0)))
		s.settle(p)
		c.pools[strings.ToLower(name)] = p
	})
	return err
}

// Pool returns a copy of a pool as ARM would return it now, with its ready
// node count and the operation in progress; false if there is no such pool.
func (s *Server) Pool(subscription, resourceGroup, clusterName, name string) (st PoolState, found bool) {
	s.Do(func(now time.Time) {
		p, err := s.poolOf(subscription, resourceGroup, clusterName, name)
		if err != nil {
			return
		}
		st, found = PoolState{AgentPool: p.view(), ReadyNodes: p.readyAt(now)}, true
		if p.op != nil {
			st.Operation, st.OperationID = p.op.Kind, p.op.ID
		}
		if p.failure != nil {
			st.ProvisioningError = p.failure.String()
		}
	})
	return st, found
}

// poolOf finds a pool for the emulator's own methods, under the engine's
// lock (Do).
func (s *Server) poolOf(subscription, resourceGroup, clusterName, name string) (*pool, error) {
	c, ok := s.clusters[clusterKey(subscription, resourceGroup, clusterName)]
	if !ok {
		return nil, fmt.Errorf("aks: no cluster %s/%s/%s", subscription, resourceGroup, clusterName)
	}
	p, ok := c.pools[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("aks: no agent pool %s in cluster %s", name, clusterName)
	}
	return p, nil
}

// Mutate changes a pool behind the client's back, as someone using the
// portal or az would: fn gets the pool's properties and may change any of
// them (the read-only ones included); the pool gets a new eTag. When no
// operation is in progress the pool's nodes follow the new count at once.
func (s *Server) Mutate(subscription, resourceGroup, clusterName, name string, fn func(*armcontainerservice.ManagedClusterAgentPoolProfileProperties)) (err error) {
	s.Do(func(now time.Time) {
		defer s.syncNodes(now)
		var p *pool
		if p, err = s.poolOf(subscription, resourceGroup, clusterName, name); err != nil {
			return
		}
		props := sim.CloneJSON(p.props)
		props.ProvisioningState, props.ETag = nil, nil
		fn(props)
		if props.ProvisioningState != nil {
			p.state = *props.ProvisioningState
		}
		props.ProvisioningState, props.ETag = nil, nil
		p.props = props
		p.etag = s.NewID()
		if p.op == nil {
			p.setReady(max(nodesOf(props), 0))
			s.settle(p)
		}
	})
	return err
}

// DeletePool deletes a pool behind the client's back at once, as someone
// using the portal or az would (and as if its delete had ended): the
// pool is gone from the next answer. A pool in an operation is not
// deleted (an error says so): let the operation end first.
func (s *Server) DeletePool(subscription, resourceGroup, clusterName, name string) (err error) {
	s.Do(func(now time.Time) {
		defer s.syncNodes(now)
		var p *pool
		if p, err = s.poolOf(subscription, resourceGroup, clusterName, name); err != nil {
			return
		}
		if p.op != nil {
			err = fmt.Errorf("aks: agent pool %s is in an operation (%s)", name, p.op.Kind)
			return
		}
		s.releaseAll(p)
		delete(p.cluster.pools, strings.ToLower(p.name))
	})
	return err
}

// requestIDs puts on an answer the ids ARM puts on every one: a new
// request id, and the client's correlation id (or a new one).
func (s *Server) requestIDs(req *sim.Request, rep *sim.Reply) {
	rep.Header.Set("x-ms-request-id", s.NewID())
	corr := req.HTTP.Header.Get("x-ms-correlation-request-id")
	if corr == "" {
		corr = s.NewID()
	}
	rep.Header.Set("x-ms-correlation-request-id", corr)
}

// checkAPIVersion refuses a request without a well-formed api-version, as
// ARM does after throttling and before it reads the body.
func checkAPIVersion(req *sim.Request) *sim.Reply {
	version := req.HTTP.URL.Query().Get("api-version")
	if version == "" {
		return errorReply(http.StatusBadRequest, "MissingApiVersionParameter",
			"The api-version query parameter (?api-version=) is required for all requests.")
	}
	if !validAPIVersion(version) {
		return errorReply(http.StatusBadRequest, "InvalidApiVersionParameter",
			"The api-version '%s' is invalid. The supported versions are '%s'.", version, APIVersion)
	}
	return nil
}

// wwwAuthenticate is ARM's challenge for a request it did not
// authenticate, saying why.
func wwwAuthenticate(rep *sim.Reply, why string) *sim.Reply {
	rep.Header.Set("WWW-Authenticate", `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="`+why+`"`)
	return rep
}

// authenticate checks the bearer token; nil means it is accepted.
func (s *Server) authenticate(req *sim.Request) *sim.Reply {
	h := req.HTTP.Header.Get("Authorization")
	if h == "" {
		return wwwAuthenticate(errorReply(http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing."),
			"The authentication failed because of missing 'Authorization' header.")
	}
	scheme, tok, _ := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return wwwAuthenticate(errorReply(http.StatusUnauthorized, "AuthenticationFailedInvalidHeader", "Authentication failed. The 'Authorization' header is provided in an invalid format."),
			"The authentication failed because of an invalid 'Authorization' header.")
	}
	fixed := s.token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
	expiry, issued := s.issued[tok]
	if !fixed && (s.token != "" || len(s.apps) > 0) && !(issued && req.Now.Before(expiry)) {
		return wwwAuthenticate(errorReply(http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid."),
			"The access token is invalid.")
	}
	return nil
}

func notImplemented(what string) *sim.Reply {
	return errorReply(http.StatusNotImplemented, "NotImplemented", "kpool cloudsim does not emulate %s.", what)
}

func methodNotAllowed(method string) *sim.Reply {
	return errorReply(http.StatusMethodNotAllowed, "MethodNotAllowed", "The HTTP method '%s' is not supported for this resource.", method)
}

// validAPIVersion accepts yyyy-mm-dd with an optional -preview suffix.
func validAPIVersion(v string) bool {
	d, suffix, _ := strings.Cut(v, "-preview")
	if suffix != "" {
		return false
	}
	_, err := time.Parse("2006-01-02", d)
	return err == nil
}

func clusterKey(sub, rg, name string) string {
	return strings.ToLower(sub + "/" + rg + "/" + name)
}

func normLocation(l string) string { return strings.ToLower(strings.ReplaceAll(l, " ", "")) }

// sortedPools returns a cluster's pools by name.
func (c *cluster) sortedPools() []*pool {
	return slices.SortedFunc(maps.Values(c.pools), func(a, b *pool) int { return strings.Compare(a.key(), b.key()) })
}
