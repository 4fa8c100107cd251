package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The controllers' log: one line per action and outcome, each naming the
// cluster and pool (names and ids), the provider and the operation. INFO
// is what a person watching wants to read (a call sent, an operation
// finished or failed, drift, a re-create, a lane or reachability change,
// leadership); DEBUG the rest (retry scheduling). Lines carry errors as
// the provider's kind, code, message and request id, never a credential:
// drivers' errors name no secret, and the messages are the ones the
// status conditions already show.

// poolAttrs are the attributes of every line about the scope's pool.
func (s *poolScope) poolAttrs(extra ...any) []any {
	a := append(s.logAttrs(), "pool", s.p.Name, "pool_id", s.p.ID, "generation", s.p.Generation)
	return append(a, extra...)
}

// logPool writes a line about the scope's pool.
func (s *poolScope) logPool(ctx context.Context, level slog.Level, msg string, extra ...any) {
	s.c.cfg.Log.Log(ctx, level, msg, s.poolAttrs(extra...)...)
}

// called logs a call sent to the provider for the pool (op: create,
// update, delete) and its answer: INFO "<op> sent" once it was taken, WARN
// "<op> failed" with the provider's error otherwise; why says what the
// call is for (a new spec, a drift correction, a repair).
func (s *poolScope) called(ctx context.Context, op, why string, start time.Time, err error) {
	took := s.c.cfg.Clock.Since(start)
	attrs := []any{"operation", op, "duration_ms", ms(took)}
	if why != "" {
		attrs = append(attrs, "why", why)
	}
	if err == nil {
		s.st.sent[s.p.ID] = s.c.cfg.Clock.Now()
		s.logPool(ctx, slog.LevelInfo, op+" sent", attrs...)
		return
	}
	level := slog.LevelWarn
	switch {
	case provider.IsThrottled(err) || errors.Is(err, errLaneBusy) || ctx.Err() != nil:
		level = slog.LevelDebug // the cluster's pass ends and is retried: not this pool's failure
	case provider.IsBusy(err):
		level = slog.LevelInfo // another operation runs (GKE takes one at a time): it goes after
	}
	s.logPool(ctx, level, op+" failed", append(attrs, errAttrs(err)...)...)
}

// errAttrs are the log attributes of a driver's error: its kind, the
// cloud's code and request id when it gave them, and its message.
func errAttrs(err error) []any {
	var e *provider.Error
	if !errors.As(err, &e) {
		return []any{"error", err.Error()}
	}
	a := []any{"kind", string(e.Kind)}
	if e.Code != "" {
		a = append(a, "code", e.Code)
	}
	if e.RequestID != "" {
		a = append(a, "request_id", e.RequestID)
	}
	if e.RetryAfter > 0 {
		a = append(a, "retry_after", e.RetryAfter)
	}
	return append(a, "error", errorText(err))
}

// finished logs the end of an operation the pool was waiting on, as the
// last report said (its Ready reason), with how long it took since its
// call was taken (when this process sent it); nothing when the pool was
// not waiting on one.
func (s *poolScope) finished(ctx context.Context) {
	if s.prev == nil {
		return
	}
	op := operationOf(s.prev.Reason(kpool.ConditionReady))
	if op == "" {
		return
	}
	s.logPool(ctx, slog.LevelInfo, "operation finished", s.took("operation", op)...)
}

// took is attrs and how long since the pool's last call was taken, when
// this process sent it; it forgets the call.
func (s *poolScope) took(attrs ...any) []any {
	if at, ok := s.st.sent[s.p.ID]; ok {
		attrs = append(attrs, "duration_ms", ms(s.c.cfg.Clock.Since(at)))
		delete(s.st.sent, s.p.ID)
	}
	return attrs
}

// operationOf is the operation a Ready reason says the pool waits on
// ("" for none).
func operationOf(reason string) string {
	switch reason {
	case ReasonCreating, ReasonRecreating:
		return "create"
	case ReasonUpdating: // also the provider's neutral state Updating
		return "update"
	case ReasonCorrectingDrift:
		return "drift correction"
	case ReasonRepairingFailed:
		return "repair"
	case ReasonMarking:
		return "mark"
	}
	return ""
}

// slowLane moves the cluster's calls to its provider's slow lane, saying
// why when it was not there.
func (r *clusterRun) slowLane(ctx context.Context, err error) {
	if r.st.trust != hangs {
		r.c.cfg.Log.Log(ctx, slog.LevelWarn, "cluster moved to the slow lane: its endpoint stopped answering",
			append(r.logAttrs(), errAttrs(err)...)...)
	}
	r.st.trust = hangs
}

// answered records that the cluster's list succeeded: it leaves the slow
// lane, saying so when it was there.
func (r *clusterRun) answered(ctx context.Context) {
	if r.st.trust == hangs {
		r.c.cfg.Log.Log(ctx, slog.LevelInfo, "cluster back in the main lane: its endpoint answers again", r.logAttrs()...)
	}
	r.st.trust, r.st.failingSince = answers, time.Time{}
}

// ms is a duration in milliseconds, as the access log gives them: a
// number in JSON, where a time.Duration would be nanoseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
