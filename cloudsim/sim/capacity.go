package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
)

// Offering is where a cloud counts capacity: a zone (the cloud's own name
// for it: "2" on AKS, "us-west-2b" on EKS, an availability domain on OCI;
// "" where the cloud has none), a machine type, spot or on-demand.
type Offering struct {
	Zone        string `json:"zone"`
	MachineType string `json:"machineType"`
	Spot        bool   `json:"spot"`
}

func (o Offering) String() string {
	kind := "on-demand"
	if o.Spot {
		kind = "spot"
	}
	zone := o.Zone
	if zone == "" {
		zone = "(no zone)"
	}
	return fmt.Sprintf("%s %s %s", zone, o.MachineType, kind)
}

// CapacityEntry is an offering whose capacity is limited, and the nodes it
// can still start.
type CapacityEntry struct {
	Offering
	Available int `json:"available"`
}

// Capacity is the nodes each offering can still start. An offering it
// holds no entry for is unlimited, as every offering is until someone
// (SetCapacity, the admin route) limits it. Its methods run under the
// engine's lock: in handlers, an operation's Done, or Do.
type Capacity struct {
	left map[Offering]int
}

// Take starts up to want nodes of o and returns how many it could: want
// where o is unlimited, else at most what is left, which it lowers.
func (c *Capacity) Take(o Offering, want int) int {
	if want <= 0 {
		return 0
	}
	n, limited := c.left[o]
	if !limited {
		return want
	}
	got := min(want, n)
	c.left[o] = n - got
	return got
}

// Release gives back the capacity of n nodes of o that were removed
// (scaled down, deleted); an unlimited offering stays unlimited.
func (c *Capacity) Release(o Offering, n int) {
	if v, limited := c.left[o]; limited && n > 0 {
		c.left[o] = v + n
	}
}

// Available is how many nodes of o can start; ok is false when o is
// unlimited.
func (c *Capacity) Available(o Offering) (n int, ok bool) {
	n, ok = c.left[o]
	return n, ok
}

// Set limits o to n more nodes; n < 0 makes it unlimited again.
func (c *Capacity) Set(o Offering, n int) {
	if n < 0 {
		delete(c.left, o)
		return
	}
	if c.left == nil {
		c.left = map[Offering]int{}
	}
	c.left[o] = n
}

// Entries lists the limited offerings, sorted.
func (c *Capacity) Entries() []CapacityEntry {
	out := make([]CapacityEntry, 0, len(c.left))
	for o, n := range c.left {
		out = append(out, CapacityEntry{Offering: o, Available: n})
	}
	slices.SortFunc(out, func(a, b CapacityEntry) int {
		return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.MachineType, b.MachineType),
			cmp.Compare(fmt.Sprint(a.Spot), fmt.Sprint(b.Spot)))
	})
	return out
}

// Capacity is the emulator's capacity table; use it under the lock only
// (handlers, an operation's Done, Do).
func (e *Engine) Capacity() *Capacity { return &e.capacity }

// SetCapacity limits an offering to n more nodes (n < 0: unlimited), as
// the admin route does.
func (e *Engine) SetCapacity(o Offering, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.capacity.Set(o, n)
}

// AdminPrefix is where an emulator answers its operator rather than a
// cloud client: on its loopback listener, with no cloud credentials, never
// in the call log. GET AdminPrefix+"capacity" lists the limited offerings;
// POST with a CapacityEntry sets one ("available": -1 lifts the limit).
// GET AdminPrefix+"calls" counts the calls answered (see CallCounts).
const AdminPrefix = "/_cloudsim/"

// admin answers the operator's routes; false when r is not one of them.
func (e *Engine) admin(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, AdminPrefix) {
		return false
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err != nil || !net.ParseIP(host).IsLoopback() {
		http.Error(w, "the emulator's admin routes answer loopback clients only", http.StatusForbidden)
		return true
	}
	switch r.URL.Path {
	case AdminPrefix + "capacity":
		e.adminCapacity(w, r)
	case AdminPrefix + "calls":
		e.adminCalls(w, r)
	default:
		http.Error(w, "no such admin route: "+r.URL.Path, http.StatusNotFound)
	}
	return true
}

func (e *Engine) adminCapacity(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		var in CapacityEntry
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			http.Error(w, "body: want {\"zone\", \"machineType\", \"spot\", \"available\"}: "+err.Error(), http.StatusBadRequest)
			return
		}
		if in.MachineType == "" {
			http.Error(w, "machineType: required", http.StatusBadRequest)
			return
		}
		e.SetCapacity(in.Offering, in.Available)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
		return
	}
	e.mu.Lock()
	out := e.capacity.Entries()
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"capacity": out})
}
