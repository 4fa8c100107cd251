package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// Unrouted is the operation of the calls no route took (a path the cloud
// does not serve): counted together, as their paths are not operations.
const Unrouted = "(unrouted)"

// CallCounts is what an emulator has answered since it started, by
// operation: the body of GET AdminPrefix+"calls", for a benchmark or a
// person to see what a client really sends, whatever it counts itself.
// Unlike the call log it is never cut.
type CallCounts struct {
	Operations []OperationCount `json:"operations"`
	Total      int              `json:"total"`
}

// OperationCount is the calls of one operation.
type OperationCount struct {
	Operation string `json:"operation"`
	Calls     int    `json:"calls"`
}

// callCount counts calls by operation; the engine's lock guards it.
type callCount struct {
	by    map[string]int
	total int
}

func (c *callCount) add(op string) {
	if op == "" {
		op = Unrouted
	}
	if c.by == nil {
		c.by = map[string]int{}
	}
	c.by[op]++
	c.total++
}

// CallCounts returns the calls answered so far by operation, the most
// called first (then by name).
func (e *Engine) CallCounts() CallCounts {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := CallCounts{Operations: make([]OperationCount, 0, len(e.counted.by)), Total: e.counted.total}
	for op, n := range e.counted.by {
		out.Operations = append(out.Operations, OperationCount{Operation: op, Calls: n})
	}
	sort.Slice(out.Operations, func(i, j int) bool {
		a, b := out.Operations[i], out.Operations[j]
		return a.Calls > b.Calls || a.Calls == b.Calls && a.Operation < b.Operation
	})
	return out
}

func (e *Engine) adminCalls(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(e.CallCounts())
}

// ReadCallCounts asks the emulator at endpoint (its origin) what it has
// answered, through c (which must trust its certificate): the client side
// of GET AdminPrefix+"calls", for benchmarks and tests in other processes.
func ReadCallCounts(ctx context.Context, c *http.Client, endpoint string) (CallCounts, error) {
	var out CallCounts
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+AdminPrefix+"calls", nil)
	if err != nil {
		return out, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("GET %s%scalls: %s", endpoint, AdminPrefix, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("GET %s%scalls: %w", endpoint, AdminPrefix, err)
	}
	return out, nil
}
