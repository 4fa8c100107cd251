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
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool/cloudsim/sim"
)

// APIVersion is the api-version armcontainerservice/v6 v6.6.0 sends. Any
// well-formed api-version is accepted and answered the same way.
const APIVersion = "2025-02-01"

// Options configure a Server.
type Options struct {
	// Engine are the engine's options: clock, operation and node times,
	// latency, rate limit, faults, call log.
	Engine sim.Options
	// Token, when set, is the only bearer token accepted; otherwise any
	// non-empty bearer token is, until an application is registered
	// (AddApp): then only the tokens the emulator issued, and Token.
	Token string
	// PageSize is the number of pools in a page of the list; 0 is 10.
	PageSize int
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
	// clusters is guarded by the engine's lock (its handler, Do).
	clusters map[string]*cluster // key: lower(sub/rg/name)
	// apps are the applications of the Entra ID token endpoint (key:
	// lower(tenant/client), value: secret); issued the access tokens it
	// gave, with their expiry, and issuedOrder the same in order. Guarded
	// by the engine's lock.
	apps        map[string]string
	issued      map[string]time.Time
	issuedOrder []string
}

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{token: o.Token, pageSize: o.PageSize, clusters: map[string]*cluster{}, apps: map[string]string{}, issued: map[string]time.Time{}}
	if s.pageSize <= 0 {
		s.pageSize = 10
	}
	s.Engine = sim.New(o.Engine, s.serve)
	return s
}

// AddCluster adds a managed cluster (in state Succeeded, with no agent
// pools) running Kubernetes version (major.minor.patch) in location.
// Adding one that exists changes its location and version.
func (s *Server) AddCluster(subscription, resourceGroup, name, location, version string) {
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
	s.Do(func(time.Time) {
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
		p := &pool{cluster: c, name: name, props: props, state: stateSucceeded, etag: s.NewID(), ready: int(deref(props.Count))}
		c.pools[strings.ToLower(name)] = p
	})
	return err
}

