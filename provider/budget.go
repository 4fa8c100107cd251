package provider

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/kpool/kpool"
)

// Call budgets: every HTTP request a driver sends to its cloud's API takes
// a token of the budget of the cloud account it is charged to, at the wire
// (Wire), just before the transport; SDK retries included, each being a
// request of its own. What to charge travels in the request's context, so
// drivers need nothing but to pass their context on: the controllers put
// the account's budget (WithGate), the pass's priority (WithPriority) and
// meters that count what was sent (WithMeter) in the context of a pass.

// Account is the cloud account a cluster's calls are charged to: what the
// cloud counts its request quotas by. Key is an id or a name, never a
// secret (a credential's name stands in where no account id is known).
type Account struct {
	Platform kpool.PlatformType
	Key      string
	// Region is "" where the cloud counts the whole account together.
	Region string
}

// String is the account as logs, metrics and the dashboard name it.
func (a Account) String() string {
	s := string(a.Platform) + "/" + a.Key
	if a.Region != "" {
		s += "/" + a.Region
	}
	return s
}

// Quota is the share of an account's documented request quotas kpool takes:
// reads and writes per second, and the bursts above them. A rate of 0 is
// no limit.
type Quota struct {
	Reads      float64
	ReadBurst  int
	Writes     float64
	WriteBurst int
}

// Accounts is what a profile implements to name the account each cluster's
// calls are charged to, and the share of its quotas kpool takes by default.
type Accounts interface {
	Account(c *kpool.Cluster) Account
	Quota() Quota
}

// DefaultQuota is the share of a profile that names no quota of its own:
// generous, so that it never holds an emulated or self-hosted platform back.
var DefaultQuota = Quota{Reads: 50, ReadBurst: 100, Writes: 20, WriteBurst: 40}

// AccountOf returns the account cluster c's calls are charged to, and its
// quota: its profile's, or for a profile that names none, one account per
// credential and region with DefaultQuota.
func AccountOf(p Profile, c *kpool.Cluster) (Account, Quota) {
	if a, ok := p.(Accounts); ok {
		return a.Account(c), a.Quota()
	}
	return Account{Platform: p.Type(), Key: CredentialKey(c), Region: p.Region(&c.Spec)}, DefaultQuota
}

// CredentialKey names the credential c's calls are sent with: its
// spec.credential, or "default" for the platform's default credential.
func CredentialKey(c *kpool.Cluster) string {
	if c.Spec.Credential != "" {
		return c.Spec.Credential
	}
	return "default"
}

// Access is what a request does to the account's quota: read or write.
type Access int

const (
	Read Access = iota
	Write
)

func (k Access) String() string {
	if k == Write {
		return "write"
	}
	return "read"
}

// AccessOf is a request's access by its method: GET and HEAD read, the others
// write.
func AccessOf(method string) Access {
	switch method {
	case http.MethodGet, http.MethodHead, "":
		return Read
	}
	return Write
}

// Priority orders the reads waiting for an account's budget: a read made
// for a person's change goes ahead of one made by a drift pass. Writes go
// ahead of both.
type Priority int

const (
	// Change: the pass acts on a change a person asked for (the default).
	Change Priority = iota
	// Drift: the pass only looks for drift on settled pools.
	Drift
)

func (p Priority) String() string {
	if p == Drift {
		return "drift"
	}
	return "change"
}

// Gate holds a request until a budget lets it go.
type Gate interface {
	// Take waits for a token for a request of access k at priority p; it
	// returns the context's error if that ends first.
	Take(ctx context.Context, k Access, p Priority) error
	// Answered tells the gate how a call charged to it ended (Throttled
	// slows it down); k is the call's access.
	Answered(k Access, err error)
}

type (
	gatesKey    struct{}
	priorityKey struct{}
	meterKey    struct{}
	holderKey   struct{}
)

// Holder stops a call's clock while one of its requests waits for a
// budget: waiting its turn is not a provider that fails to answer (the
// deadline decorator is one).
type Holder interface {
	// Hold stops the clock until resume is called.
	Hold() (resume func())
}

// WithHolder returns ctx whose requests' waits for a budget hold h.
func WithHolder(ctx context.Context, h Holder) context.Context {
	return context.WithValue(ctx, holderKey{}, h)
}

// gates is a context's gates, the last added first.
type gates struct {
	g    Gate
	next *gates
}

// WithGate returns ctx whose requests wait at g too.
func WithGate(ctx context.Context, g Gate) context.Context {
	next, _ := ctx.Value(gatesKey{}).(*gates)
	return context.WithValue(ctx, gatesKey{}, &gates{g: g, next: next})
}

// WithPriority returns ctx whose reads wait at priority p.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf is ctx's priority (Change unless set).
func PriorityOf(ctx context.Context) Priority {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}

// Charged reports whether ctx's requests are charged to any gate.
func Charged(ctx context.Context) bool {
	_, ok := ctx.Value(gatesKey{}).(*gates)
	return ok
}

// Gates calls f with each gate of ctx, the last added first, until f
// returns an error, which it returns.
func Gates(ctx context.Context, f func(Gate) error) error {
	for g, _ := ctx.Value(gatesKey{}).(*gates); g != nil; g = g.next {
		if err := f(g.g); err != nil {
			return err
		}
	}
	return nil
}

// Answered tells every gate of ctx how a call of access k ended.
func Answered(ctx context.Context, k Access, err error) {
	for g, _ := ctx.Value(gatesKey{}).(*gates); g != nil; g = g.next {
		g.g.Answered(k, err)
	}
}

// Meter counts the requests sent under a context, by access; a meter in a
// meter's context counts into both. Safe for concurrent use.
type Meter struct {
	reads, writes atomic.Int64
	parent        *Meter
}

// WithMeter returns ctx with a new meter, which counts what is sent under it.
func WithMeter(ctx context.Context) (context.Context, *Meter) {
	parent, _ := ctx.Value(meterKey{}).(*Meter)
	m := &Meter{parent: parent}
	return context.WithValue(ctx, meterKey{}, m), m
}

// Reads and Writes are the requests counted so far.
func (m *Meter) Reads() int64  { return m.reads.Load() }
func (m *Meter) Writes() int64 { return m.writes.Load() }

// Charge is what the wire does before it sends a request of access k under
// ctx: wait at each of ctx's gates (its Holder held meanwhile), then count
// it on each of its meters. A
// driver that answers from elsewhere than HTTP (a test's fake) may call it
// for each request it stands for.
func Charge(ctx context.Context, k Access) error {
	p := PriorityOf(ctx)
	first, _ := ctx.Value(gatesKey{}).(*gates)
	if h, ok := ctx.Value(holderKey{}).(Holder); ok && first != nil {
		resume := h.Hold()
		defer resume()
	}
	for g := first; g != nil; g = g.next {
		if err := g.g.Take(ctx, k, p); err != nil {
			return err
		}
	}
	for m, _ := ctx.Value(meterKey{}).(*Meter); m != nil; m = m.parent {
		if k == Write {
			m.writes.Add(1)
		} else {
			m.reads.Add(1)
		}
	}
	return nil
}

// Spend is one request charged to an account's budget, as its observers
// hear of it: how long it waited for its token (0: not at all), the rate
// the budget allowed then (+Inf: no limit), and when, on the budget's clock.
type Spend struct {
	Account Account
	Access  Access
	Waited  time.Duration
	Limit   float64
	At      time.Time
}
