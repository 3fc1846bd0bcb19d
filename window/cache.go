package window

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/agentmem/agentmem"
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

// Forget drops the contexts of the user that the builder's cache holds:
// call it once the user is erased. (Other processes' builders never
// serve theirs again: a context's key names its thread's creation time.)
func (b *Builder) Forget(userID string) {
	b.cache.forget(userID)
}

// CacheStats reports how many builds the cache of built contexts
// answered (hits) and how many were built (misses), since New.
func (b *Builder) CacheStats() (hits, misses uint64) {
	return b.hits.Load(), b.misses.Load()
}

// cacheKey identifies a build by all it is made of: the thread (its ID,
// creation time, which tells a thread deleted and created again under its
// ID, and last seq: messages are append-only), the summary's version, the
// whole request, and the sections of the initialisation block and the
// memories as the providers gave them.
//
// The providers' answers are in the key as they are, not as version
// numbers of what they read: they are read on every build anyway (the
// profile, the agent's notes, the recent threads' summaries, the entities
// and memories the input names, a few indexed rows each), and a key made
// of them cannot go stale, even where version numbers start again (a user
// erased and made again) or do not exist (entities). What a hit spares is
// the rest of a build: reading the history, counting tokens, fitting and
// rendering.
func cacheKey(userID string, th *agentmem.Thread, sum *agentmem.Summary, req Request, init []Section, memories []string) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	var version, through int64
	if sum != nil {
		version, through = sum.Version, sum.ThroughSeq
	}
	_ = enc.Encode([]any{userID, th.ID, th.CreatedAt.UnixMicro(), th.LastSeq, version, through, req, init, memories})
	return hex.EncodeToString(h.Sum(nil))
}
