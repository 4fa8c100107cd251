// Package traced is a kpool.Store decorator that gives each store
// transaction (Write, Insert) and each read a span, a child of the span of
// the request or reconcile pass that made it: where a request's time goes
// between the API and the database. Spans carry the operation's name and
// the database system, never SQL text or values.
//
// A call made outside any span (lease renewals, the events feed's polling,
// pruning) starts none, so that the process's background work does not
// fill the trace backend with one-span traces.
package traced

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/tracing"
)

// Store is a kpool.Store whose calls are traced. Methods it does not
// list (Subscribe, Close, and any the interface gains) are forwarded
// untraced.
type Store struct {
	kpool.Store
	tracer trace.Tracer
	system attribute.KeyValue
}

// New returns st traced on tp; system names the database ("sqlite",
// "postgresql") as the spans' db.system.name. With a nil tp it returns st
// itself: no tracing, no cost.
func New(st kpool.Store, tp trace.TracerProvider, system string) kpool.Store {
	if tp == nil {
		return st
	}
	return &Store{Store: st, tracer: tracing.Tracer(tp), system: attribute.String("db.system.name", system)}
}

// Unwrap returns the decorated store.
func (s *Store) Unwrap() kpool.Store { return s.Store }

// call runs fn in a span named store.<op>, when ctx is in a span.
func call[T any](s *Store, ctx context.Context, op string, fn func(context.Context) (T, error)) (T, error) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return fn(ctx)
	}
	ctx, span := s.tracer.Start(ctx, "store."+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(s.system, attribute.String("db.operation.name", op)))
	defer span.End()
	out, err := fn(ctx)
	if err != nil {
		// The code only: a database's message may quote a value.
		code := "error"
		var ke *kpool.Error
		if errors.As(err, &ke) {
			code = ke.Code
			span.SetAttributes(attribute.String("kpool.error_code", code))
		}
		span.SetStatus(codes.Error, code)
	}
	return out, err
}

// call0 is call for a function that returns only an error.
func call0(s *Store, ctx context.Context, op string, fn func(context.Context) error) error {
	_, err := call(s, ctx, op, func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) })
	return err
}

func (s *Store) Write(ctx context.Context, fn func(kpool.Tx) error) error {
	return call0(s, ctx, "Write", func(ctx context.Context) error { return s.Store.Write(ctx, fn) })
}

func (s *Store) Insert(ctx context.Context, fn func(kpool.Tx) error) error {
	return call0(s, ctx, "Insert", func(ctx context.Context) error { return s.Store.Insert(ctx, fn) })
}

func (s *Store) Cluster(ctx context.Context, id string) (*kpool.Cluster, error) {
	return call(s, ctx, "Cluster", func(ctx context.Context) (*kpool.Cluster, error) { return s.Store.Cluster(ctx, id) })
}

// listed is a page of a list and its total.
type listed[T any] struct {
	items []T
	total int
}

func (s *Store) ClusterIDs(ctx context.Context) ([]string, error) {
	return call(s, ctx, "ClusterIDs", func(ctx context.Context) ([]string, error) { return s.Store.ClusterIDs(ctx) })
}

func (s *Store) Clusters(ctx context.Context, f kpool.ClusterFilter) ([]*kpool.Cluster, int, error) {
	l, err := call(s, ctx, "Clusters", func(ctx context.Context) (listed[*kpool.Cluster], error) {
		items, total, err := s.Store.Clusters(ctx, f)
		return listed[*kpool.Cluster]{items, total}, err
	})
	return l.items, l.total, err
}

func (s *Store) NodePool(ctx context.Context, id string) (*kpool.NodePool, error) {
	return call(s, ctx, "NodePool", func(ctx context.Context) (*kpool.NodePool, error) { return s.Store.NodePool(ctx, id) })
}

func (s *Store) NodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.NodePool, int, error) {
	l, err := call(s, ctx, "NodePools", func(ctx context.Context) (listed[*kpool.NodePool], error) {
		items, total, err := s.Store.NodePools(ctx, f)
		return listed[*kpool.NodePool]{items, total}, err
	})
	return l.items, l.total, err
}

