package driver

import "container/list"

// lru is a map of at most max entries that forgets the least recently
// used one when full. The driver's caches are keyed by what users write
// (subscription, endpoint, pool), so they must not grow without bound. It
// is not safe for concurrent use; the driver holds its lock.
type lru[V any] struct {
	max   int
	order *list.List // of *entry[V], most recent first
	items map[string]*list.Element
}

type entry[V any] struct {
	key string
	val V
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: map[string]*list.Element{}}
}

// get returns the value of key and marks it the most recently used.
func (c *lru[V]) get(key string) (V, bool) {
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[V]).val, true
	}
	var zero V
	return zero, false
}

// put sets key to val, forgetting the least recently used entry if full.
func (c *lru[V]) put(key string, val V) {
	if el, ok := c.items[key]; ok {
		el.Value.(*entry[V]).val = val
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&entry[V]{key: key, val: val})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*entry[V]).key)
	}
}

// remove forgets key.
func (c *lru[V]) remove(key string) {
	if el, ok := c.items[key]; ok {
		c.order.Remove(el)
		delete(c.items, key)
	}
}

func (c *lru[V]) len() int { return c.order.Len() }
