package reconcile

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Clusters are spread over the running controller processes by shard: a
// cluster's shard is a stable hash of its ID, and a process acts on a
// cluster only while it holds its shard's lease (kpool-controllers/shard/N)
// in the store. Each process keeps a member lease
// (kpool-controllers/member/SHARDS/HOLDER) and takes free or expired shards
// up to its share of them; every lease expires on the database's clock.

const (
	// LeaseName is the single lease of the kpool releases before shards:
	// while a process of one holds it, a sharding process acts on nothing.
	LeaseName    = "kpool-controllers"
	memberPrefix = LeaseName + "/member/"
	shardPrefix  = LeaseName + "/shard/"
)

// ShardOf returns the shard of a cluster among n: FNV-1a of its ID, so
// every process agrees without asking.
func ShardOf(clusterID string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(clusterID))
	return int(h.Sum32() % uint32(n))
}

// ShardLease names a shard's lease.
func ShardLease(n int) string { return shardPrefix + strconv.Itoa(n) }

// Handling is a mark of the history of who handled what, for Config.OnHandling.
type Handling struct {
	Holder string
	// Cluster is the cluster a pass begins or ends over; "" for a shard
	// gained (Begin) or given back or lost.
	Cluster string
	Shard   int
	Begin   bool
}

// shard is one shard this process holds.
type shard struct {
	n      int
	ctx    context.Context // ends when the shard is lost: its passes stop
	cancel context.CancelFunc
	// until is when acting on it stops, on the controllers' clock: a renew
	// period before its lease can expire, however the renewals go.
	until    time.Time
	draining bool           // being given back: no pass starts
	passes   sync.WaitGroup // passes in flight
}

// keeper holds this process's shards: it renews, takes and gives them
// back, and says which clusters are this process's to act on.
type keeper struct {
	c      *Controller
	n      int // shards in all
	member string
	run    context.Context // the work's: every shard's context is under it

	mu     sync.Mutex
	held   map[int]*shard
	gained map[int]bool   // shards whose clusters are yet to be queued
	known  map[string]int // cluster → shard: the clusters of held shards seen
	weighs []int          // shard → its clusters, as last listed
	wake   chan struct{}  // the feed queues the gained shards' clusters
	warned string         // the last disagreement warned of
}

func newKeeper(c *Controller) *keeper {
	return &keeper{c: c, n: c.cfg.Shards, member: fmt.Sprintf("%s%d/%s", memberPrefix, c.cfg.Shards, c.cfg.Holder),
		held: map[int]*shard{}, gained: map[int]bool{}, known: map[string]int{}, weighs: make([]int, c.cfg.Shards),
		wake: make(chan struct{}, 1)}
}

// view is what a listing of the leases says.
type view struct {
	members  []string              // holders with this process's shard count, sorted
	others   string                // a member with another shard count, as "holder (N shards)"
	legacy   string                // the holder of the single lease of older releases
	holders  map[int]string        // shard → its holder
	mine     map[int]time.Duration // shard → time left, of this process's
	orphans  []string              // this process's shard leases it does not hold
	soonest  time.Duration         // the least time left of another's lease, when under a renew period
	isMember bool
}

// read lists the leases into a view.
func (k *keeper) read(ctx context.Context) (*view, error) {
	ls, err := k.c.store.Leases(ctx, LeaseName)
	if err != nil {
		return nil, err
	}
	holder := k.c.cfg.Holder
	v := &view{holders: map[int]string{}, mine: map[int]time.Duration{}, soonest: k.renew()}
	for _, l := range ls {
		if l.Holder != holder {
			v.soonest = min(v.soonest, l.Left)
		}
		switch {
		case l.Name == LeaseName:
			v.legacy = l.Holder
		case strings.HasPrefix(l.Name, memberPrefix):
			count, _, _ := strings.Cut(strings.TrimPrefix(l.Name, memberPrefix), "/")
			if count != strconv.Itoa(k.n) {
				v.others = fmt.Sprintf("%s (%s shards)", l.Holder, count)
				continue
			}
			v.members = append(v.members, l.Holder)
			v.isMember = v.isMember || l.Holder == holder
		case strings.HasPrefix(l.Name, shardPrefix):
			n, err := strconv.Atoi(strings.TrimPrefix(l.Name, shardPrefix))
			if err != nil || n >= k.n {
				continue
			}
			v.holders[n] = l.Holder
			if l.Holder == holder {
				v.mine[n] = l.Left
			}
		}
	}
	sort.Strings(v.members)
	return v, nil
}