func (s *Store) RawNodePool(ctx context.Context, id string) (*kpool.RawNodePool, error) {
	return call(s, ctx, "RawNodePool", func(ctx context.Context) (*kpool.RawNodePool, error) { return s.Store.RawNodePool(ctx, id) })
}

func (s *Store) RawNodePools(ctx context.Context, f kpool.NodePoolFilter) ([]*kpool.RawNodePool, int, error) {
	l, err := call(s, ctx, "RawNodePools", func(ctx context.Context) (listed[*kpool.RawNodePool], error) {
		items, total, err := s.Store.RawNodePools(ctx, f)
		return listed[*kpool.RawNodePool]{items, total}, err
	})
	return l.items, l.total, err
}

func (s *Store) NodePoolCounts(ctx context.Context, f kpool.NodePoolFilter) ([]kpool.PoolCount, error) {
	return call(s, ctx, "NodePoolCounts", func(ctx context.Context) ([]kpool.PoolCount, error) { return s.Store.NodePoolCounts(ctx, f) })
}

func (s *Store) ControllerStatuses(ctx context.Context, poolID string) ([]kpool.ControllerStatus, error) {
	return call(s, ctx, "ControllerStatuses", func(ctx context.Context) ([]kpool.ControllerStatus, error) {
		return s.Store.ControllerStatuses(ctx, poolID)
	})
}

func (s *Store) LogicalPool(ctx context.Context, id string) (*kpool.LogicalPool, error) {
	return call(s, ctx, "LogicalPool", func(ctx context.Context) (*kpool.LogicalPool, error) { return s.Store.LogicalPool(ctx, id) })
}

func (s *Store) LogicalPools(ctx context.Context, f kpool.LogicalPoolFilter) ([]*kpool.LogicalPool, int, error) {
	l, err := call(s, ctx, "LogicalPools", func(ctx context.Context) (listed[*kpool.LogicalPool], error) {
		items, total, err := s.Store.LogicalPools(ctx, f)
		return listed[*kpool.LogicalPool]{items, total}, err
	})
	return l.items, l.total, err
}

func (s *Store) ClusterByCloudID(ctx context.Context, cloudID string) (*kpool.Cluster, error) {
	return call(s, ctx, "ClusterByCloudID", func(ctx context.Context) (*kpool.Cluster, error) { return s.Store.ClusterByCloudID(ctx, cloudID) })
}

func (s *Store) ClusterFacts(ctx context.Context, clusterID string) (*kpool.ClusterFacts, error) {
	return call(s, ctx, "ClusterFacts", func(ctx context.Context) (*kpool.ClusterFacts, error) { return s.Store.ClusterFacts(ctx, clusterID) })
}

func (s *Store) PutClusterFacts(ctx context.Context, clusterID string, f *kpool.ClusterFacts) error {
	return call0(s, ctx, "PutClusterFacts", func(ctx context.Context) error { return s.Store.PutClusterFacts(ctx, clusterID, f) })
}

func (s *Store) Events(ctx context.Context, after int64, limit int) ([]kpool.Event, error) {
	return call(s, ctx, "Events", func(ctx context.Context) ([]kpool.Event, error) { return s.Store.Events(ctx, after, limit) })
}

func (s *Store) AuditEvents(ctx context.Context, f kpool.EventFilter) ([]kpool.Event, error) {
	return call(s, ctx, "AuditEvents", func(ctx context.Context) ([]kpool.Event, error) { return s.Store.AuditEvents(ctx, f) })
}

func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	return call(s, ctx, "LastEventID", s.Store.LastEventID)
}

func (s *Store) PruneEvents(ctx context.Context, before time.Time, limit int) (int, error) {
	return call(s, ctx, "PruneEvents", func(ctx context.Context) (int, error) { return s.Store.PruneEvents(ctx, before, limit) })
}

func (s *Store) InstallationID(ctx context.Context) (string, error) {
	return call(s, ctx, "InstallationID", s.Store.InstallationID)
}

func (s *Store) Ping(ctx context.Context) error { return call0(s, ctx, "Ping", s.Store.Ping) }
