// Package aks emulates the Azure Resource Manager API of AKS agent pools
// (Microsoft.ContainerService/managedClusters/agentPools, api-version
// 2025-02-01) well enough for the unmodified official Go SDK
// (armcontainerservice/v6) to create, read, list, update and delete agent
// pools against it, long-running operations included.
//
// Time is simulated: every change is computed from Options.Clock when a
// request arrives, so tests drive the emulator with a cloudsim.ManualClock
// and never sleep. Rate limits and faults (5xx, dropped connections,
// operations that end Failed) are injected deterministically from a seed.
// What the emulator does not reproduce of the real service is listed in
// cloudsim/README.md.
package aks

import (
	"crypto/subtle"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool/cloudsim/internal/clock"
)

// APIVersion is the api-version armcontainerservice/v6 v6.6.0 sends. Any
// well-formed api-version is accepted and answered the same way.
const APIVersion = "2025-02-01"

// Options configure a Server.
type Options struct {
	// Clock is the emulator's time; nil is the wall clock.
	Clock clock.Clock
	// An operation on a pool takes OperationTime plus NodeTime for each
	// node it adds or removes (each node of the pool for an upgrade).
	OperationTime, NodeTime time.Duration
	// RateLimit is the requests per second allowed (a token bucket of
	// Burst tokens refilled on the clock); beyond it the answer is 429
	// with Retry-After. 0 is unlimited; Burst 0 is max(1, RateLimit).
	RateLimit float64
	Burst     int
	// FaultRate (0..1) is the fraction of requests that fail: 500, 503,
	// a dropped connection, or (PUT and DELETE) an accepted operation that
	// later ends Failed. Seed makes the choice deterministic.
	FaultRate float64
	Seed      int64
	// Token, when set, is the only bearer token accepted; otherwise any
	// non-empty bearer token is.
	Token string
	// PageSize is the number of pools in a page of the list; 0 is 10.
	PageSize int
	// MaxCalls bounds the call log: past it the oldest calls are dropped.
	// 0 keeps every call (tests); a long-running emulator should set it.
	MaxCalls int
}

// Call is one request the emulator answered (or dropped).
type Call struct {
	Time   time.Time // on the emulator's clock
	Method string
	Path   string
	Query  string // raw query
	// Status is the HTTP status answered; 0 for a dropped connection.
	Status int
	// Created is true for a PUT that created a pool.
	Created bool
	// Fault is the fault injected: "" (none), "500", "503", "drop", or
	// "fail" (an accepted operation that will end Failed).
	Fault string
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
}

// Server is the emulator. It implements http.Handler; mount it at the
// root of a TLS server (cloudsim.TLSServer) since ARM paths are absolute.
type Server struct {
	mu       sync.Mutex
	clock    clock.Clock
	opTime   time.Duration
	nodeTime time.Duration
	token    string
	pageSize int

	rateLimit float64
	burst     int
	tokens    float64
	lastFill  time.Time
	filled    bool

	faultRate float64
	faults    *rand.Rand // fault decisions only
	ids       *rand.Rand // ids and etags

	clusters map[string]*cluster   // key: lower(sub/rg/name)
	ops      map[string]*operation // key: lower(id)
	active   map[*operation]bool   // operations in progress
	finished []*operation          // oldest first, for pruning
	calls    []Call
	maxCalls int
}

// keptOperations is how many finished operations keep answering their
// status URLs; older ones answer 404.
const keptOperations = 10000

