package reconcile_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/testdb"
)

// TestDriftFightStops: a provider that undoes every correction (an agent
// that relabels the pool, a value the cloud owns) is corrected three times
// in a row, then no more: the pool says Drifted=True ProviderKeepsChanging
// with the field, kpool_drift_fights_total counts it once, and no update is
// sent however long it lasts. A new spec tries again.
func TestDriftFightStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, testdb.SQLite(t), kpool.PlatformAzure)
		stop := w.start("a")
		defer stop()
		p := w.createPool("web", 2, "1")
		w.until(5*time.Minute, w.converged(nil))
		updates := w.calls(fake.Update, p.ProviderName)

		// The provider puts its own value back whenever kpool's is there.
		undo := func() {
			fp, _ := w.drv.Pool(w.cluster, p.ProviderName)
			if fp.Labels["team"] != "agent" && fp.State == provider.StateReady {
				if err := w.drv.Mutate(w.cluster, p.ProviderName, func(s *provider.PoolSpec) { s.Labels["team"] = "agent" }); err != nil {
					t.Fatal(err)
				}
			}
		}
		undo()
		w.until(30*time.Minute, func() (bool, string) {
			undo()
			got := condition(w.report(p.ID), kpool.ConditionDrifted)
			return strings.HasPrefix(got, "True "+reconcile.ReasonKeepsChanging), got
		})
		if n := w.calls(fake.Update, p.ProviderName) - updates; n != 3 {
			t.Fatalf("%d corrections before stopping, want 3", n)
		}
		rp := w.report(p.ID)
		for _, c := range rp.Conditions {
			if c.Type == kpool.ConditionDrifted && (!strings.Contains(c.Message, "labels") || !strings.Contains(c.Message, "keeps changing")) {
				t.Fatalf("Drifted says %q: want the field and that the provider keeps changing it", c.Message)
			}
		}
		if got := w.counter("kpool_drift_fights_total"); got != 1 {
			t.Fatalf("kpool_drift_fights_total = %v, want 1", got)
		}
		if ok, why := w.ready(p.ID)(); !ok {
			t.Fatalf("a pool whose drift kpool gave up on is still Ready: %s", why)
		}
		// An hour of passes later: no more updates, the metric counted once.
		before := w.calls(fake.Update, p.ProviderName)
		w.advance(time.Hour)
		if n := w.calls(fake.Update, p.ProviderName) - before; n != 0 {
			t.Fatalf("%d updates after kpool stopped correcting", n)
		}
		if got := w.counter("kpool_drift_fights_total"); got != 1 {
			t.Fatalf("kpool_drift_fights_total = %v after an hour, want 1", got)
		}
		// A new spec is tried: here one that agrees with the provider.
		w.patch(p.ID, `{"labels":{"team":"agent"}}`)
		w.until(5*time.Minute, func() (bool, string) {
			got := condition(w.report(p.ID), kpool.ConditionDrifted)
			ok, why := w.ready(p.ID)()
			return ok && strings.HasPrefix(got, "False"), fmt.Sprintf("Drifted %s; %s", got, why)
		})
	})
}
