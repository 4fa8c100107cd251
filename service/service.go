package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/jsondoc"
)

// Service carries out every operation of the API on a Store: it decides who
// may do what, validates, merges updates, raises generations, aggregates
// status and runs the two-phase delete. The HTTP API and in-process
// controllers both call it, so there is one set of rules.
type Service struct {
	Store kpool.Store
	Now   func() time.Time
	// Platforms check every cluster and pool write against what its
	// platform's rules and its provider can do, and name pools at their
	// providers.
	Platforms kpool.Platforms
	// Endpoints are the endpoints any user may give a cluster; admins may
	// give others.
	Endpoints kpool.Origins
	// Credentials say which named credentials a caller may give a cluster;
	// nil means there are none and spec.credential must stay empty.
	Credentials kpool.CredentialGrants
	// Nodes reads clusters' Kubernetes nodes (PoolNodes, ClusterNodes), and
	// Kube reaches their API servers for the read-only proxy; nil: those
	// calls answer NOT_IMPLEMENTED.
	Nodes kpool.NodeSource
	Kube  kpool.KubeProxy

	// clusters caches the clusters pool creates are checked against.
	clusters clusterCache
	// facts caches what clusters offer, which pool writes are checked
	// against (preflight).
	facts factsCache
	// updates queues concurrent updates of a pool (see UpdateNodePoolPlan).
	updatesMu sync.Mutex
	updates   map[string]*updateQueue
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// write runs fn in one store transaction; in a dry run (dry) the
// transaction is rolled back after fn succeeds, so nothing is stored.
func (s *Service) write(ctx context.Context, dry bool, fn func(kpool.Tx) error) error {
	if !dry {
		return s.Store.Write(ctx, fn)
	}
	err := s.Store.Write(ctx, func(tx kpool.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if err := tx.Flush(); err != nil {
			return err // a conflict the real write would meet
		}
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return err
}

// insert is write for a function that reads nothing in its transaction: the
// store may commit it with other concurrent creates (Store.Insert).
func (s *Service) insert(ctx context.Context, dry bool, fn func(kpool.Tx) error) error {
	if dry {
		return s.write(ctx, dry, fn)
	}
	return s.Store.Insert(ctx, fn)
}

// New returns a Service on s with the wall clock.
func New(s kpool.Store, ps kpool.Platforms) *Service {
	return &Service{Store: s, Platforms: ps, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// defaults fills in what a pool spec of cluster c may omit.
func (s *Service) defaults(spec *kpool.NodePoolSpec, c *kpool.Cluster) {
	region := ""
	if pl, ok := s.Platforms.Platform(c.Spec.Platform.Type); ok {
		region = pl.Region(&c.Spec)
	}
	kpool.DefaultNodePoolSpec(spec, c, region)
}

// ClusterCreate is a request to register a cluster.
type ClusterCreate struct {
	ID   string // optional, a UUID chosen by the client
	Name string
	// Team is the team the cluster is to belong to ("": the caller's own).
	Team string
	Spec json.RawMessage
	// DryRun checks everything (rules, conflicts) and stores nothing.
	DryRun bool
}

// NodePoolCreate is a request to create a pool.
type NodePoolCreate struct {
	ID        string // optional, a UUID chosen by the client
	Name      string
	ClusterID string
	Spec      json.RawMessage
	// DryRun checks everything (rules, conflicts, the plan) and stores
	// nothing.
	DryRun bool
}

// Update is a PUT or PATCH of a cluster or pool.
type Update struct {
	// Name and ClusterID, when sent, must equal the stored ones.
	Name      *string
	ClusterID *string
	// Team, when sent, moves a cluster to another team ("": to its owner
	// alone); a pool's team is its cluster's, so a pool update refuses it.
	Team *string
	// Spec is merged into the stored spec; nil leaves the spec as it is.
	Spec json.RawMessage
	// Patch selects RFC 7386 merge patch (null clears a field); otherwise a
	// null leaves the field as it is.
	Patch bool
	// ResourceVersion, when set, must be the stored one.
	ResourceVersion string
	// DryRun answers what the update would do (a pool's plan included)
	// and stores nothing.
	DryRun bool
}

// Delete is a request to delete a cluster or a pool.
type Delete struct {
	// ResourceVersion, when set, must be the stored one.
	ResourceVersion string
	// Force, for a cluster, deletes its pools with it; for a pool, removes
	// its record at once whatever its controllers report (admins only).
	Force bool
	// DryRun answers what the delete would do and stores nothing.
	DryRun bool
}

// StatusDocument is a pool's aggregated status with every controller's report.
type StatusDocument struct {
	NodePoolID       string                   `json:"nodepool_id"`
	ClusterID        string                   `json:"cluster_id"`
	Generation       int64                    `json:"generation"`
	Status           kpool.NodePoolStatus     `json:"status"`
	ControllerStatus []kpool.ControllerStatus `json:"controller_status"`
	// Deleted is set on the report that completed the pool's deletion.
	Deleted bool `json:"deleted,omitempty"`
	// Ignored explains why a report was not stored (it was stale).
	Ignored string `json:"ignored,omitempty"`
}

func caller(ctx context.Context) (*kpool.Identity, error) {
	id := kpool.IdentityFrom(ctx)
	if id == nil {
		return nil, &kpool.Error{Code: kpool.CodeUnauthorized, Message: "Authentication required", Details: "X-User-Email: missing e-mail address"}
	}
	return id, nil
}

// writer returns the caller if it may change specs: controllers only read
// and report status.
func writer(ctx context.Context) (*kpool.Identity, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if id.Controller && !id.Admin {
		return nil, kpool.Errorf(kpool.CodeForbidden, "controller identities may read and report status, not change clusters or node pools")
	}
	return id, nil
}

func notFound(kind, id string) error {
	return &kpool.Error{Code: kpool.CodeNotFound, Message: kind + " not found", Details: id}
}

func (s *Service) now() time.Time { return s.Now() }

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// ---- node pools ----

// aggregate is Aggregate for a pool, knowing whether a controller in this
// kpool acts on the pool's platform.
func (s *Service) aggregate(p *kpool.NodePool, reports []kpool.ControllerStatus, prev kpool.NodePoolStatus, now time.Time) kpool.NodePoolStatus {
	return kpool.Aggregate(p, reports, prev, now, s.Platforms.HasDriver(p.Spec.Platform.Type))
}

// carries reports whether a spec patch sets the top-level field name.
func carries(patch json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(patch, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

// clampCount keeps an autoscaled pool's count within new bounds that an
// update set without a count: the autoscaler owns the count, so moving the
// bounds should not need one.
func clampCount(s *kpool.NodePoolSpec) {
	a := s.Autoscaling
	if !a.On() || a.MinNodes == nil || a.MaxNodes == nil || s.NodeCount == nil || *a.MinNodes > *a.MaxNodes {
		return
	}
	n := min(max(*s.NodeCount, *a.MinNodes), *a.MaxNodes)
	s.NodeCount = &n
}

// ---- helpers ----

// NewResourceVersion returns a fresh resource version: random, so that no
// two writes of an object, in any process, share one.
func NewResourceVersion() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// updatePool writes p under a new resource version, where the stored one is
// still p's.
func updatePool(tx kpool.Tx, p *kpool.NodePool) error {
	from := p.ResourceVersion
	p.ResourceVersion = NewResourceVersion()
	if err := tx.UpdateNodePool(p, from); err != nil {
		p.ResourceVersion = from
		return err
	}
	return nil
}

// updateCluster writes c as updatePool writes a pool.
func updateCluster(tx kpool.Tx, c *kpool.Cluster) error {
	from := c.ResourceVersion
	c.ResourceVersion = NewResourceVersion()
	if err := tx.UpdateCluster(c, from); err != nil {
		c.ResourceVersion = from
		return err
	}
	return nil
}

func precondition(want, have, kind, name string) error {
	if want != "" && want != have {
		return &kpool.Error{Code: kpool.CodeConflict, Message: fmt.Sprintf("%s '%s' has been modified", kind, name),
			Details: fmt.Sprintf("resource_version %q is not the current one (%q): read the %s again and retry", want, have, strings.ToLower(kind))}
	}
	return nil
}

// decode reads a JSON document strictly into v (see jsondoc.Decode), or
// answers VALIDATION_ERROR naming every field at fault.
// specOrHeader decodes a create's spec into v. When the spec is missing or
// does not decode, the name and id are checked too and every fault is in
// the one error, so that a body without name and spec hears of both.
func specOrHeader(spec json.RawMessage, v any, name, id string) error {
	var fe kpool.FieldErrors
	var err error
	if len(spec) == 0 {
		err = kpool.Invalid("spec", "required")
	} else {
		err = decode(spec, v, "spec")
	}
	if err == nil {
		return nil
	}
	kpool.ValidateName(&fe, "name", name)
	kpool.ValidateID(&fe, "id", id)
	addFields(&fe, err)
	return fe.Err()
}

// addFields adds a VALIDATION_ERROR's fields to fe.
func addFields(fe *kpool.FieldErrors, err error) {
	var e *kpool.Error
	if errors.As(err, &e) && e.Code == kpool.CodeValidation {
		*fe = append(*fe, e.Fields...)
	}
}

func decode(data []byte, v any, path string) error {
	var fe kpool.FieldErrors
	if !jsondoc.Decode(data, v, path, fe.Report) {
		return fe.Err()
	}
	return nil
}

// mergeSpec merges a PUT or PATCH body's spec into the stored one and decodes
// the result strictly.
func mergeSpec[T any](old T, patch json.RawMessage, nullDeletes bool) (T, error) {
	var out T
	base, err := json.Marshal(old)
	if err != nil {
		return out, err
	}
	merged, err := jsondoc.Merge(base, patch, nullDeletes)
	if err != nil {
		return out, kpool.Invalid("spec", "%v", err)
	}
	if bytes.Equal(bytes.TrimSpace(merged), []byte("null")) {
		merged = []byte("{}")
	}
	if err := decode(merged, &out, "spec"); err != nil {
		return out, err
	}
	return out, nil
}

func specEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