func (k *keeper) renew() time.Duration { return k.c.cfg.LeaseTTL / 3 }

// join checks that no running process counts shards otherwise, then makes
// this process a member.
func (k *keeper) join(ctx context.Context) error {
	v, err := k.read(ctx)
	if err != nil {
		return fmt.Errorf("reconcile: reading the controllers' leases: %w", err)
	}
	if v.others != "" {
		return fmt.Errorf("reconcile: this process has %d shards but controller process %s is running: every kpool controller and serve sharing a database needs the same shard count", k.n, v.others)
	}
	_, err = k.c.store.AcquireLease(ctx, k.member, k.c.cfg.Holder, k.c.cfg.LeaseTTL)
	return err
}

// keep runs a round after next, and then at every renew period, sooner
// while a share is to be filled or another's lease runs out, until ctx
// ends.
func (k *keeper) keep(ctx context.Context, next time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.c.cfg.Clock.After(next):
		}
		next = k.round(ctx)
	}
}

// round renews this process's leases, lists them all, and takes or gives
// back shards toward its share of the clusters; it returns when to come
// again.
func (k *keeper) round(ctx context.Context) time.Duration {
	log, clock, renew := k.c.cfg.Log, k.c.cfg.Clock, k.renew()
	start := clock.Now()
	if _, err := k.c.store.RenewLeases(ctx, LeaseName+"/", k.c.cfg.Holder, k.c.cfg.LeaseTTL); err != nil {
		if ctx.Err() == nil {
			log.Warn("shard leases not renewed", "holder", k.c.cfg.Holder, "err", err)
		}
		return renew
	}
	v, err := k.read(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("shard leases not read", "holder", k.c.cfg.Holder, "err", err)
		}
		return renew
	}
	if !v.isMember {
		if _, err := k.c.store.AcquireLease(ctx, k.member, k.c.cfg.Holder, k.c.cfg.LeaseTTL); err != nil {
			return renew
		}
		v.members = append(v.members, k.c.cfg.Holder)
		sort.Strings(v.members)
	}
	// The cloud counts an account's calls from every process together:
	// each takes its share of the account's budget.
	k.c.budgets.Share(len(v.members))
	k.refresh(ctx, start, v)
	mine := k.share(ctx, v)
	if why := k.disagreement(v); why != "" {
		mine = nil
	}
	k.giveBack(ctx, mine)
	k.take(ctx, mine, v, start)
	k.metrics() // the shards' clusters change as clusters come and go
	next := k.due()
	if k.count() < len(mine) {
		next = min(next, renew/4)
	}
	// Another's lease running out before the next renewal: come as it
	// does, to take its shards within one lease period of its end.
	return min(next, v.soonest+renew/20)
}

// disagreement says why this process may hold no shard (another shard
// count, or a process of an older release holding the single lease), and
// warns of it once.
func (k *keeper) disagreement(v *view) string {
	why := ""
	switch {
	case v.others != "":
		why = fmt.Sprintf("controller process %s counts shards otherwise than this one (%d): acting on none until every process has the same count", v.others, k.n)
	case v.legacy != "":
		why = fmt.Sprintf("a kpool process of an older release, %s, holds the lease %s: acting on none until it stops", v.legacy, LeaseName)
	}
	k.mu.Lock()
	warn := why != "" && why != k.warned
	k.warned = why
	k.mu.Unlock()
	if warn {
		k.c.cfg.Log.Warn(why, "holder", k.c.cfg.Holder)
	}
	return why
}

// count is how many shards this process holds and is not giving back.
func (k *keeper) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, s := range k.held {
		if !s.draining {
			n++
		}
	}
	return n
}
