package main

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/service"
)

// What TestControllerKill reads of its fleet: who holds which cluster, the
// pools' phases, and what each cloud was asked.

// shardHolders are the holders of the shards' unexpired leases, by shard.
func (f *killFleet) shardHolders() map[int]string {
	ls, err := f.st.Leases(context.Background(), reconcile.LeaseName+"/shard/")
	if err != nil {
		f.t.Fatal(err)
	}
	holders := map[int]string{}
	for _, l := range ls {
		if n, err := strconv.Atoi(strings.TrimPrefix(l.Name, reconcile.LeaseName+"/shard/")); err == nil {
			holders[n] = l.Holder
		}
	}
	return holders
}

// heldBy says whether every shard's lease is held by one of ps.
func (f *killFleet) heldBy(ps []*kpoolProc) (bool, string, error) {
	holders := f.shardHolders()
	by, theirs := map[string]int{}, 0
	for n := range killShards {
		h, ok := holders[n]
		if !ok {
			h = "nobody"
		}
		for _, p := range ps {
			if holdsPID(h, p.cmd.Process.Pid) {
				h = p.name
				theirs++
			}
		}
		by[h]++
	}
	return theirs == killShards, fmt.Sprintf("shards by holder: %v", by), nil
}

// victim is the controller process whose shards hold the most clusters,
// and those clusters, as the shard leases in the database say.
func (f *killFleet) victim() (int, []*killCluster) {
	holders := f.shardHolders()
	best, mine := -1, []*killCluster(nil)
	for i, p := range f.ctls {
		var cs []*killCluster
		for _, c := range f.clusters {
			if holdsPID(holders[reconcile.ShardOf(c.id, killShards)], p.cmd.Process.Pid) {
				cs = append(cs, c)
			}
		}
		if len(cs) > len(mine) {
			best, mine = i, cs
		}
	}
	if best < 0 {
		f.t.Fatalf("no controller process holds a cluster's shard: %v", holders)
	}
	return best, mine
}

// leaseEnd is when the member lease of p runs out, on this host's clock:
// its last renewal's, once p is dead.
func (f *killFleet) leaseEnd(p *kpoolProc) time.Time {
	ls, err := f.st.Leases(context.Background(), reconcile.LeaseName+"/member/")
	now := time.Now()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, l := range ls {
		if holdsPID(l.Holder, p.cmd.Process.Pid) {
			return now.Add(l.Left)
		}
	}
	return now // already run out
}

// holdsPID says whether a lease holder is the process pid: a controller
// process is host-PID-random (reconcile.Config.Holder's default).
func holdsPID(holder string, pid int) bool {
	parts := strings.Split(holder, "-")
	return len(parts) >= 3 && parts[len(parts)-2] == strconv.Itoa(pid)
}

// createCalls counts the creates of pools each emulator of cs has
// answered, by GET /_cloudsim/calls.
func (f *killFleet) createCalls(cs []*killCluster) ([]int, error) {
	out := make([]int, len(cs))
	for i, c := range cs {
		counts, err := sim.ReadCallCounts(context.Background(), f.emuHTTP, c.ep.URL)
		if err != nil {
			return nil, err
		}
		create := killCreates[c.cloud.Name]
		for _, op := range counts.Operations {
			if method, route, _ := strings.Cut(op.Operation, " "); method == create[0] && strings.HasSuffix(route, create[1]) {
				out[i] += op.Calls
			}
		}
	}
	return out, nil
}

// creates is the creates of pools the emulators of cs have answered.
func (f *killFleet) creates(cs []*killCluster) (int, error) {
	by, err := f.createCalls(cs)
	n := 0
	for _, c := range by {
		n += c
	}
	return n, err
}

// pools are the pools of cs, read through the API.
func (f *killFleet) pools(cs []*killCluster) []*kpool.NodePool {
	var out []*kpool.NodePool
	for _, c := range cs {
		l, err := f.api.NodePools(context.Background(), service.ListOptions{ClusterID: c.id, Limit: 100})
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, l.NodePools...)
	}
	return out
}

// notReady is how many pools of cs are not Ready.
func (f *killFleet) notReady(cs []*killCluster) int {
	n := 0
	for _, p := range f.pools(cs) {
		if p.Status.Phase != kpool.PhaseReady {
			n++
		}
	}
	return n
}

// allReady says whether every pool is Ready; a Failed pool or a dead
// process is an error.
func (f *killFleet) allReady(ps []*kpoolProc) (bool, string, error) {
	for _, p := range ps {
		if err := p.alive(); err != nil {
			return false, "", err
		}
	}
	ready, phases := 0, map[kpool.Phase]int{}
	for _, p := range f.pools(f.clusters) {
		phases[p.Status.Phase]++
		switch p.Status.Phase {
		case kpool.PhaseReady:
			ready++
		case kpool.PhaseFailed:
			return false, "", fmt.Errorf("pool %s in %s Failed: %s", p.Name, p.ClusterID, p.Status.Message)
		}
	}
	return ready == killClusters*killPools, fmt.Sprintf("phases %v", phases), nil
}

// checkCreates checks that each cloud was asked to create each pool once
// (its emulators' counts of the create operation are the pools), and that
// each pool was made once at its cloud: the emulator's log holds one
// resource created for each of its cluster's pools, under its provider
// name, and no other.
func (f *killFleet) checkCreates() {
	t := f.t
	by, err := f.createCalls(f.clusters)
	if err != nil {
		t.Fatal(err)
	}
	perCloud, pools := map[string]int{}, map[string]int{}
	for i, c := range f.clusters {
		perCloud[c.cloud.Name] += by[i]
		pools[c.cloud.Name] += killPools
		made := map[string]int{}
		for _, call := range c.emu.Calls() {
			if call.Created {
				made[strings.ToLower(path.Base(call.Resource))]++
			}
		}
		ps := f.pools([]*killCluster{c})
		for _, p := range ps {
			if n := made[strings.ToLower(p.ProviderName)]; n != 1 {
				t.Errorf("%s: pool %s (%s) made %d times at the cloud, want once", c.name, p.Name, p.ProviderName, n)
			}
		}
		if len(made) != len(ps) {
			t.Errorf("%s: the cloud made %v, for %d pools", c.name, made, len(ps))
		}
	}
	t.Logf("creates the clouds were asked for: %v, for pools %v", perCloud, pools)
	for cloud, n := range pools {
		if perCloud[cloud] != n {
			t.Errorf("%s was asked to create a pool %d times, for %d pools: a duplicate create", cloud, perCloud[cloud], n)
		}
	}
}
