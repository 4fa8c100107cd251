// Package kube is a minimal Kubernetes API for the emulators' clusters:
// each emulated cluster gets an object store served under a path prefix of
// its emulator's TLS listener (https://127.0.0.1:PORT/<prefix>/<cluster>),
// a bearer token, and a kubeconfig pointing at both, so that a client built
// with client-go from the kubeconfig a cloud's API returns reaches it.
//
// What it serves, in the API server's JSON: discovery, core/v1 Nodes and
// Pods, policy/v1 PodDisruptionBudgets, apps/v1 Deployments and
// DaemonSets (each: list with selectors, get, watch, create, update,
// patch, delete), the Pods' eviction subresource, Tables of nodes, pods,
// PDBs and Deployments for kubectl get (see routes.go, objects.go,
// watch.go, evict.go, tables.go and README.md).
//
// Behind the API, a few controllers run synchronously after every write,
// inside the API's lock (workloads.go, schedule.go, kubelet.go): the
// Deployment controller keeps each Deployment's replicas as pods, the
// scheduler binds pending pods to nodes that fit them and the kubelet
// starts them at once, the pod GC deletes the pods of a node deleted.
//
// The rules, each from the Kubernetes API conventions
// (community/contributors/devel/sig-architecture/api-conventions.md) and
// the API reference (kubernetes.io/docs/reference/using-api/api-concepts/),
// with the package's README.md listing them:
//   - metadata.resourceVersion is opaque to clients and changes on every
//     write; a PUT carrying one that is not the stored object's is refused
//     with 409 and a Status of reason Conflict ("Concurrency Control and
//     Consistency"); a PUT without one is unconditional, as the API server
//     allows for Deployments (its strategy's AllowUnconditionalUpdate).
//   - metadata.generation starts at 1 and is raised when the spec changes
//     ("metadata.generation ... incremented on every change to spec").
//   - errors are a metav1.Status (kind Status, apiVersion v1) with the
//     reason and code client-go's errors package tells apart (NotFound 404,
//     AlreadyExists 409, Conflict 409, Unauthorized 401, BadRequest 400,
//     MethodNotAllowed 405), built with k8s.io/apimachinery's errors, as
//     the API server builds them.
//   - a PUT's name and namespace must be the URL's (400 BadRequest).
//   - a request without the cluster's bearer token is 401 Unauthorized.
//
// Bodies are read as JSON, YAML or Kubernetes' protobuf (client-go's
// typed clients send protobuf for built-in kinds by default; the API
// server takes all three); answers are JSON, which client-go's Accept
// header lists after protobuf.
//
// Not served: server-side apply and the rest README.md lists; unknown members of a body
// are dropped (the API server's default fieldValidation is Warn, which
// also keeps the request; the warning header is not sent).
package kube

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Deployments is the group and resource of apps/v1 Deployments, as the API
// server names them in errors (deployments.apps).
var Deployments = schema.GroupResource{Group: "apps", Resource: "deployments"}

// API is the Kubernetes API of an emulator's clusters. Its methods are
// safe for concurrent use; it has its own lock, never the engine's, so that
// an emulator may call it under the engine's lock.
type API struct {
	prefix string

	mu       sync.Mutex
	ca       []byte
	rv       uint64 // the store's revision: every write raises it
	clusters map[string]*cluster
	refresh  func(id string) // SetRefresh's
}

type cluster struct {
	token    string
	objs     map[string]map[string]object // resource → namespace/name → object
	events   []event                      // the last writes, oldest first
	floor    uint64                       // events at or before it are gone
	watchers map[*watcher]struct{}
	applied  map[string]applied      // node name → what SyncNodes last put on it
	check    func(token string) bool // SetTokenCheck's
	// what the controllers have yet to act on (workloads.go): nodes and
	// Deployments deleted since they last ran, and whether they run.
	goneNodes  []string
	goneOwners []types.UID
	settling   bool
}

// New returns an API served under prefix (such as "/k8s"): a cluster's
// server URL is the emulator's base URL, the prefix and the cluster's id.
func New(prefix string) *API {
	return &API{prefix: "/" + strings.Trim(prefix, "/"), clusters: map[string]*cluster{}}
}

// SetCA sets the PEM of the certificate authority a kubeconfig tells its
// clients to trust: the one that signed the emulator's TLS certificate.
func (a *API) SetCA(pem []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ca = slices.Clone(pem)
}

// AddCluster gives a cluster an API (with a fresh token) if it has none,
// and returns its token.
func (a *API) AddCluster(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cluster(id).token
}

// cluster returns the cluster of id, made on first use; a.mu is held.
func (a *API) cluster(id string) *cluster {
	c, ok := a.clusters[id]
	if !ok {
		var b [24]byte
		_, _ = rand.Read(b[:])
		c = &cluster{token: hex.EncodeToString(b[:]), watchers: map[*watcher]struct{}{}}
		a.clusters[id] = c
	}
	return c
}

// Handles reports whether a request path is this API's.
func (a *API) Handles(path string) bool { return strings.HasPrefix(path, a.prefix+"/") }

// ServerURL is the server of a cluster's API on the emulator at base
// (https://host:port).
func (a *API) ServerURL(base, id string) string {
	return strings.TrimSuffix(base, "/") + a.prefix + "/" + id
}

// Kubeconfig returns the kubeconfig of a cluster's API on the emulator at
// base: its server URL, the CA set with SetCA and the cluster's token.
func (a *API) Kubeconfig(base, id, name string) string {
	a.mu.Lock()
	ca, token := a.ca, a.cluster(id).token
	a.mu.Unlock()
	return kubeconfig(a.ServerURL(base, id), name, ca, token)
}

// Deployment returns a copy of a stored Deployment.
func (a *API) Deployment(id, namespace, name string) (*appsv1.Deployment, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, ok := a.cluster(id).objects(depRes)[namespace+"/"+name]
	if !ok {
		return nil, false
	}
	return o.DeepCopyObject().(*appsv1.Deployment), true
}

// Create stores a new Deployment in a cluster, as a POST would: an
// existing one is an AlreadyExists error. The controllers then act on it
// (its pods are made and scheduled) before Create returns.
func (a *API) Create(id string, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cluster(id)
	defer a.settle(c)
	in := d.DeepCopy()
	in.ResourceVersion = ""
	o, err := a.createObj(c, depRes, in)
	if err != nil {
		return nil, err
	}
	return o.(*appsv1.Deployment), nil
}

// Update replaces a stored Deployment, as a PUT would (Conflict on a
// stale resourceVersion, NotFound when there is none; the generation
// raised when the spec changes, the status kept).
func (a *API) Update(id string, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cluster(id)
	defer a.settle(c)
	o, err := a.updateObj(c, depRes, d, true)
	if err != nil {
		return nil, err
	}
	return o.(*appsv1.Deployment), nil
}

var _ http.Handler = (*API)(nil)
