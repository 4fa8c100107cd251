package service

import (
	"sync"
	"time"

	"github.com/kpool/kpool"
)

// clusterCache keeps the clusters that pool creates are checked against, so
// that a create needs no read before its write. It cannot make a create
// wrong: the database refuses a pool whose cluster is no longer at the
// generation it was checked against (ErrClusterChanged), or is being deleted,
// and the service then reads the cluster again. Entries live a minute; the
// service drops one when it changes the cluster itself.
type clusterCache struct {
	mu sync.Mutex
	m  map[string]cachedCluster
}

type cachedCluster struct {
	c  *kpool.Cluster
	at time.Time
}

const (
	clusterCacheTTL  = time.Minute
	clusterCacheSize = 4096
)

// get returns the cached cluster, or nil. The caller must not change it.
func (cc *clusterCache) get(id string, now time.Time) *kpool.Cluster {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	e, ok := cc.m[id]
	if !ok || now.Sub(e.at) > clusterCacheTTL {
		return nil
	}
	return e.c
}

func (cc *clusterCache) put(c *kpool.Cluster, now time.Time) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.m == nil {
		cc.m = map[string]cachedCluster{}
	}
	if len(cc.m) >= clusterCacheSize {
		for k := range cc.m { // any one: the cache only saves reads
			delete(cc.m, k)
			break
		}
	}
	cc.m[c.ID] = cachedCluster{c: c, at: now}
}

func (cc *clusterCache) forget(id string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	delete(cc.m, id)
}