// New returns an emulator with no clusters; add them with AddCluster.
func New(o Options) *Server {
	s := &Server{
		clock:    o.Clock,
		opTime:   max(o.OperationTime, 0),
		nodeTime: max(o.NodeTime, 0),
		token:    o.Token,
		pageSize: o.PageSize,
		maxCalls: max(o.MaxCalls, 0),
		faults:   rand.New(rand.NewSource(o.Seed)),
		ids:      rand.New(rand.NewSource(o.Seed ^ 0x6b706f6f6c)),
		clusters: map[string]*cluster{},
		ops:      map[string]*operation{},
		active:   map[*operation]bool{},
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if s.pageSize <= 0 {
		s.pageSize = 10
	}
	s.setRateLimit(o.RateLimit, o.Burst)
	s.faultRate = clamp01(o.FaultRate)
	return s
}

// AddCluster adds a managed cluster (in state Succeeded, with no agent
// pools) running Kubernetes version (major.minor.patch) in location.
// Adding one that exists changes its location and version.
func (s *Server) AddCluster(subscription, resourceGroup, name, location, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := clusterKey(subscription, resourceGroup, name)
	if c, ok := s.clusters[key]; ok {
		c.location, c.version = normLocation(location), version
		return
	}
	s.clusters[key] = &cluster{
		subscription: subscription, resourceGroup: resourceGroup, name: name,
		location: normLocation(location), version: version, pools: map[string]*pool{},
	}
}

// AddPool adds an agent pool that is already provisioned (Succeeded, all
// nodes ready), as the real service would have it after a create with
// these properties: the same defaults and checks apply.
func (s *Server) AddPool(subscription, resourceGroup, clusterName string, ap armcontainerservice.AgentPool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	c, ok := s.clusters[clusterKey(subscription, resourceGroup, clusterName)]
	if !ok {
		return fmt.Errorf("aks: no cluster %s/%s/%s", subscription, resourceGroup, clusterName)
	}
	if ap.Name == nil {
		return fmt.Errorf("aks: AddPool needs a pool name")
	}
	name := *ap.Name
	if _, exists := c.pools[strings.ToLower(name)]; exists {
		return fmt.Errorf("aks: pool %s exists", name)
	}
	props, rep := s.desired(c, name, nil, ap.Properties)
	if rep != nil {
		return fmt.Errorf("aks: %s", rep.body)
	}
	p := &pool{cluster: c, name: name, props: props, state: stateSucceeded, etag: s.newID(), ready: int(deref(props.Count))}
	c.pools[strings.ToLower(name)] = p
	return nil
}

// Calls returns a copy of the log of every request, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Pool returns a copy of a pool as ARM would return it now, with its ready
// node count and the operation in progress; false if there is no such pool.
func (s *Server) Pool(subscription, resourceGroup, clusterName, name string) (PoolState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	c, ok := s.clusters[clusterKey(subscription, resourceGroup, clusterName)]
	if !ok {
		return PoolState{}, false
	}
	p, ok := c.pools[strings.ToLower(name)]
	if !ok {
		return PoolState{}, false
	}
	st := PoolState{AgentPool: p.view(), ReadyNodes: p.readyAt(now, s.nodeTime)}
	if p.op != nil {
		st.Operation, st.OperationID = p.op.kind, p.op.id
	}
	return st, true
}

// Mutate changes a pool behind the client's back, as someone using the
// portal or az would: fn gets the pool's properties and may change any of
// them (the read-only ones included); the pool gets a new eTag. When no
// operation is in progress the pool's nodes follow the new count at once.
func (s *Server) Mutate(subscription, resourceGroup, clusterName, name string, fn func(*armcontainerservice.ManagedClusterAgentPoolProfileProperties)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	c, ok := s.clusters[clusterKey(subscription, resourceGroup, clusterName)]
	if !ok {
		return fmt.Errorf("aks: no cluster %s/%s/%s", subscription, resourceGroup, clusterName)
	}
	p, ok := c.pools[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("aks: no agent pool %s in cluster %s", name, clusterName)
	}
	props := cloneProps(p.props)
	props.ProvisioningState, props.ETag = nil, nil
	fn(props)
	if props.ProvisioningState != nil {
		p.state = *props.ProvisioningState
	}
	props.ProvisioningState, props.ETag = nil, nil
	p.props = props
	p.etag = s.newID()
	if p.op == nil {
		p.ready = max(int(deref(props.Count)), 0)
		if props.PowerState != nil && deref(props.PowerState.Code) == armcontainerservice.CodeStopped {
			p.ready = 0
		}
	}
	return nil
}

// SetFaultRate changes the fault rate (0..1).
func (s *Server) SetFaultRate(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultRate = clamp01(rate)
}

// SetRateLimit changes the rate limit (requests per second, 0 for none)
// and burst; the bucket starts full.
func (s *Server) SetRateLimit(rps float64, burst int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setRateLimit(rps, burst)
}

func (s *Server) setRateLimit(rps float64, burst int) {
	if rps < 0 || math.IsNaN(rps) {
		rps = 0
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(rps)))
	}
	s.rateLimit, s.burst = rps, burst
	s.tokens, s.filled = float64(burst), false
}

