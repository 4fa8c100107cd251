package reconcile

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/scrub"
	"github.com/kpool/kpool/internal/tracing"
)

// A reconcile pass is a trace of its own, not a child of the requests
// that caused it: one pass answers any number of writes to its cluster,
// made by any process, and runs after they are answered. It links to each
// request whose event queued it (the traceparent the event keeps), the
// OpenTelemetry way of saying "caused by" across asynchronous work.

// maxLinks bounds the requests one pass links to; a burst of writes to a
// cluster links its first ones.
const maxLinks = 16

// follow remembers the request behind event e, for the next pass of its
// cluster to link to.
func (c *Controller) follow(e *kpool.Event) {
	if c.tracer == nil {
		return
	}
	sc, ok := tracing.Parse(e.TraceParent)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.links[e.ClusterID]) < maxLinks {
		c.links[e.ClusterID] = append(c.links[e.ClusterID], trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
			attribute.String(tracing.RequestID, e.RequestID), attribute.String("kpool.event", e.Type)}})
	}
}

// pass is the span of one reconcile pass over a cluster and the requests
// it links to. The pass's context carries it (passKey), for the pool
// steps to add links.
type pass struct {
	span  trace.Span
	links []trace.Link
}

type passKey struct{}

// startPass opens the span of a pass over cluster id, linked to the
// requests followed since its last pass; with tracing off, ctx as it is.
func (c *Controller) startPass(ctx context.Context, id string) (context.Context, *pass) {
	if c.tracer == nil {
		return ctx, nil
	}
	c.mu.Lock()
	links := c.links[id]
	delete(c.links, id)
	c.mu.Unlock()
	ctx, span := c.tracer.Start(ctx, "reconcile cluster", trace.WithNewRoot(), trace.WithLinks(links...),
		trace.WithAttributes(attribute.String("kpool.cluster_id", id)))
	p := &pass{span, links}
	return context.WithValue(ctx, passKey{}, p), p
}

// linkWriter links the pass in ctx to the request that wrote pool s.p's
// generation, when the pass is about to apply it (no report of this
// controller is at it yet) and does not link it already. The events feed
// links the passes it queues, but a pass already under way may read the
// write first and do its work: this link is what ties the provider call
// to its request whichever pass makes it. It reads the pool's latest
// events, only when tracing and only for a generation not applied yet.
func (s *poolScope) linkWriter(ctx context.Context) {
	p, _ := ctx.Value(passKey{}).(*pass)
	if p == nil || s.prev != nil && s.prev.ObservedGeneration >= s.p.Generation {
		return
	}
	evs, err := s.c.store.AuditEvents(ctx, kpool.EventFilter{ObjectID: s.p.ID, Type: "nodepool.", Limit: 10})
	if err != nil {
		return // a link is worth no failed pass
	}
	for _, e := range evs {
		if e.Generation != s.p.Generation || e.Type != kpool.EventNodePoolCreated && e.Type != kpool.EventNodePoolUpdated {
			continue
		}
		sc, ok := tracing.Parse(e.TraceParent)
		for _, l := range p.links {
			ok = ok && l.SpanContext.SpanID() != sc.SpanID()
		}
		if ok {
			l := trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
				attribute.String(tracing.RequestID, e.RequestID), attribute.String("kpool.event", e.Type)}}
			p.links = append(p.links, l)
			p.span.AddLink(l)
		}
		return
	}
}

// endPass closes a pass's span over cluster id with its outcome: ok,
// requeued (to follow what is under way), lane_busy (its turn comes
// again), or error. A pass that could not act (its lane busy) hands its
// links on to the next, which does the requests' work.
func (c *Controller) endPass(p *pass, id string, next time.Duration, err error) {
	if p == nil {
		return
	}
	span := p.span
	outcome := "ok"
	switch {
	case errors.Is(err, errLaneBusy):
		outcome = "lane_busy"
		c.mu.Lock()
		c.links[id] = append(p.links, c.links[id]...)[:min(maxLinks, len(p.links)+len(c.links[id]))]
		c.mu.Unlock()
	case err != nil:
		outcome = "error"
		span.SetStatus(codes.Error, scrub.String(err.Error()))
	case next > 0 || next == yield:
		outcome = "requeued"
	}
	span.SetAttributes(attribute.String("kpool.outcome", outcome))
	span.End()
}
