package api

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpool/kpool/placement"
	"github.com/kpool/kpool/store/testdb"
)

// floodBody is a placement request of about size bytes of docs documents:
// Deployments with a container each.
func floodBody(docs, size int) string {
	doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web-%d}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - {name: app, image: nginx, args: [%q]}\n"
	pad := strings.Repeat("x", max(0, size/docs-200))
	parts := make([]string, docs)
	for i := range parts {
		parts[i] = fmt.Sprintf(doc, i, pad)
	}
	b, _ := jsonString(strings.Join(parts, "---\n"))
	return `{"manifests":` + b + `,"pool":"web"}`
}

func jsonString(s string) (string, error) { return strconv.Quote(s), nil }

// rss is the process's resident memory in MB (Linux), 0 elsewhere.
func rss() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkPlacementFlood is the audit's placement flood (N3): 16
// concurrent 1 MiB placements from one caller, each the most documents a
// placement takes (placement.MaxDocuments), against one server. It
// reports the peak resident memory of the process while they run, and how
// many were refused by the caller's rate (a placement costs a request per
// 64 KiB).
func BenchmarkPlacementFlood(b *testing.B) {
	a := newTestAPI(&testing.T{}, testdb.SQLite)
	c := a.cluster(user, "flood", gcpCluster)
	a.pool(user, c.ID, "web")
	body := floodBody(placement.MaxDocuments, 1<<20)
	var peak float64
	refused := 0
	for b.Loop() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(5 * time.Millisecond):
					if m := rss(); m > peak {
						peak = m
					}
				}
			}
		}()
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/placements", body)
				if r.status != 200 {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(done)
	}
	b.ReportMetric(peak, "peak-RSS-MB")
	b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
}

// TestPlacementCost: a placement costs its caller a request per 64 KiB of
// body besides itself, so a caller's burst of 1 MiB placements runs out
// after a few, and the refusal is 429 with Retry-After.
func TestPlacementCost(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	c := a.cluster(user, "costly", gcpCluster)
	a.pool(user, c.ID, "web")
	lim := NewLimiter(1, 40)
	lim.now = func() time.Time { return time.Unix(0, 0) } // no refill
	a.server.Limit(lim)
	body := floodBody(100, 1<<20)
	statuses := []int{}
	for range 3 {
		statuses = append(statuses, a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/placements", body).status)
	}
	if fmt.Sprint(statuses) != "[200 200 429]" {
		t.Fatalf("three 1 MiB placements on a burst of 40: %v, want [200 200 429] (each costs 1 + 16)", statuses)
	}
}