// take takes a token from the bucket; when there is none it returns how
// long until there is.
func (s *Server) take(now time.Time) (bool, time.Duration) {
	if s.rateLimit <= 0 {
		return true, 0
	}
	if s.filled && now.After(s.lastFill) {
		s.tokens = math.Min(float64(s.burst), s.tokens+now.Sub(s.lastFill).Seconds()*s.rateLimit)
	}
	if !s.filled || now.After(s.lastFill) {
		s.lastFill, s.filled = now, true
	}
	if s.tokens >= 1 {
		s.tokens--
		return true, 0
	}
	return false, time.Duration((1 - s.tokens) / s.rateLimit * float64(time.Second))
}

const maxBody = 4 << 20

// ServeHTTP answers one ARM request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, rerr := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	s.mu.Lock()
	now := s.clock.Now()
	s.advance(now)
	rep := s.handle(now, r, body, rerr)
	call := Call{Time: now, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: rep.status, Created: rep.created, Fault: rep.fault}
	if rep.drop {
		call.Status = 0
	} else {
		rep.header.Set("x-ms-request-id", s.newID())
		corr := r.Header.Get("x-ms-correlation-request-id")
		if corr == "" {
			corr = s.newID()
		}
		rep.header.Set("x-ms-correlation-request-id", corr)
	}
	s.calls = append(s.calls, call)
	if s.maxCalls > 0 && len(s.calls) > s.maxCalls {
		keep := max(s.maxCalls/2, 1)
		s.calls = append([]Call(nil), s.calls[len(s.calls)-keep:]...)
	}
	s.mu.Unlock()

	if rep.drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // HTTP/2 or no hijacking: abort the stream
	}
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	w.Header().Set("Cache-Control", "no-cache")
	if len(rep.body) > 0 || rep.status != http.StatusNoContent {
		w.Header().Set("Content-Length", strconv.Itoa(len(rep.body)))
	}
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead && len(rep.body) > 0 {
		_, _ = w.Write(rep.body)
	}
}

