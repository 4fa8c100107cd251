package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// registerClusters registers each emulator's cluster with kpool under the
// run's name for it.
func registerClusters(ctx context.Context, c *client, emus []*fleetEmulator) error {
	for _, e := range emus {
		spec, err := json.Marshal(e.spec)
		if err != nil {
			return err
		}
		var out struct{ ID string }
		if err := c.do(ctx, "POST", "/api/v1/clusters", map[string]any{"name": e.name, "spec": json.RawMessage(spec)}, &out); err != nil {
			return err
		}
		e.id = out.ID
	}
	return nil
}

// createPools creates m pools in each cluster through the API, with
// workers requests at once, the clusters taking turns.
func createPools(ctx context.Context, c *client, emus []*fleetEmulator, m, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := int64(m * len(emus))
	var next atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for range min(int64(workers), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < n && ctx.Err() == nil; i = next.Add(1) - 1 {
				e := emus[i%int64(len(emus))]
				body := map[string]any{"name": fmt.Sprintf("p%05d", i/int64(len(emus))+1), "cluster_id": e.id,
					"spec": poolSpec(e.cloud.Profile, int(i))}
				if err := c.do(ctx, "POST", "/api/v1/nodepools", body, nil); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("creating a pool in %s: %w", e.name, err); cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// waitConverged polls the API until total pools are Ready, failing when a
// process exits or timeout passes; it prints progress every 10 seconds.
func waitConverged(ctx context.Context, c *client, total int, ps []*proc, timeout time.Duration) error {
	start := time.Now()
	last := start
	for {
		ready, err := c.phaseCount(ctx, "Ready")
		if err != nil {
			return err
		}
		if ready >= total {
			return nil
		}
		if failed, why, err := c.failedPool(ctx); err != nil || failed > 0 {
			return fmt.Errorf("%d pools Failed, such as: %s (%v)", failed, why, err)
		}
		for _, p := range ps {
			if err := p.alive(); err != nil {
				return err
			}
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("%d of %d pools Ready after %s", ready, total, timeout)
		}
		if time.Since(last) >= 10*time.Second {
			progress("  %d of %d pools Ready after %.0fs", ready, total, time.Since(start).Seconds())
			last = time.Now()
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// phaseCount is the number of pools in the phase, over every cluster.
func (c *client) phaseCount(ctx context.Context, phase string) (int, error) {
	var p page
	err := c.do(ctx, "GET", "/api/v1/nodepools?limit=1&status="+phase, nil, &p)
	return p.Total, err
}

// failedPool is the number of Failed pools and the message of one.
func (c *client) failedPool(ctx context.Context) (int, string, error) {
	var p struct {
		NodePools []struct {
			Name   string
			Status struct{ Message string }
		} `json:"nodepools"`
		Total int `json:"total"`
	}
	err := c.do(ctx, "GET", "/api/v1/nodepools?limit=1&status=Failed", nil, &p)
	if err != nil || len(p.NodePools) == 0 {
		return p.Total, "", err
	}
	return p.Total, p.NodePools[0].Name + ": " + p.NodePools[0].Status.Message, nil
}
