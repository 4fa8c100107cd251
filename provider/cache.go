package provider

import (
	"sync"

	"k8s.io/utils/lru"
)

// CacheSize is how many entries a driver's cache keeps: clients by
// credential, region and endpoint, operations by pool. Their keys are
// what users write in cluster and pool specs, so no cache of a driver may
// grow without bound.
const CacheSize = 256

// Cache is a map of at most a fixed number of entries that forgets the
// least recently used one when full (k8s.io/utils/lru). It is safe for
// concurrent use.
type Cache[V any] struct {
	mu sync.Mutex // serialises Load's makes
	c  *lru.Cache
}

// NewCache returns a cache of at most size entries.
func NewCache[V any](size int) *Cache[V] { return &Cache[V]{c: lru.New(size)} }

// Get returns the value of key, and marks it the most recently used.
func (c *Cache[V]) Get(key string) (V, bool) {
	v, ok := c.c.Get(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Add sets key to v, forgetting the least recently used entry when full.
func (c *Cache[V]) Add(key string, v V) { c.c.Add(key, v) }

// Remove forgets key.
func (c *Cache[V]) Remove(key string) { c.c.Remove(key) }

// Len is the number of entries.
func (c *Cache[V]) Len() int { return c.c.Len() }

// Load returns the value of key, or makes it with make and keeps it. Two
// Loads never make at once, so a value is made once however many calls
// ask for it together; an error is returned and nothing is kept.
func (c *Cache[V]) Load(key string, make func() (V, error)) (V, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.Get(key); ok {
		return v, nil
	}
	v, err := make()
	if err != nil {
		var zero V
		return zero, err
	}
	c.Add(key, v)
	return v, nil
}
