package reconcile_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// records keeps every line the controllers log, as "LEVEL msg k=v ...".
type records struct {
	mu    sync.Mutex
	lines []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	return nil
}

// having returns the lines that contain every one of parts.
func (r *records) having(parts ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

// TestEventsSayWhy: a drift corrected, a quota refusal and a cluster that
// became unreachable and reachable again each leave a log line naming the
// pool or cluster, and an event whose detail says why; a cluster whose
// endpoint hangs is said to move to the slow lane, and back. The platform is
// any of the tests' (the fake driver stands for it).
func TestEventsSayWhy(t *testing.T) {
	t.Parallel()
	pts := make([]kpool.PlatformType, 0, len(platforms))
	for pt := range platforms {
		pts = append(pts, pt)
	}
	slices.Sort(pts)
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), pts[0])
		logs := &records{}
		stop := w.start("a", func(c *reconcile.Config) { c.Log, c.DriftInterval = slog.New(logs), time.Minute })
		defer stop()
		p := w.createPool("web", 2)
		w.until(10*time.Minute, w.ready(p.ID))
		logged := func(parts ...string) func() (bool, string) {
			return func() (bool, string) {
				return len(logs.having(parts...)) > 0, "no line with " + strings.Join(parts, ", ")
			}
		}
		events := func(typ string) string {
			l, err := w.svc.Events(w.ctx(), audit.Query{ClusterID: w.cluster.ID, Type: typ, Limit: kpool.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, e := range l.Items {
				b.WriteString(e.Detail + "\n")
			}
			return b.String()
		}

		// Changed behind kpool's back: found, corrected, said.
		if err := w.drv.Mutate(w.cluster, p.ProviderName, func(s *provider.PoolSpec) { s.Count = 4 }); err != nil {
			t.Fatal(err)
		}
		w.until(5*time.Minute, logged("INFO drift found", "pool=web", "fields=count"))
		w.until(5*time.Minute, logged("INFO update sent", "pool=web", "why=drift correction"))
		w.until(10*time.Minute, w.ready(p.ID))

		// A quota refusal: its kind and message in the log, its reason
		// and message in the events.
		quota := &provider.Error{Kind: provider.KindQuota, Provider: w.cluster.Spec.Platform.Type, Reason: "CPUs of the region: 8 left", Code: "QuotaExceeded", RequestID: "req-1"}
		w.drv.FailNext(fake.Update, 1, quota)
		w.patch(p.ID, `{"nodeCount":5}`)
		w.until(5*time.Minute, logged("WARN update failed", "pool=web", "kind=quota", "code=QuotaExceeded", "request_id=req-1", "8 left"))

		// A cluster that refuses kpool's identity, then answers again.
		w.drv.FailNext(fake.List, 1, &provider.Error{Kind: provider.KindPermissionDenied, Provider: w.cluster.Spec.Platform.Type, Reason: "the identity may not list pools"})
		w.patch(p.ID, `{"nodeCount":3}`)
		w.until(5*time.Minute, logged("WARN cluster unreachable", "cluster=prod", "reason=CredentialRefused"))
		w.until(15*time.Minute, logged("INFO cluster reachable again", "cluster=prod"))

		// An endpoint that stops answering: its calls move to the slow
		// lane, and back once it answers.
		w.drv.Hang(w.cluster, true)
		w.patch(p.ID, `{"nodeCount":2}`)
		w.until(5*time.Minute, logged("WARN cluster moved to the slow lane", "cluster=prod"))
		w.drv.Hang(w.cluster, false)
		w.until(15*time.Minute, logged("INFO cluster back in the main lane", "cluster=prod"))

		for typ, whys := range map[string][]string{
			kpool.EventNodePoolStatus: {"Ready=False (CorrectingDrift)", "Drifted=True (ChangedAtProvider)", "Drifted: count",
				"Ready=False (QuotaExceeded)", "CPUs of the region: 8 left"},
			kpool.EventClusterStatus: {"Reachable=False (CredentialRefused): the identity may not list pools", "Reachable=True (Listed)"},
		} {
			trail := events(typ)
			for _, why := range whys {
				if !strings.Contains(trail, why) {
					t.Errorf("no %s event says %q:\n%s", typ, why, trail)
				}
			}
		}
	})
}
