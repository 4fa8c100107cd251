package kpool

import (
	"context"
	"time"
)

// Store persists clusters, node pools, controller reports and the events
// outbox. Reads see committed data; every change goes through Write, which
// runs fn in one transaction: all of fn's writes and events commit together
// or not at all, and Write returns only once they are durable.
//
// Implementations: store/sqlite and store/postgres. store/storetest is the
// conformance suite both pass.
type Store interface {
	Cluster(ctx context.Context, id string) (*Cluster, error)
	Clusters(ctx context.Context, f ClusterFilter) ([]*Cluster, int, error)
	// ClusterIDs returns the ID of every cluster, whoever owns it and
	// whether or not it is being deleted: what the controllers spread over
	// their processes, read at every shard round without the rows.
	ClusterIDs(ctx context.Context) ([]string, error)
	NodePool(ctx context.Context, id string) (*NodePool, error)
	NodePools(ctx context.Context, f NodePoolFilter) ([]*NodePool, int, error)
	// RawNodePool and RawNodePools are NodePool and NodePools with the
	// spec and status left as the stored JSON.
	RawNodePool(ctx context.Context, id string) (*RawNodePool, error)
	RawNodePools(ctx context.Context, f NodePoolFilter) ([]*RawNodePool, int, error)
	// NodePoolCounts returns how many pools each cluster f selects (by
	// Owner, Teams and ClusterID; other fields are ignored) has in each
	// phase, from counters kept with every write: a few rows per cluster,
	// whatever its pools. Phases without pools are left out.
	NodePoolCounts(ctx context.Context, f NodePoolFilter) ([]PoolCount, error)
	ControllerStatuses(ctx context.Context, poolID string) ([]ControllerStatus, error)
	// LogicalPool returns one logical pool (NOT_FOUND when none);
	// LogicalPools lists them in (created_at, id) order with the total, as
	// NodePools lists pools (Owner and Teams through the cluster).
	LogicalPool(ctx context.Context, id string) (*LogicalPool, error)
	LogicalPools(ctx context.Context, f LogicalPoolFilter) ([]*LogicalPool, int, error)
	// ClusterByCloudID returns the cluster registered for a cloud cluster
	// (Cluster.CloudID), NOT_FOUND when none is.
	ClusterByCloudID(ctx context.Context, cloudID string) (*Cluster, error)
	// ClusterFacts returns what kpool learnt of a cluster from its
	// provider (nil when nothing yet); PutClusterFacts replaces it (a
	// cluster that is gone keeps nothing).
	ClusterFacts(ctx context.Context, clusterID string) (*ClusterFacts, error)
	PutClusterFacts(ctx context.Context, clusterID string, f *ClusterFacts) error
	// InstallationID returns this kpool installation's id, made once with
	// the database: the mark on every pool it creates at a cloud.
	InstallationID(ctx context.Context) (string, error)
	// Events returns up to limit events with an id above after, oldest first.
	Events(ctx context.Context, after int64, limit int) ([]Event, error)
	// AuditEvents returns the events f selects, newest first: the audit
	// trail read back.
	AuditEvents(ctx context.Context, f EventFilter) ([]Event, error)

	// LastEventID returns the id of the newest event (0 when none).
	LastEventID(ctx context.Context) (int64, error)
	// PruneEvents deletes up to limit events created before before, oldest
	// first, and never the newest event; it returns how many it deleted.
	// Concurrent calls (every kpool process prunes) are harmless.
	PruneEvents(ctx context.Context, before time.Time, limit int) (int, error)
	// Subscribe returns a channel that receives a value (coalesced) after
	// a write with events commits: in this process, and on PostgreSQL in
	// any process on the database. Readers then read Events from their
	// cursor. The channel closes when ctx ends.
	Subscribe(ctx context.Context) <-chan struct{}

	// AcquireLease takes the lease name for holder until now+ttl, or
	// renews it if holder has it, and reports whether holder holds it.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease gives the lease up if holder has it.
	ReleaseLease(ctx context.Context, name, holder string) error
	// Leases lists the unexpired leases whose name begins with prefix, by
	// name, judged on the database's clock: the controllers' members and
	// shards.
	Leases(ctx context.Context, prefix string) ([]Lease, error)
	// RenewLeases renews, in one statement, every unexpired lease of holder
	// whose name begins with prefix until now+ttl; it returns how many.
	RenewLeases(ctx context.Context, prefix, holder string, ttl time.Duration) (int, error)

	Write(ctx context.Context, fn func(Tx) error) error
	// Insert is Write for a function that reads nothing in the transaction
	// (creates): the store may run it in one transaction with other
	// concurrent writes, committed together, so that a busy store pays a
	// transaction's cost (begin, commit, sync, round trips) once for many.
	// It fails only for its own reasons and is acknowledged only once
	// durable.
	Insert(ctx context.Context, fn func(Tx) error) error
	Ping(ctx context.Context) error
	Close() error
}

