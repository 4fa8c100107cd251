package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// The fleet's clouds: one emulator per cluster (cluster i on cloud i mod
// the clouds), each with its demo cluster, all served over TLS on loopback
// under one CA. An emulator of its own per cluster is how the soak spreads
// clusters too: every cloud's emulator holds its demo cluster and nothing
// else is needed of it, and kpool tells the clusters apart by endpoint.

// fleetEmulator is one served emulator and the cluster it holds.
type fleetEmulator struct {
	cloud clouds.Cloud
	ep    *sim.TLSEndpoint
	name  string // the cluster's name in kpool
	spec  kpool.ClusterSpec
	id    string // its id in kpool, once registered
}

// fleetClouds are the clouds named in -fleet.clouds, in catalog order.
func fleetClouds(names []string) ([]clouds.Cloud, error) {
	var out []clouds.Cloud
	for _, c := range clouds.All() {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(out, func(c clouds.Cloud) bool { return c.Name == n }) {
			return nil, fmt.Errorf("-fleet.clouds: no cloud %q; known: %s", n, strings.Join(clouds.Names(), ", "))
		}
	}
	return out, nil
}

// startEmulators serves n emulators round the clouds, on timings o, and
// writes the CA to dir/ca.pem for the kpool processes. They stop when the
// returned function is called.
func startEmulators(cs []clouds.Cloud, n int, o sim.Options, dir string) ([]*fleetEmulator, *sim.CA, func(), error) {
	ca, err := sim.NewCA()
	if err != nil {
		return nil, nil, nil, err
	}
	var emus []*fleetEmulator
	stop := func() {
		for _, e := range emus {
			_ = e.ep.Close()
		}
	}
	for i := range n {
		cloud := cs[i%len(cs)]
		e, err := cloud.Emulator(o)
		if err != nil {
			stop()
			return nil, nil, nil, fmt.Errorf("%s emulator: %w", cloud.Name, err)
		}
		ep, err := ca.Serve(e, "127.0.0.1:0")
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		demo := e.Clusters(ep.URL)
		if len(demo) == 0 {
			_ = ep.Close()
			stop()
			return nil, nil, nil, fmt.Errorf("%s emulator holds no demo cluster", cloud.Name)
		}
		emus = append(emus, &fleetEmulator{cloud: cloud, ep: ep, name: fmt.Sprintf("%s-%03d", cloud.Name, i/len(cs)+1), spec: demo[0].Spec})
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), ca.PEM, 0o644); err != nil {
		stop()
		return nil, nil, nil, err
	}
	return emus, ca, stop, nil
}

// emulatorURLs are the emulators' origins, comma-separated, for
// kpool's --emulators.
func emulatorURLs(emus []*fleetEmulator) string {
	var out []string
	for _, e := range emus {
		out = append(out, e.ep.URL)
	}
	return strings.Join(out, ",")
}

// callCounts reads every emulator's GET /_cloudsim/calls (loopback, TLS
// under the emulators' CA), by emulator.
func callCounts(ctx context.Context, ca *sim.CA, emus []*fleetEmulator) ([]sim.CallCounts, error) {
	c := &http.Client{Transport: sim.Transport(ca.Pool), Timeout: 30 * time.Second}
	defer c.CloseIdleConnections()
	out := make([]sim.CallCounts, len(emus))
	for i, e := range emus {
		var err error
		if out[i], err = sim.ReadCallCounts(ctx, c, e.ep.URL); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cloudCalls are a cloud's calls between two readings of callCounts, in all
// and by operation.
type cloudCalls struct {
	Total int            `json:"total"`
	By    map[string]int `json:"by_operation"`
}

// callsByCloud sums the calls each emulator answered between before and
// after (before nil: since it started), by cloud.
func callsByCloud(emus []*fleetEmulator, before, after []sim.CallCounts) map[string]*cloudCalls {
	out := map[string]*cloudCalls{}
	for i, e := range emus {
		cc := out[e.cloud.Name]
		if cc == nil {
			cc = &cloudCalls{By: map[string]int{}}
			out[e.cloud.Name] = cc
		}
		for _, op := range after[i].Operations {
			cc.By[op.Operation] += op.Calls
		}
		cc.Total += after[i].Total
		if before != nil {
			for _, op := range before[i].Operations {
				cc.By[op.Operation] -= op.Calls
			}
			cc.Total -= before[i].Total
		}
		for op, n := range cc.By {
			if n == 0 {
				delete(cc.By, op)
			}
		}
	}
	return out
}

// top names a cloud's most-called operations, "op ×n", at most k.
func (c *cloudCalls) top(k int) string {
	type opN struct {
		op string
		n  int
	}
	var ops []opN
	for op, n := range c.By {
		ops = append(ops, opN{op, n})
	}
	slices.SortFunc(ops, func(a, b opN) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.op, b.op)
	})
	var parts []string
	for _, o := range ops[:min(k, len(ops))] {
		parts = append(parts, fmt.Sprintf("`%s` ×%d", o.op, o.n))
	}
	return strings.Join(parts, ", ")
}

// poolSpec is the spec of the i-th pool on a platform: its profile's
// example machine type and flags (those kpool dev suggests), one node and,
// where the cloud has zones, one of zones 1-3; as the soak's, but with one
// node, so that 30 pools a cluster stay within the emulators' quotas.
func poolSpec(p provider.Profile, i int) json.RawMessage {
	block := p.CLI().ExampleBlock()
	spec := map[string]any{"platform": map[string]any{string(p.Type()): block}, "nodeCount": 1}
	if p.Capabilities().Zones != provider.ZonesNone {
		spec["zones"] = []string{strconv.Itoa(1 + i%3)}
	}
	b, _ := json.Marshal(spec)
	return b
}