// Pool returns a copy of a pool as ARM would return it now, with its ready
// node count and the operation in progress; false if there is no such pool.
func (s *Server) Pool(subscription, resourceGroup, clusterName, name string) (st PoolState, found bool) {
	s.Do(func(now time.Time) {
		c, ok := s.clusters[clusterKey(subscription, resourceGroup, clusterName)]
		if !ok {
			return
		}
		p, ok := c.pools[strings.ToLower(name)]
		if !ok {
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

// Mutate changes a pool behind the client's back, as someone using the
// portal or az would: fn gets the pool's properties and may change any of
// them (the read-only ones included); the pool gets a new eTag. When no
// operation is in progress the pool's nodes follow the new count at once.
func (s *Server) Mutate(subscription, resourceGroup, clusterName, name string, fn func(*armcontainerservice.ManagedClusterAgentPoolProfileProperties)) (err error) {
	s.Do(func(time.Time) {
		c, ok := s.clusters[clusterKey(subscription, resourceGroup, clusterName)]
		if !ok {
			err = fmt.Errorf("aks: no cluster %s/%s/%s", subscription, resourceGroup, clusterName)
			return
		}
		p, ok := c.pools[strings.ToLower(name)]
		if !ok {
			err = fmt.Errorf("aks: no agent pool %s in cluster %s", name, clusterName)
			return
		}
		props := cloneProps(p.props)
		props.ProvisioningState, props.ETag = nil, nil
		fn(props)
		if props.ProvisioningState != nil {
			p.state = *props.ProvisioningState
		}
		props.ProvisioningState, props.ETag = nil, nil
		p.props = props
		p.etag = s.NewID()
		if p.op == nil {
			p.ready = max(int(deref(props.Count)), 0)
			if props.PowerState != nil && deref(props.PowerState.Code) == armcontainerservice.CodeStopped {
				p.ready = 0
			}
		}
	})
	return err
}

// serve answers one ARM request, with the ids ARM puts on every answer.
func (s *Server) serve(req *sim.Request) *sim.Reply {
	if tenant, what, ok := entraPath(req.HTTP); ok {
		// Entra ID is another service: ARM's checks, throttling and
		// faults are not its.
		return s.entra(req, tenant, what)
	}
	rep := s.answer(req)
	if !rep.Dropped() {
		rep.Header.Set("x-ms-request-id", s.NewID())
		corr := req.HTTP.Header.Get("x-ms-correlation-request-id")
		if corr == "" {
			corr = s.NewID()
		}
		rep.Header.Set("x-ms-correlation-request-id", corr)
	}
	return rep
}

// answer checks what ARM checks, in its order (authentication,
// throttling, api-version, the body), lets the engine inject a fault, and
// routes the request.
func (s *Server) answer(req *sim.Request) *sim.Reply {
	if rep := s.authenticate(req.HTTP, req.Now); rep != nil {
		return rep
	}
	if ok, secs := req.Throttle(); !ok {
		rate, burst := req.RateLimit()
		rep := errorReply(http.StatusTooManyRequests, "TooManyRequests",
			"The request is being throttled as the limit has been reached for this subscription (%g requests per second, burst %d). Please try again after %d seconds.",
			rate, burst, secs)
		rep.Header.Set("Retry-After", strconv.Itoa(secs))
		return rep
	}
	version := req.HTTP.URL.Query().Get("api-version")
	if version == "" {
		return errorReply(http.StatusBadRequest, "MissingApiVersionParameter",
			"The api-version query parameter (?api-version=) is required for all requests.")
	}
	if !validAPIVersion(version) {
		return errorReply(http.StatusBadRequest, "InvalidApiVersionParameter",
			"The api-version '%s' is invalid. The supported versions are '%s'.", version, APIVersion)
	}
	if errors.Is(req.BodyErr, sim.ErrBodyTooLarge) {
		return errorReply(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The request content is larger than %d bytes.", sim.MaxBody)
	}
	if req.BodyErr != nil {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content could not be read: %v", req.BodyErr)
	}

	switch req.Fault() {
	case sim.Fault500:
		return errorReply(http.StatusInternalServerError, "InternalServerError",
			"Encountered internal server error. Diagnostic information: timestamp '%s', tracking id '%s' (fault injected by kpool cloudsim).",
			req.Now.UTC().Format("20060102T150405Z"), s.NewID())
	case sim.Fault503:
		rep := errorReply(http.StatusServiceUnavailable, "ServiceUnavailable",
			"The service is temporarily unavailable; please retry (fault injected by kpool cloudsim).")
		rep.Header.Set("Retry-After", "1")
		return rep
	case sim.FaultDrop:
		return sim.Drop()
	}
	return s.route(&request{Request: req, version: version, base: req.BaseURL()})
}

// authenticate checks the bearer token; nil means it is accepted.
func (s *Server) authenticate(r *http.Request, now time.Time) *sim.Reply {
	h := r.Header.Get("Authorization")
	if h == "" {
		rep := errorReply(http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
		rep.Header.Set("WWW-Authenticate", `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The authentication failed because of missing 'Authorization' header."`)
		return rep
	}
	scheme, tok, _ := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		rep := errorReply(http.StatusUnauthorized, "AuthenticationFailedInvalidHeader", "Authentication failed. The 'Authorization' header is provided in an invalid format.")
		rep.Header.Set("WWW-Authenticate", `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The authentication failed because of an invalid 'Authorization' header."`)
		return rep
	}
	fixed := s.token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
	expiry, issued := s.issued[tok]
	if !fixed && (s.token != "" || len(s.apps) > 0) && !(issued && now.Before(expiry)) {
		rep := errorReply(http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid.")
		rep.Header.Set("WWW-Authenticate", `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The access token is invalid."`)
		return rep
	}
	return nil
}

// request is a request with what the ARM routes need of it.
type request struct {
	*sim.Request
	version string // api-version
	base    string // https://host
}

// route dispatches on the ARM path. Fixed segments compare
// case-insensitively, as ARM does.
func (s *Server) route(req *request) *sim.Reply {
	seg := strings.Split(strings.Trim(req.HTTP.URL.Path, "/"), "/")
	is := func(i int, want string) bool { return i < len(seg) && strings.EqualFold(seg[i], want) }
	method := req.HTTP.Method
	switch {
	case len(seg) >= 8 && is(0, "subscriptions") && is(2, "resourceGroups") && is(4, "providers") &&
		is(5, "Microsoft.ContainerService") && is(6, "managedClusters"):
		sub, rg, cl := seg[1], seg[3], seg[7]
		rest := seg[8:]
		switch {
		case len(rest) == 0:
			switch method {
			case http.MethodGet:
				return s.getCluster(req, sub, rg, cl)
			case http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost:
				return notImplemented("writing managed clusters")
			}
			return methodNotAllowed(method)
		case len(rest) == 1 && strings.EqualFold(rest[0], "agentPools"):
			if method == http.MethodGet {
				return s.listPools(req, sub, rg, cl)
			}
			return methodNotAllowed(method)
		case len(rest) == 2 && strings.EqualFold(rest[0], "agentPools"):
			switch method {
			case http.MethodGet:
				return s.getPool(req, sub, rg, cl, rest[1])
			case http.MethodPut:
				return s.putPool(req, sub, rg, cl, rest[1])
			case http.MethodDelete:
				return s.deletePool(req, sub, rg, cl, rest[1])
			}
			return methodNotAllowed(method)
		case len(rest) > 2 && strings.EqualFold(rest[0], "agentPools"):
			return notImplemented("agentPools/" + strings.Join(rest[2:], "/"))
		}
		return notImplemented("managedClusters/" + strings.Join(rest, "/"))
	case len(seg) == 8 && is(0, "subscriptions") && is(2, "providers") && is(3, "Microsoft.ContainerService") &&
		is(4, "locations") && (is(6, "operations") || is(6, "operationresults")):
		if method != http.MethodGet {
			return methodNotAllowed(method)
		}
		if is(6, "operations") {
			return s.operationStatus(req, seg[1], seg[5], seg[7])
		}
		return s.operationResult(req, seg[1], seg[5], seg[7])
	}
	return errorReply(http.StatusNotFound, "InvalidResourceType",
		"The resource path '%s' is not one the kpool cloudsim AKS emulator serves.", req.HTTP.URL.Path)
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
	out := make([]*pool, 0, len(c.pools))
	for _, p := range c.pools {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].name) < strings.ToLower(out[j].name) })
	return out
}