// Lease is a lease as Store.Leases finds it.
type Lease struct {
	Name, Holder string
	// Left is how long it lasts unrenewed, on the database's clock when it
	// was read.
	Left time.Duration
}

// Tx is one write transaction. Cluster and NodePool lock the row they return
// until the transaction ends, so a read-modify-write under them cannot lose an
// update. Lock a cluster before its pools.
//
// Writes may be queued and sent with the next read or the commit (so that a
// transaction costs a round trip per read, not per statement); their errors
// then come from that read, from Flush or from the commit, and a failed write
// aborts the whole transaction.
type Tx interface {
	Cluster(id string) (*Cluster, error)
	// NodePool locks a pool and returns it with its cluster (read, not
	// locked) and every controller's report on it: what a change of a pool
	// needs, in one round trip.
	NodePool(id string) (*NodePool, *Cluster, []ControllerStatus, error)
	// LiveNodePools locks and returns the pools of a cluster, deleting ones
	// included.
	LiveNodePools(clusterID string) ([]*NodePool, error)
	// HasNodePools reports whether a cluster has any pool.
	HasNodePools(clusterID string) (bool, error)
	// ProviderNamesTaken returns which of names other pools of the cluster
	// have as their provider name.
	ProviderNamesTaken(clusterID string, names []string) ([]string, error)
	ControllerStatuses(poolID string) ([]ControllerStatus, error)

	// CreateCluster inserts c. A live cluster of the same owner and name, or
	// the same id, is a CONFLICT; one of the same CloudID is
	// ErrCloudClusterTaken.
	CreateCluster(c *Cluster) error
	// UpdateCluster writes c as it is (generation and new resource version
	// included) where the stored resource version is still from; otherwise
	// it is a CONFLICT.
	UpdateCluster(c *Cluster, from string) error
	DeleteCluster(id string) error

	// CreateNodePool inserts p, which was checked against its cluster at
	// clusterGeneration. The same name or id is a CONFLICT, the same
	// provider name ErrProviderNameTaken; a cluster being deleted is
	// ErrClusterDeleting, one at another generation ErrClusterChanged, a
	// missing one NOT_FOUND.
	CreateNodePool(p *NodePool, clusterGeneration int64) error
	// UpdateNodePool writes p as UpdateCluster writes a cluster (its
	// provider name included: a replacement moves it to the successor).
	UpdateNodePool(p *NodePool, from string) error
	// DeleteNodePool removes the pool and its controller reports.
	DeleteNodePool(id string) error
	PutControllerStatus(poolID string, cs *ControllerStatus) error

	// LogicalPool locks a logical pool and returns it.
	LogicalPool(id string) (*LogicalPool, error)
	// CreateLogicalPool inserts lp: the same name in the cluster, or the
	// same id, is a CONFLICT; a missing cluster NOT_FOUND.
	CreateLogicalPool(lp *LogicalPool) error
	// UpdateLogicalPool writes lp as UpdateCluster writes a cluster.
	UpdateLogicalPool(lp *LogicalPool, from string) error
	// DeleteLogicalPool removes the logical pool's row (its members are
	// pools of their own, deleted by the caller). A cluster's logical pools
	// go with it (DeleteCluster).
	DeleteLogicalPool(id string) error

	// AddEvent appends to the outbox.
	AddEvent(e *Event) error
	// Flush sends queued writes and returns the first error: a dry run
	// flushes before it rolls back, so that it meets every conflict a real
	// write would.
	Flush() error
}

