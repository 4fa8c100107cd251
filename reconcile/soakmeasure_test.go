package reconcile_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kpool/kpool"
)

// latencies are the pools' times from a create or change to Ready, and
// each pool's cloud.
type latencies struct {
	start, done map[string]time.Time
	cloud       map[string]kpool.PlatformType
}

func (l *latencies) changed(id string) { l.start[id] = time.Now(); delete(l.done, id) }

func (l *latencies) drop(id string) { delete(l.start, id); delete(l.done, id) }

func (l *latencies) reset() { clear(l.start); clear(l.done) }

// ready records the first time a changed pool is seen Ready.
func (l *latencies) ready(id string, at time.Time) {
	if _, ok := l.start[id]; ok {
		if _, seen := l.done[id]; !seen {
			l.done[id] = at
		}
	}
}

// log writes the percentiles of each cloud's pools.
func (l *latencies) log(t *testing.T, what string) {
	clouds := map[kpool.PlatformType]bool{}
	for _, c := range l.cloud {
		clouds[c] = true
	}
	for _, c := range slices.Sorted(maps.Keys(clouds)) {
		p := l.percentiles(c)
		t.Logf("%s on %s: p50 %v, p90 %v, max %v", what, c, p[0].Round(10*time.Millisecond), p[1].Round(10*time.Millisecond), p[2].Round(10*time.Millisecond))
	}
}

// percentiles returns the 50th and 90th percentiles and the longest, of
// the pools of the clouds given (all when none is).
func (l *latencies) percentiles(clouds ...kpool.PlatformType) [3]time.Duration {
	var ds []time.Duration
	for id, t := range l.done {
		if len(clouds) == 0 || slices.Contains(clouds, l.cloud[id]) {
			ds = append(ds, t.Sub(l.start[id]))
		}
	}
	if len(ds) == 0 {
		return [3]time.Duration{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return [3]time.Duration{at(0.5), at(0.90), ds[len(ds)-1]}
}

// soakWait polls cond until it holds.
func soakWait(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	next := time.Now().Add(30 * time.Second)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("not converged after %v: %s", timeout, why)
		}
		if time.Now().After(next) {
			t.Logf("still waiting: %s", why)
			next = next.Add(30 * time.Second)
		}
		<-tick.C
	}
}

func clusterAt(cls []*kpool.Cluster, i int) *kpool.Cluster {
	if i < 0 {
		return nil
	}
	return cls[i]
}

func clusterOf(cls []*kpool.Cluster, id string) *kpool.Cluster {
	for _, c := range cls {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// soakRun is what one run of the soak measured.
type soakRun struct {
	create, change time.Duration // to converge after the creates, after the changes
	// Each pool's time from its create or change to Ready at that
	// generation: the 50th and 90th percentiles and the longest.
	createLat, changeLat [3]time.Duration
	calls, faulted       int      // emulator calls, and those with a fault
	throttled, hung      int      // 429s; calls to the hanging endpoint
	duplicates           int      // agent pools created more than once
	orphans              []string // agent pools no live kpool pool owns
	quickDeletes         int      // pools deleted right after their create
}
