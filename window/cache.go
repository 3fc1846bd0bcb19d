package window

import (
	"container/list"
	"sync"
)

// cache keeps the most recently built contexts (least recently used out).
// A key names all a context is made of (see cacheKey), so an entry never
// goes stale: a new message, summary, profile, note, entity or memory
// makes a new key.
type cache struct {
	mu    sync.Mutex
	size  int
	ll    *list.List // of *entry, most recent first
	items map[string]*list.Element
}

type entry struct {
	key string
	c   Context
}

func newCache(size int) *cache {
	return &cache{size: size, ll: list.New(), items: map[string]*list.Element{}}
}

// enabled reports whether the cache keeps anything.
func (c *cache) enabled() bool { return c.size > 0 }

// get returns a copy of the context under key.
func (c *cache) get(key string) (*Context, bool) {
	if c.size <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	ctx := el.Value.(*entry).c // the copy shares slices and maps, which nobody changes
	return &ctx, true
}

func (c *cache) put(key string, ctx *Context) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*entry).c = *ctx
		c.ll.MoveToFront(el)
		return
	}
	c.items[key] = c.ll.PushFront(&entry{key, *ctx})
	for c.ll.Len() > c.size {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*entry).key)
	}
}
