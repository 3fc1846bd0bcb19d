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
	// forgets counts the calls of forget: a context built while a user
	// was forgotten is not kept (see generation).
	forgets uint64
}

type entry struct {
	key  string
	user string
	c    Context
}

// generation returns how many times forget was called: a build reads it
// before it reads the store, and hands it to put.
func (c *cache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.forgets
}

// forget drops the contexts of the user (erased): what the store no
// longer holds must not stay in memory either.
func (c *cache) forget(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*entry); e.user == user {
			c.ll.Remove(el)
			delete(c.items, e.key)
		}
		el = next
	}
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

// put keeps ctx, the user's context built since generation gen, unless a
// user was forgotten since: the build may hold what was erased meanwhile.
func (c *cache) put(user, key string, gen uint64, ctx *Context) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgets != gen {
		return
	}
	if el, ok := c.items[key]; ok {
		el.Value.(*entry).c = *ctx
		c.ll.MoveToFront(el)
		return
	}
	c.items[key] = c.ll.PushFront(&entry{key, user, *ctx})
	for c.ll.Len() > c.size {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*entry).key)
	}
}