// ClusterFilter selects clusters. Empty fields select everything.
type ClusterFilter struct {
	// Owner, when set, selects the clusters Owner registered (created_by,
	// compared in lower case) and those of Teams.
	Owner string
	Teams []string
	Name  string // exactly this name
	Page
}

// NodePoolFilter selects node pools. Empty fields select everything.
type NodePoolFilter struct {
	// Owner, when set, selects the pools of clusters Owner registered and
	// of clusters of Teams.
	Owner     string
	Teams     []string
	ClusterID string
	Name      string // exactly this name
	Phase     Phase
	Health    Health
	// Labels selects the pools whose spec.labels it matches.
	Labels Selector
	Page
}

// PoolCount is how many pools of a cluster are in a phase.
type PoolCount struct {
	ClusterID string
	Phase     Phase
	N         int
}

// Page is a window of a list ordered by (created_at, id): either an offset,
// or a keyset cursor (After) for stable paging while rows are added.
type Page struct {
	Limit  int
	Offset int
	After  *Cursor
}

// Cursor is the position after which a keyset page starts.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// Event types written to the outbox.
const (
	EventClusterCreated   = "cluster.created"
	EventClusterUpdated   = "cluster.updated"
	EventClusterStatus    = "cluster.status"
	EventClusterDeleting  = "cluster.deleting"
	EventClusterDeleted   = "cluster.deleted"
	EventNodePoolCreated  = "nodepool.created"
	EventNodePoolUpdated  = "nodepool.updated"
	EventNodePoolStatus   = "nodepool.status"
	EventNodePoolDeleting = "nodepool.deleting"
	EventNodePoolDeleted  = "nodepool.deleted"
	// EventNodePoolReplaced: the pool's successor took its place at the
	// provider (its provider name changed); EventNodePoolRollback: someone
	// asked for a replacement to be undone.
	EventNodePoolReplaced = "nodepool.replaced"
	EventNodePoolRollback = "nodepool.rollback"
)

// Event is a row of the outbox, which is also the audit trail: what changed,
// from which generation to which, by whom, in which request. It commits in
// the same transaction as the change it describes, so no write goes
// unrecorded and no record outlives a write that rolled back.
type Event struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	ObjectID string `json:"object_id"`
	// ObjectName is the object's name when the event was written (a
	// pool's, cluster's, logical pool's, token's); "" on older events.
	ObjectName string `json:"object_name,omitempty"`
	ClusterID  string `json:"cluster_id"`
	// Owner is who registered the cluster and Team its team: who may read
	// the event.
	Owner string `json:"owner"`
	Team  string `json:"team,omitempty"`
	// GenerationBefore is the object's generation before the write (0 for
	// a create), Generation the one after it.
	GenerationBefore int64  `json:"generation_before"`
	Generation       int64  `json:"generation"`
	Actor            string `json:"actor"`
	// RequestID is the API request that made the change ("" for kpool's
	// own controllers); it is the request_id of the access log.
	RequestID string `json:"request_id,omitempty"`
	// TraceParent is the W3C traceparent of that request's span when kpool
	// traces (--otlp-endpoint), else "": the controllers' span for the work
	// the event causes links to it. Not part of the audit trail's answers.
	TraceParent string `json:"-"`
	// Detail says what changed, briefly: the spec fields of an update, a
	// controller's conditions, a forced delete.
	Detail    string    `json:"detail,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// EventFilter selects events of the audit trail. Empty fields select
// everything; Before pages back from an event id.
type EventFilter struct {
	// Owner, when set, selects the events of clusters Owner registered
	// (compared in lower case) and of clusters of Teams.
	Owner     string
	Teams     []string
	ClusterID string
	ObjectID  string
	// Type is an event type ("nodepool.updated") or a kind followed by a
	// dot ("nodepool.").
	Type   string
	Actor  string // compared in lower case
	Before int64  // only events with a smaller id (0: from the newest)
	Limit  int
}

// Default and maximum page sizes, and the deepest offset: an offset costs
// the rows it skips, so deeper pages are read by cursor (Page.After), which
// costs the same at any depth.
const (
	DefaultLimit = 50
	MaxLimit     = 100
	MaxOffset    = 10000
)
