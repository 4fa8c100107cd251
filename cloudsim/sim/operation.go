package sim

import (
	"slices"
	"strings"
	"time"
)

// Operation is a simulated long-running operation, started by
// Request.Start. Its nodes move one at a time, NodeTime apart, from From
// to To; it ends at End, Failed if Fails.
type Operation struct {
	ID   string
	Kind string // the emulator's name for it (Creating, Deleting, ...)
	// Start and End are on the engine's clock.
	Start, End time.Time
	// From and To are the node counts at the start and at the end.
	From, To int
	// Fails is true for an operation that ends Failed (an injected fault).
	Fails bool
	// Data is the emulator's own record of the operation.
	Data any
	// Done, when set, runs under the engine's lock when the operation
	// ends: it applies the operation's outcome to the emulator's state.
	Done func(*Operation)

	nodeTime time.Duration
	ended    bool
}

// Running reports whether the operation has not ended yet.
func (o *Operation) Running() bool { return !o.ended }

// Nodes is the node count at t: it moves one node every NodeTime from
// From towards To, and is To once the operation has ended.
func (o *Operation) Nodes(t time.Time) int {
	n := o.To - o.From
	steps := abs(n)
	if o.nodeTime > 0 && t.Before(o.End) {
		steps = min(steps, int(max(t.Sub(o.Start), 0)/o.nodeTime))
	}
	if n < 0 {
		return o.From - steps
	}
	return o.From + steps
}

// HealAt is when what the operation left broken, had it failed, is whole
// again: a cloud keeps at what failed (launching instances, removing
// them) and gets there as long again as the operation took.
func (o *Operation) HealAt() time.Time { return o.End.Add(o.End.Sub(o.Start)) }

// Due reports whether a time an emulator set (a HealAt) has come at now;
// the zero time never comes.
func Due(at, now time.Time) bool { return !at.IsZero() && !now.Before(at) }

// NodesReady is the count of nodes up at t for a cloud that reports each
// node once it is built: the operation's fixed time comes first, then the
// nodes move one every NodeTime, the last at End. (Nodes moves them from
// Start, as a cloud that counts machines being made does.)
func (o *Operation) NodesReady(t time.Time) int {
	lead := o.End.Sub(o.Start) - time.Duration(abs(o.To-o.From))*o.nodeTime
	return o.Nodes(t.Add(-max(lead, 0)))
}

// keptOperations is how many ended operations stay found by id; older
// ones are forgotten.
const keptOperations = 10000

// operations are the running operations and the recently ended ones.
type operations struct {
	byID    map[string]*Operation
	running []*Operation // in the order started
	ended   []*Operation // oldest first
}

func (s *operations) add(o *Operation) {
	s.byID[idKey(o.ID)] = o
	s.running = append(s.running, o)
}

func (s *operations) get(id string) *Operation { return s.byID[idKey(id)] }

// advance ends the operations whose End is not after now, earliest End
// first, and forgets the oldest ended ones beyond keptOperations.
func (s *operations) advance(now time.Time) {
	var due []*Operation
	s.running = slices.DeleteFunc(s.running, func(o *Operation) bool {
		if now.Before(o.End) {
			return false
		}
		due = append(due, o)
		return true
	})
	slices.SortStableFunc(due, func(a, b *Operation) int { return a.End.Compare(b.End) })
	for _, o := range due {
		o.ended = true
		s.ended = append(s.ended, o)
		if o.Done != nil {
			o.Done(o)
		}
	}
	if n := len(s.ended) - keptOperations; n > 0 {
		for _, o := range s.ended[:n] {
			delete(s.byID, idKey(o.ID))
		}
		s.ended = append([]*Operation(nil), s.ended[n:]...)
	}
}

// idKey is how operation ids are compared: without case.
func idKey(id string) string { return strings.ToLower(id) }
