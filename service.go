package kpool

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/kpool/kpool/internal/jsondoc"
)

// Service carries out every operation of the API on a Store: it decides who
// may do what, validates, merges updates, raises generations, aggregates
// status and runs the two-phase delete. The HTTP API and in-process
// controllers both call it, so there is one set of rules.
type Service struct {
	Store Store
	Now   func() time.Time
	// Platforms check every cluster and pool write against what its
	// platform's rules and its provider can do, and name pools at their
	// providers.
	Platforms Platforms
	// Endpoints are the endpoints any user may give a cluster; admins may
	// give others.
	Endpoints Origins
	// Credentials say which named credentials a caller may give a cluster;
	// nil means there are none and spec.credential must stay empty.
	Credentials CredentialGrants

	// clusters caches the clusters pool creates are checked against.
	clusters clusterCache
	// updates queues concurrent updates of a pool (see UpdateNodePoolPlan).
	updatesMu sync.Mutex
	updates   map[string]*updateQueue
}

type dryRunKey struct{}

// WithDryRun returns a context in which the service's writes do everything
// (checks, plans, conflicts) but store nothing.
func WithDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, dryRunKey{}, true)
}

// IsDryRun reports whether ctx asks for a dry run.
func IsDryRun(ctx context.Context) bool { v, _ := ctx.Value(dryRunKey{}).(bool); return v }

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// write runs fn in one store transaction; in a dry run the transaction is
// rolled back after fn succeeds, so nothing is stored.
func (s *Service) write(ctx context.Context, fn func(Tx) error) error {
	if !IsDryRun(ctx) {
		return s.Store.Write(ctx, fn)
	}
	err := s.Store.Write(ctx, func(tx Tx) error {
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
func (s *Service) insert(ctx context.Context, fn func(Tx) error) error {
	if IsDryRun(ctx) {
		return s.write(ctx, fn)
	}
	return s.Store.Insert(ctx, fn)
}

// NewService returns a Service on s with the wall clock.
func NewService(s Store, ps Platforms) *Service {
	return &Service{Store: s, Platforms: ps, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// defaults fills in what a pool spec of cluster c may omit.
func (s *Service) defaults(spec *NodePoolSpec, c *Cluster) {
	region := ""
	if pl, ok := s.Platforms.Platform(c.Spec.Platform.Type); ok {
		region = pl.Region(&c.Spec)
	}
	DefaultNodePoolSpec(spec, c, region)
}

// ClusterCreate is a request to register a cluster.
type ClusterCreate struct {
	ID   string // optional, a UUID chosen by the client
	Name string
	// Team is the team the cluster is to belong to ("": the caller's own).
	Team string
	Spec json.RawMessage
}

// NodePoolCreate is a request to create a pool.
type NodePoolCreate struct {
	ID        string // optional, a UUID chosen by the client
	Name      string
	ClusterID string
	Spec      json.RawMessage
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
}

// ListOptions selects and pages a list.
type ListOptions struct {
	Limit     int // 1-100; 0 means 50
	Offset    int
	After     string // a cursor from a previous List's Next
	ClusterID string
	// Name selects the objects of exactly this name (a pool's name is
	// unique in its cluster, a cluster's in its owner's).
	Name   string
	Phase  Phase
	Health Health
}

// List is one page of a list.
type List[T any] struct {
	Items []T
	Total int
	Limit int
	// Next is the cursor of the following page, "" on the last page.
	Next string
}

// StatusDocument is a pool's aggregated status with every controller's report.
type StatusDocument struct {
	NodePoolID       string             `json:"nodepool_id"`
	ClusterID        string             `json:"cluster_id"`
	Generation       int64              `json:"generation"`
	Status           NodePoolStatus     `json:"status"`
	ControllerStatus []ControllerStatus `json:"controller_status"`
	// Deleted is set on the report that completed the pool's deletion.
	Deleted bool `json:"deleted,omitempty"`
	// Ignored explains why a report was not stored (it was stale).
	Ignored string `json:"ignored,omitempty"`
}

// Default and maximum page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

func caller(ctx context.Context) (*Identity, error) {
	id := IdentityFrom(ctx)
	if id == nil {
		return nil, &Error{Code: CodeUnauthorized, Message: "Authentication required", Details: "X-User-Email: missing e-mail address"}
	}
	return id, nil
}

// writer returns the caller if it may change specs: controllers only read
// and report status.
func writer(ctx context.Context) (*Identity, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if id.Controller && !id.Admin {
		return nil, Errorf(CodeForbidden, "controller identities may read and report status, not change clusters or node pools")
	}
	return id, nil
}

func notFound(kind, id string) error {
	return &Error{Code: CodeNotFound, Message: kind + " not found", Details: id}
}

func (s *Service) now() time.Time { return s.Now() }

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// ---- node pools ----

// aggregate is Aggregate for a pool, knowing whether a controller in this
// kpool acts on the pool's platform.
func (s *Service) aggregate(p *NodePool, reports []ControllerStatus, prev NodePoolStatus, now time.Time) NodePoolStatus {
	return Aggregate(p, reports, prev, now, s.Platforms.HasDriver(p.Spec.Platform.Type))
}

// CreateNodePool creates a pool in a cluster the caller may change.
func (s *Service) CreateNodePool(ctx context.Context, in NodePoolCreate) (*NodePool, error) {
	p, _, err := s.CreateNodePoolPlan(ctx, in)
	return p, err
}

// CreateNodePoolPlan is CreateNodePool that also returns the plan: no
// changes, and a warning for each field set that the provider does not apply.
func (s *Service) CreateNodePoolPlan(ctx context.Context, in NodePoolCreate) (*NodePool, Plan, error) {
	p, warnings, err := s.createNodePool(ctx, in)
	if err != nil {
		return nil, Plan{Changes: []Change{}}, err
	}
	return p, Plan{Provider: string(p.Spec.Platform.Type), ProviderName: p.ProviderName, Changes: []Change{}, Warnings: warnings}, nil
}

func (s *Service) createNodePool(ctx context.Context, in NodePoolCreate) (*NodePool, []string, error) {
	clusterID, err := RefID("cluster_id", in.ClusterID)
	if err != nil {
		// No cluster to check the spec against: what can be checked
		// without one is reported with it.
		var fe FieldErrors
		addFields(&fe, err)
		if len(in.Spec) == 0 {
			fe.Add("spec", "required")
		}
		ValidateName(&fe, "name", in.Name)
		ValidateID(&fe, "id", in.ID)
		return nil, nil, fe.Err()
	}
	in.ClusterID = clusterID
	if in.ID == "" {
		in.ID = newID()
	}
	// The pool is checked against the cluster as cached (see clusterCache);
	// if the cluster has changed since, the database refuses the write and
	// the pool is checked again against the cluster as it is.
	fresh := false
	for attempt := 0; ; attempt++ {
		id, c, cached, err := s.clusterForCreate(ctx, in.ClusterID, fresh)
		if err != nil {
			return nil, nil, err
		}
		p, err := s.newPool(id, c, in)
		if err != nil && cached {
			fresh = true // refused by a cluster that may have changed: ask again
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		warnings, err := s.advisories(c, &p.Spec, in.Spec)
		if err != nil {
			return nil, nil, err
		}
		if err := s.checkLogicalPool(ctx, c, p); err != nil {
			return nil, nil, err
		}
		err = s.insertPool(ctx, id, c, p)
		switch {
		case errors.Is(err, ErrClusterChanged) && attempt < 2:
			s.clusters.forget(c.ID)
			fresh = true
			continue
		case errors.Is(err, ErrClusterChanged):
			return nil, nil, Errorf(CodeConflict, "Cluster '%s' is changing; try again", c.Name)
		case errors.Is(err, ErrClusterDeleting):
			s.clusters.forget(c.ID)
			return nil, nil, Errorf(CodeConflict, "Cluster '%s' is being deleted", c.Name)
		case IsNotFound(err):
			s.clusters.forget(c.ID)
			return nil, nil, notFound("Cluster", c.ID)
		case errors.Is(err, ErrProviderNameTaken):
			return nil, nil, &Error{Code: CodeConflict, Message: "No free provider name for node pool '" + p.Name + "'",
				Details: "pools are being created with names that map to the same provider names; try again"}
		case err != nil:
			return nil, nil, err
		}
		return p, warnings, nil
	}
}

// advisories returns a warning for each field of spec that sent (the
// request's spec) carries and that the pool's provider stores but does not
// apply (class advisory in its capabilities): those the plan of a create,
// from nothing to spec, classes advisory. Only the autoscaler's targets and
// delays can be, so a spec without them costs nothing.
func (s *Service) advisories(c *Cluster, spec *NodePoolSpec, sent json.RawMessage) ([]string, error) {
	a := spec.Autoscaling
	if a == nil || (a.TargetCPUUtilization == nil && a.TargetMemoryUtilization == nil && a.ScaleDownDelay == "" && a.ScaleUpDelay == "") {
		return nil, nil
	}
	pl, err := s.Platforms.Plan(c, &NodePoolSpec{}, spec)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ch := range pl.Changes {
		if ch.Class == UpdateAdvisory && jsondoc.Carries(sent, strings.TrimPrefix(ch.Field, "spec.")) {
			out = append(out, advisoryWarning(ch))
		}
	}
	return out, nil
}

// clusterForCreate returns the cluster a pool is to be created in, if the
// caller may change it: from the cache unless fresh (cached says which).
func (s *Service) clusterForCreate(ctx context.Context, clusterID string, fresh bool) (id *Identity, c *Cluster, cached bool, err error) {
	if id, err = caller(ctx); err != nil {
		return nil, nil, false, err
	}
	if !fresh {
		c = s.clusters.get(clusterID, s.now())
	}
	if c == nil {
		if _, c, err = s.operableCluster(ctx, clusterID); err != nil {
			return nil, nil, false, err
		}
		s.clusters.put(c, s.now())
		return id, c, false, nil
	}
	if err := access(ctx, id, "Cluster", clusterID, c.CreatedBy, c.Team, Operate); err != nil {
		return nil, nil, false, err
	}
	return id, c, true, nil
}

// newPool builds and checks a new pool of cluster c from a create request.
func (s *Service) newPool(id *Identity, c *Cluster, in NodePoolCreate) (*NodePool, error) {
	if err := s.credentialHolds(c); err != nil {
		return nil, err
	}
	if pl, ok := s.Platforms.Platform(c.Spec.Platform.Type); !ok {
		return nil, &Error{Code: CodeNotImplemented, Message: fmt.Sprintf("Platform %q has no node pools", c.Spec.Platform.Type),
			Details: fmt.Sprintf("cluster %s runs on %s, which kpool does not know", c.Name, c.Spec.Platform.Type)}
	} else if !pl.HasNodePools() {
		return nil, pl.NoPools("nodepool create")
	}
	p := &NodePool{ID: in.ID, Name: in.Name, ClusterID: c.ID, CreatedBy: id.Email, ClusterOwner: c.CreatedBy, ClusterTeam: c.Team}
	if err := specOrHeader(in.Spec, &p.Spec, p.Name, p.ID); err != nil {
		return nil, err
	}
	s.defaults(&p.Spec, c)
	if err := ValidateNodePool(s.Platforms, p, c); err != nil {
		return nil, err
	}
	if err := s.Platforms.CheckCreate(c, &p.Spec); err != nil {
		return nil, err
	}
	first, err := s.Platforms.ProviderNames(c, p.Name, 1)
	if err != nil {
		return nil, err
	}
	p.ProviderName = first[0]
	return p, nil
}

// insertPool writes a new pool. The database checks the names (unique
// indexes), that the cluster is still at the generation the pool was checked
// against and is not being deleted (a trigger), so a create reads nothing
// first and costs the same in a cluster of any size. Only when the preferred
// provider name is taken are the other candidates looked up, and the create
// runs again with a free one.
func (s *Service) insertPool(ctx context.Context, id *Identity, c *Cluster, p *NodePool) error {
	var err error
	for attempt := 0; ; attempt++ {
		write := s.insert
		if attempt > 0 {
			write = s.write // it reads the taken names first
		}
		err = write(ctx, func(tx Tx) error {
			if attempt > 0 {
				names, err := s.Platforms.ProviderNames(c, p.Name, 0)
				if err != nil {
					return err
				}
				taken, err := tx.ProviderNamesTaken(c.ID, names)
				if err != nil {
					return err
				}
				if p.ProviderName, err = freeName(names, taken, p.Name, c); err != nil {
					return err
				}
			}
			now := s.now()
			p.Generation, p.CreatedAt, p.UpdatedAt = 1, now, now
			p.ResourceVersion = NewResourceVersion()
			p.Status = s.aggregate(p, nil, NodePoolStatus{}, now)
			if err := tx.CreateNodePool(p, c.Generation); err != nil {
				return err
			}
			ev := poolEvent(ctx, EventNodePoolCreated, p, 0, id.Email)
			ev.CreatedAt = now
			return tx.AddEvent(ev)
		})
		if !errors.Is(err, ErrProviderNameTaken) || attempt == 2 {
			return err
		}
	}
}

// freeName returns the first of a pool's provider name candidates that no
// other pool of the cluster has.
func freeName(names, taken []string, pool string, c *Cluster) (string, error) {
	for _, n := range names {
		if !slices.Contains(taken, n) {
			return n, nil
		}
	}
	return "", &Error{Code: CodeConflict, Message: "No free provider name for node pool '" + pool + "'",
		Details: "every name derived from it is taken in cluster " + c.Name + " at " + string(c.Spec.Platform.Type) + "; choose another pool name"}
}

// NodePool returns one pool the caller may see.
func (s *Service) NodePool(ctx context.Context, poolID string) (*NodePool, error) {
	_, p, err := s.visiblePool(ctx, poolID)
	return p, err
}

// NodePools lists the pools the caller may see.
func (s *Service) NodePools(ctx context.Context, o ListOptions) (*List[*NodePool], error) {
	raw, err := s.RawNodePools(ctx, o)
	if err != nil {
		return nil, err
	}
	l := &List[*NodePool]{Items: make([]*NodePool, len(raw.Items)), Total: raw.Total, Limit: raw.Limit, Next: raw.Next}
	for i, r := range raw.Items {
		if l.Items[i], err = r.Decode(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// RawNodePool is NodePool with the spec and status as stored, for answers
// that pass the pool on as JSON.
func (s *Service) RawNodePool(ctx context.Context, poolID string) (*RawNodePool, error) {
	_, p, err := find(ctx, "NodePool", poolID, s.Store.RawNodePool, func(p *RawNodePool) (string, string) { return p.ClusterOwner, p.ClusterTeam }, Read)
	return p, err
}

// RawNodePools is NodePools with each pool's spec and status as stored.
func (s *Service) RawNodePools(ctx context.Context, o ListOptions) (*List[*RawNodePool], error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f := NodePoolFilter{ClusterID: o.ClusterID, Name: o.Name, Phase: o.Phase, Health: o.Health}
	if !id.SeesAll() {
		f.Owner, f.Teams = id.Email, id.TeamNames()
	}
	if f.Page, err = page(o); err != nil {
		return nil, err
	}
	limit := f.Limit
	f.Limit++ // one more row than asked says whether a next page exists
	items, total, err := s.Store.RawNodePools(ctx, f)
	if err != nil {
		return nil, err
	}
	return pageOf(items, total, limit, func(p *RawNodePool) Cursor { return Cursor{p.CreatedAt, p.ID} }), nil
}

// DeleteNodePool deletes a pool: at once if no controller has reported on
// it, otherwise it is Deleting until every reporting controller reports
// Deleted=True. gone reports which.
func (s *Service) DeleteNodePool(ctx context.Context, poolID, rv string) (out *NodePool, gone bool, err error) {
	id, err := poolCaller(ctx, poolID)
	if err != nil {
		return nil, false, err
	}
	err = s.write(ctx, func(tx Tx) error {
		p, c, reports, err := lockPool(ctx, tx, id, poolID, Operate)
		if err != nil {
			return err
		}
		if err := precondition(rv, p.ResourceVersion, "NodePool", p.Name); err != nil {
			return err
		}
		now := s.now()
		if gone, err = s.deletePool(ctx, tx, p, reports, id.Email, "", now); err != nil {
			return err
		}
		out = p
		if gone {
			return s.removeClusterIfDone(ctx, tx, c, id.Email, now)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, gone, nil
}

// NodePoolStatus returns a pool's aggregated status and every report.
func (s *Service) NodePoolStatus(ctx context.Context, poolID string) (*StatusDocument, error) {
	_, p, err := s.visiblePool(ctx, poolID)
	if err != nil {
		return nil, err
	}
	reports, err := s.Store.ControllerStatuses(ctx, poolID)
	if err != nil {
		return nil, err
	}
	return statusDocument(p, reports), nil
}

func statusDocument(p *NodePool, reports []ControllerStatus) *StatusDocument {
	if reports == nil {
		reports = []ControllerStatus{}
	}
	return &StatusDocument{NodePoolID: p.ID, ClusterID: p.ClusterID, Generation: p.Generation, Status: p.Status, ControllerStatus: reports}
}

// ReportNodePoolStatus stores a controller's report and recomputes the
// pool's status. Only controller identities may report. A report ahead of
// the pool's generation is refused; one older than the controller's last
// report is ignored (and says so).
func (s *Service) ReportNodePoolStatus(ctx context.Context, poolID string, r ControllerStatus) (*StatusDocument, error) {
	id, err := poolCaller(ctx, poolID)
	if err != nil {
		return nil, err
	}
	if !id.Controller {
		return nil, Errorf(CodeForbidden, "only controller identities may report node pool status")
	}
	r.Metadata = compactObject(r.Metadata)
	if r.Conditions == nil {
		r.Conditions = []Condition{}
	}
	scrubReport(&r)
	if err := ValidateControllerStatus(&r); err != nil {
		return nil, err
	}
	if err := id.MayReportAs(r.ControllerName, s.Platforms.ControllerNames()); err != nil {
		return nil, err
	}
	var doc *StatusDocument
	err = s.write(ctx, func(tx Tx) error {
		p, c, reports, err := lockPool(ctx, tx, id, poolID, Read)
		if err != nil {
			return err
		}
		if id.Scope != nil && !id.Scope.Covers(c.Spec.Platform.Type, c) {
			return Errorf(CodeForbidden, "%s may report on %s only, not on this %s pool", id.Email, id.Scope, c.Spec.Platform.Type)
		}
		if r.ObservedGeneration > p.Generation {
			return Invalid("observed_generation", "%d is ahead of the node pool's generation %d", r.ObservedGeneration, p.Generation)
		}
		now := s.now()
		var prev *ControllerStatus
		for i := range reports {
			if reports[i].ControllerName == r.ControllerName {
				prev = &reports[i]
			}
		}
		if prev != nil && r.ObservedGeneration < prev.ObservedGeneration {
			doc = statusDocument(p, reports)
			doc.Ignored = fmt.Sprintf("observed_generation %d is older than %s's last report (%d)", r.ObservedGeneration, r.ControllerName, prev.ObservedGeneration)
			return nil
		}
		for i := range r.Conditions {
			cond := &r.Conditions[i]
			var old []Condition
			if prev != nil {
				old = prev.Conditions
			}
			given := cond.LastTransitionTime
			*cond = transition(old, *cond, now)
			if cond.LastTransitionTime.Equal(now) && !given.IsZero() && given.Before(now) {
				cond.LastTransitionTime = given.UTC()
			}
		}
		r.UpdatedAt = now
		if err := tx.PutControllerStatus(poolID, &r); err != nil {
			return err
		}
		if prev != nil {
			*prev = r
		} else {
			reports = append(reports, r)
		}
		if p.Deleting() && allDeleted(reports) {
			if err := tx.DeleteNodePool(p.ID); err != nil {
				return err
			}
			ev := poolEvent(ctx, EventNodePoolDeleted, p, p.Generation, id.Email)
			ev.Detail, ev.CreatedAt = statusDetail(&r), now
			if err := tx.AddEvent(ev); err != nil {
				return err
			}
			doc = statusDocument(p, reports)
			doc.Deleted = true
			return s.removeClusterIfDone(ctx, tx, c, id.Email, now)
		}
		p.Status = s.aggregate(p, reports, p.Status, now)
		p.UpdatedAt = now
		if err := updatePool(tx, p); err != nil {
			return err
		}
		doc = statusDocument(p, reports)
		ev := poolEvent(ctx, EventNodePoolStatus, p, p.Generation, id.Email)
		ev.Detail, ev.CreatedAt = statusDetail(&r), now
		return tx.AddEvent(ev)
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
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
func clampCount(s *NodePoolSpec) {
	a := s.Autoscaling
	if !a.On() || a.MinNodes == nil || a.MaxNodes == nil || s.NodeCount == nil || *a.MinNodes > *a.MaxNodes {
		return
	}
	n := min(max(*s.NodeCount, *a.MinNodes), *a.MaxNodes)
	s.NodeCount = &n
}

func allDeleted(reports []ControllerStatus) bool {
	for _, r := range reports {
		if r.Condition(ConditionDeleted) != ConditionTrue {
			return false
		}
	}
	return len(reports) > 0
}

// compactObject normalises a JSON object: absent or null becomes {}.
func compactObject(m json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if len(m) == 0 || json.Compact(&b, m) != nil {
		if len(bytes.TrimSpace(m)) == 0 {
			return json.RawMessage("{}")
		}
		return m
	}
	if b.String() == "null" {
		return json.RawMessage("{}")
	}
	return b.Bytes()
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
func updatePool(tx Tx, p *NodePool) error {
	from := p.ResourceVersion
	p.ResourceVersion = NewResourceVersion()
	if err := tx.UpdateNodePool(p, from); err != nil {
		p.ResourceVersion = from
		return err
	}
	return nil
}

// updateCluster writes c as updatePool writes a pool.
func updateCluster(tx Tx, c *Cluster) error {
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
		return &Error{Code: CodeConflict, Message: fmt.Sprintf("%s '%s' has been modified", kind, name),
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
	var fe FieldErrors
	var err error
	if len(spec) == 0 {
		err = Invalid("spec", "required")
	} else {
		err = decode(spec, v, "spec")
	}
	if err == nil {
		return nil
	}
	ValidateName(&fe, "name", name)
	ValidateID(&fe, "id", id)
	addFields(&fe, err)
	return fe.Err()
}

// addFields adds a VALIDATION_ERROR's fields to fe.
func addFields(fe *FieldErrors, err error) {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeValidation {
		*fe = append(*fe, e.Fields...)
	}
}

func decode(data []byte, v any, path string) error {
	var fe FieldErrors
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
		return out, Invalid("spec", "%v", err)
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

func page(o ListOptions) (Page, error) {
	p := Page{Limit: o.Limit, Offset: o.Offset}
	if p.Limit == 0 {
		p.Limit = DefaultLimit
	}
	var fe FieldErrors
	if p.Limit < 1 || p.Limit > MaxLimit {
		fe.Add("limit", "must be between 1 and %d, got %d", MaxLimit, o.Limit)
	}
	if p.Offset < 0 {
		fe.Add("offset", "must not be negative, got %d", o.Offset)
	}
	if o.After != "" {
		c, err := DecodeCursor(o.After)
		if err != nil {
			fe.Add("after", "%v", err)
		}
		p.After = c
		if p.Offset != 0 {
			fe.Add("offset", "cannot be combined with after: page with one or the other")
		}
	}
	return p, fe.Err()
}

// pageOf makes a page of at most limit items from rows that may hold one
// more; that extra row says a next page exists.
func pageOf[T any](rows []T, total, limit int, pos func(T) Cursor) *List[T] {
	l := &List[T]{Items: rows, Total: total, Limit: limit}
	if len(rows) > limit {
		l.Items = rows[:limit]
		l.Next = EncodeCursor(pos(l.Items[limit-1]))
	}
	return l
}

// EncodeCursor turns a position into the opaque string of a list's next.
func EncodeCursor(c Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "." + c.ID))
}

// DecodeCursor parses a string made by EncodeCursor.
func DecodeCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cursor from a previous page's next", s)
	}
	ts, id, ok := strings.Cut(string(b), ".")
	us, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || !IsUUID(id) {
		return nil, fmt.Errorf("%q is not a cursor from a previous page's next", s)
	}
	return &Cursor{CreatedAt: time.UnixMicro(us).UTC(), ID: id}, nil
}

// ImportNodePool records a pool found at the provider that kpool does not
// know, in observe mode, for a cluster with spec.importPools. Only
// controllers import.
func (s *Service) ImportNodePool(ctx context.Context, clusterID, name, providerName string, spec NodePoolSpec) (*NodePool, error) {
	id, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !id.Controller {
		return nil, Errorf(CodeForbidden, "only controllers import node pools")
	}
	var out *NodePool
	err = s.write(ctx, func(tx Tx) error {
		c, err := tx.Cluster(clusterID)
		if err != nil {
			return err
		}
		if c.Deleting() || !c.Spec.ImportPools {
			return Errorf(CodeConflict, "Cluster '%s' does not import pools", c.Name)
		}
		spec.Management = ManagementObserve
		s.defaults(&spec, c)
		p := &NodePool{ID: newID(), Name: name, ClusterID: c.ID, CreatedBy: id.Email, ClusterOwner: c.CreatedBy, ClusterTeam: c.Team, ProviderName: providerName, Spec: spec}
		if err := ValidateNodePool(s.Platforms, p, c); err != nil {
			return err
		}
		now := s.now()
		p.Generation, p.CreatedAt, p.UpdatedAt = 1, now, now
		p.ResourceVersion = NewResourceVersion()
		p.Status = s.aggregate(p, nil, NodePoolStatus{}, now)
		if err := tx.CreateNodePool(p, c.Generation); err != nil {
			if errors.Is(err, ErrProviderNameTaken) {
				return Errorf(CodeConflict, "NodePool with provider name '%s' already exists in cluster", providerName)
			}
			return err
		}
		out = p
		ev := poolEvent(ctx, EventNodePoolCreated, p, 0, id.Email)
		ev.Detail, ev.CreatedAt = "imported from the provider as "+providerName, now
		return tx.AddEvent(ev)
	})
	return out, err
}

// checkLogicalPool checks a pool joining a logical pool (spec.placementPool)
// against the other members in its cluster: single-zone members may not
// share a zone, and every member has the same taints, so that a pod
// tolerating one may land on all. It reads the cluster's pools, which only a
// member pays for.
func (s *Service) checkLogicalPool(ctx context.Context, c *Cluster, p *NodePool, also ...*NodePool) error {
	if p.Spec.PlacementPool == "" {
		return nil
	}
	others := slices.Clone(also)
	f := NodePoolFilter{ClusterID: c.ID, Page: Page{Limit: MaxLimit}}
	for {
		page, _, err := s.Store.NodePools(ctx, f)
		if err != nil {
			return err
		}
		others = append(others, page...)
		if len(page) < f.Limit {
			break
		}
		last := page[len(page)-1]
		f.After = &Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	var fe FieldErrors
	logical := p.LogicalPool()
	for _, m := range others {
		if m.ID == p.ID || m.Deleting() || m.LogicalPool() != logical {
			continue
		}
		if !sameTaints(m.Spec.Taints, p.Spec.Taints) {
			fe.Add("spec.taints", "pool %s, a member of logical pool %s, has taints %s: every member needs the same taints, so that a pod tolerating one can land on all",
				m.Name, logical, taintList(m.Spec.Taints))
		}
		if len(m.Spec.Zones) == 1 && len(p.Spec.Zones) == 1 && m.Spec.Zones[0] == p.Spec.Zones[0] {
			fe.Add("spec.zones", "pool %s of logical pool %s is in zone %s already: single-zone members must be in different zones", m.Name, logical, m.Spec.Zones[0])
		}
	}
	return fe.Err()
}

func sameTaints(a, b []Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !slices.Contains(b, t) {
			return false
		}
	}
	return true
}

func taintList(ts []Taint) string {
	if len(ts) == 0 {
		return "none"
	}
	var out []string
	for _, t := range ts {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+t.Effect)
	}
	return strings.Join(out, ", ")
}

// CreateZonalNodePools creates a zonal logical pool in one request: one
// member per zone of in's spec.zones, named NAME-ZONE, each in its zone
// with spec.placementPool NAME (or the spec's own), so that the cluster
// autoscaler balances the zones and workloads select the logical pool. The
// members are written in one transaction: all of them, or none.
func (s *Service) CreateZonalNodePools(ctx context.Context, in NodePoolCreate) ([]*NodePool, error) {
	var base NodePoolSpec
	var fe FieldErrors
	ValidateName(&fe, "name", in.Name)
	if in.ID != "" {
		fe.Add("id", "a zonal pool's members get ids of their own: send none")
	}
	if len(in.Spec) == 0 {
		fe.Add("spec", "required")
	} else if err := json.Unmarshal(in.Spec, &base); err != nil {
		fe.Add("spec", "not a node pool spec: %v", err)
	}
	if len(fe) == 0 && len(base.Zones) == 0 {
		fe.Add("spec.zones", "required: the zones to make one pool each in (logical zones, such as 1, 2, 3)")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	clusterID, err := RefID("cluster_id", in.ClusterID)
	if err != nil {
		return nil, err
	}
	id, c, _, err := s.clusterForCreate(ctx, clusterID, true)
	if err != nil {
		return nil, err
	}
	logical := base.PlacementPool
	if logical == "" {
		logical = in.Name
	}
	var members []*NodePool
	for _, z := range base.Zones {
		var spec map[string]any
		_ = json.Unmarshal(in.Spec, &spec)
		spec["zones"] = []string{z}
		spec["placementPool"] = logical
		raw, _ := json.Marshal(spec)
		p, err := s.newPool(id, c, NodePoolCreate{ID: newID(), Name: in.Name + "-" + strings.ToLower(z), ClusterID: c.ID, Spec: raw})
		if err != nil {
			return nil, prefixFields(err, "zone "+z)
		}
		members = append(members, p)
	}
	for i, p := range members {
		others := append(slices.Clone(members[:i]), members[i+1:]...)
		if err := s.checkLogicalPool(ctx, c, p, others...); err != nil {
			return nil, err
		}
	}
	err = s.write(ctx, func(tx Tx) error {
		now := s.now()
		for _, p := range members {
			p.Generation, p.CreatedAt, p.UpdatedAt = 1, now, now
			p.ResourceVersion = NewResourceVersion()
			p.Status = s.aggregate(p, nil, NodePoolStatus{}, now)
			if err := tx.CreateNodePool(p, c.Generation); err != nil {
				return err
			}
			ev := poolEvent(ctx, EventNodePoolCreated, p, 0, id.Email)
			ev.CreatedAt = now
			ev.Detail = "member of zonal logical pool " + logical
			if err := tx.AddEvent(ev); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrClusterChanged):
		s.clusters.forget(c.ID)
		return nil, Errorf(CodeConflict, "Cluster '%s' changed while the pools were created; try again", c.Name)
	case errors.Is(err, ErrClusterDeleting):
		return nil, Errorf(CodeConflict, "Cluster '%s' is being deleted", c.Name)
	case errors.Is(err, ErrProviderNameTaken):
		return nil, &Error{Code: CodeConflict, Message: "A member's provider name is taken", Details: "another pool of cluster " + c.Name + " has the name a member maps to at the provider; choose another name"}
	case err != nil:
		return nil, err
	}
	return members, nil
}

// prefixFields says which member a validation error is about.
func prefixFields(err error, what string) error {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeValidation {
		e.Message = what + ": " + e.Message
	}
	return err
}