// handle answers a request under the lock: authentication, throttling,
// api-version, fault injection, then the route.
func (s *Server) handle(now time.Time, r *http.Request, body []byte, rerr error) *reply {
	if rep := s.authenticate(r); rep != nil {
		return rep
	}
	if ok, wait := s.take(now); !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		rep := errorReply(http.StatusTooManyRequests, "TooManyRequests",
			"The request is being throttled as the limit has been reached for this subscription (%g requests per second, burst %d). Please try again after %d seconds.",
			s.rateLimit, s.burst, secs)
		rep.header.Set("Retry-After", strconv.Itoa(secs))
		return rep
	}
	q := r.URL.Query()
	version := q.Get("api-version")
	if version == "" {
		return errorReply(http.StatusBadRequest, "MissingApiVersionParameter",
			"The api-version query parameter (?api-version=) is required for all requests.")
	}
	if !validAPIVersion(version) {
		return errorReply(http.StatusBadRequest, "InvalidApiVersionParameter",
			"The api-version '%s' is invalid. The supported versions are '%s'.", version, APIVersion)
	}
	if rerr != nil {
		return errorReply(http.StatusBadRequest, "InvalidRequestContent", "The request content could not be read: %v", rerr)
	}
	if len(body) > maxBody {
		return errorReply(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The request content is larger than %d bytes.", maxBody)
	}

	fault := s.rollFault(r.Method)
	switch fault {
	case "500":
		rep := errorReply(http.StatusInternalServerError, "InternalServerError",
			"Encountered internal server error. Diagnostic information: timestamp '%s', tracking id '%s' (fault injected by kpool cloudsim).",
			now.UTC().Format("20060102T150405Z"), s.newID())
		rep.fault = fault
		return rep
	case "503":
		rep := errorReply(http.StatusServiceUnavailable, "ServiceUnavailable",
			"The service is temporarily unavailable; please retry (fault injected by kpool cloudsim).")
		rep.header.Set("Retry-After", "1")
		rep.fault = fault
		return rep
	case "drop":
		return &reply{drop: true, fault: fault, header: http.Header{}}
	}

	req := &request{r: r, now: now, body: body, version: version, failOp: fault == "fail", base: baseURL(r)}
	rep := s.route(req)
	if req.failStarted {
		rep.fault = "fail"
	}
	return rep
}

// authenticate checks the bearer token; nil means it is accepted.
func (s *Server) authenticate(r *http.Request) *reply {
	h := r.Header.Get("Authorization")
	if h == "" {
		rep := errorReply(http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
		rep.header.Set("WWW-Authenticate", `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The authentication failed because of missing 'Authorization' header."`)
		return rep
	}
	scheme, tok, _ := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		rep := errorReply(http.StatusUnauthorized, "AuthenticationFailedInvalidHeader", "Authentication failed. The 'Authorization' header is provided in an invalid format.")
		rep.header.Set("WWW-Authenticate", `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The authentication failed because of an invalid 'Authorization' header."`)
		return rep
	}
	if s.token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1 {
		rep := errorReply(http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid.")
		rep.header.Set("WWW-Authenticate", `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The access token is invalid."`)
		return rep
	}
	return nil
}

// rollFault decides whether this request fails and how.
func (s *Server) rollFault(method string) string {
	if s.faultRate <= 0 {
		return ""
	}
	if s.faults.Float64() >= s.faultRate {
		return ""
	}
	kinds := []string{"500", "503", "drop"}
	if method == http.MethodPut || method == http.MethodDelete {
		kinds = append(kinds, "fail")
	}
	return kinds[s.faults.Intn(len(kinds))]
}

// request is what a route handler needs of a request.
type request struct {
	r           *http.Request
	now         time.Time
	body        []byte
	version     string
	base        string // https://host
	failOp      bool   // the operation this request starts ends Failed
	failStarted bool   // set when such an operation was started
}

// route dispatches on the ARM path. Fixed segments compare
// case-insensitively, as ARM does.
func (s *Server) route(req *request) *reply {
	seg := strings.Split(strings.Trim(req.r.URL.Path, "/"), "/")
	is := func(i int, want string) bool { return i < len(seg) && strings.EqualFold(seg[i], want) }
	method := req.r.Method
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
		"The resource path '%s' is not one the kpool cloudsim AKS emulator serves.", req.r.URL.Path)
}

func notImplemented(what string) *reply {
	return errorReply(http.StatusNotImplemented, "NotImplemented", "kpool cloudsim does not emulate %s.", what)
}

func methodNotAllowed(method string) *reply {
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

func baseURL(r *http.Request) string {
	scheme := "https"
	if r.TLS == nil {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}

// newID returns a random-looking, seed-determined UUID.
func (s *Server) newID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(s.ids.Intn(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func clamp01(f float64) float64 {
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return math.Min(f, 1)
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
