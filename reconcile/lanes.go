package reconcile

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// lanes are a provider's concurrency slots, one per call in flight: main
// for clusters known to answer, probe for clusters not known yet (first
// contact), slow for those whose endpoint stopped answering. A slot is
// held for a call, not for a pass: a pass reading and writing the store,
// or waiting out a Retry-After, holds none. Probe and slow slots are taken
// without waiting, and together with every other provider's they may hold
// at most half of the workers (Controller.risky): however many endpoints
// hang, the other half of the workers serve the clusters that answer.
type lanes struct{ main, probe, slow chan struct{} }

func newLanes(concurrency int) *lanes {
	n := max(1, concurrency)
	return &lanes{main: make(chan struct{}, n), probe: make(chan struct{}, max(1, n/4)), slow: make(chan struct{}, max(1, n/4))}
}

// errLaneBusy is a call put off because its cluster is not known to answer
// (it hung lately, or was never reached) and the slots for such clusters
// are taken: the pass ends there and the cluster is looked at again soon,
// without backing off.
var errLaneBusy = errors.New("the cluster is not known to answer in time and the slots for such clusters are busy")

// trust is what the controllers know of a cluster's endpoint.
type trust int

const (
	unknown trust = iota // never reached: its calls probe
	answers              // a list succeeded (now, or as its Reachable says)
	hangs                // a call ran out of time and no list succeeded since
)

// trustOf is what a cluster's stored status says of its endpoint, for a
// process that has not reached it yet: after a restart, endpoints that hung
// are slow and those that answered are trusted at once.
func trustOf(cl *kpool.Cluster) trust {
	c := cl.Status.Condition(kpool.ConditionReachable)
	switch {
	case c == nil:
		return unknown
	case c.Status == kpool.ConditionTrue:
		return answers
	case c.Reason == kpool.ReasonEndpointUnreachable:
		return hangs
	}
	return unknown
}

// acquire takes a slot for a call to a cluster of platform t: of the main
// lane, waiting for one, for a cluster that answers; of the probe or slow
// lane and of the risky share of workers, without waiting, for the others.
func (c *Controller) acquire(ctx context.Context, t kpool.PlatformType, tr trust) (release func(), err error) {
	l := c.lanes[t]
	if tr == answers {
		select {
		case l.main <- struct{}{}:
			return func() { <-l.main }, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	lane := l.probe
	if tr == hangs {
		lane = l.slow
	}
	select {
	case c.risky <- struct{}{}:
	default:
		return nil, errLaneBusy
	}
	select {
	case lane <- struct{}{}:
		return func() { <-lane; <-c.risky }, nil
	default:
		<-c.risky
		return nil, errLaneBusy
	}
}

// laned is a cluster's driver for one pass: each call takes a slot of its
// provider's lanes (as the cluster's trust says) and gives it back when it
// returns.
type laned struct {
	provider.Driver
	c      *Controller
	t      kpool.PlatformType
	st     *clusterState
	writes atomic.Int32 // creates, updates and deletes sent
}

// Unwrap returns the driver it decorates.
func (l *laned) Unwrap() provider.Driver { return l.Driver }

func (l *laned) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	release, err := l.c.acquire(ctx, l.t, l.st.trust)
	if err != nil {
		return nil, err
	}
	defer release()
	return l.Driver.NodePoolList(ctx, c)
}

func (l *laned) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	release, err := l.c.acquire(ctx, l.t, l.st.trust)
	if err != nil {
		return nil, err
	}
	defer release()
	l.writes.Add(1)
	return l.Driver.NodePoolCreate(ctx, c, s)
}

func (l *laned) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	release, err := l.c.acquire(ctx, l.t, l.st.trust)
	if err != nil {
		return nil, err
	}
	defer release()
	l.writes.Add(1)
	return l.Driver.NodePoolUpdate(ctx, c, s)
}

func (l *laned) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	release, err := l.c.acquire(ctx, l.t, l.st.trust)
	if err != nil {
		return err
	}
	defer release()
	l.writes.Add(1)
	return l.Driver.NodePoolDelete(ctx, c, providerName)
}
