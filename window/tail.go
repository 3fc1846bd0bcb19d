package window

import (
	"container/list"
	"context"
	"sync"

	"github.com/agentmem/agentmem"
)

// tails keeps, per thread, the newest messages a build has read, so that
// the next build of the thread reads from the store only what was appended
// since (usually a message or two) instead of a budget's worth of history:
// at a 128K budget that is thousands of rows. Messages are append-only and
// never change, so a cached message never goes stale; a thread deleted
// and created again under the same ID is caught by checking that the
// cached newest message is still the one at its seq.
//
// The cache is bounded by the bytes of the messages it holds (least
// recently used threads out); a thread's tail alone is bounded by a
// quarter of that.
type tails struct {
	mu    sync.Mutex
	max   int64 // bytes; <= 0 disables the cache
	bytes int64
	ll    *list.List // of *tail, most recently used first
	items map[tailKey]*list.Element
}

type tailKey struct{ user, thread string }

// tail is the newest messages of one thread, oldest first, with no gap:
// msgs[i].Seq == msgs[0].Seq+i, and the last is the newest the cache saw.
type tail struct {
	key   tailKey
	mu    sync.Mutex // one build at a time extends a tail
	msgs  []*agentmem.Message
	bytes int64
}

func newTails(max int64) *tails {
	return &tails{max: max, ll: list.New(), items: map[tailKey]*list.Element{}}
}

func messageBytes(m *agentmem.Message) int64 {
	n := int64(len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.Metadata) + len(m.ID) + 160)
	for _, tc := range m.ToolCalls {
		n += int64(len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments) + 64)
	}
	return n
}

// get returns the tail of a thread, new and empty if none is cached.
func (c *tails) get(k tailKey) *tail {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.ll.MoveToFront(el)
		return el.Value.(*tail)
	}
	t := &tail{key: k}
	c.items[k] = c.ll.PushFront(t)
	return t
}

// grew accounts for delta bytes added to (or removed from) a tail and
// evicts the least recently used tails over the bound.
func (c *tails) grew(delta int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += delta
	for c.bytes > c.max && c.ll.Len() > 1 {
		el := c.ll.Back()
		t := el.Value.(*tail)
		c.ll.Remove(el)
		delete(c.items, t.key)
		c.bytes -= t.bytes // its owner may still read it; it is no longer counted or found
	}
}

// newest calls visit with the thread's messages from lastSeq down to
// floor+1, newest first, until visit returns false. It reads from the
// store only what the thread's cached tail lacks.
func (c *tails) newest(ctx context.Context, store agentmem.MessageStore, th *agentmem.Thread, floor int64, pageHint int,
	visit func(*agentmem.Message) bool) error {
	if c.max <= 0 {
		return readNewest(ctx, store, th, floor, th.LastSeq+1, pageHint, visit)
	}
	t := c.get(tailKey{th.UserID, th.ID})
	t.mu.Lock()
	defer t.mu.Unlock()
	delta, err := t.refresh(ctx, store, th)
	c.grew(delta)
	if err != nil {
		return err
	}
	// The cached part, newest first.
	for i := len(t.msgs) - 1; i >= 0; i-- {
		if t.msgs[i].Seq <= floor || !visit(t.msgs[i]) {
			return nil
		}
	}
	// Older than the cache: read pages from the store, keeping them while
	// the tail stays within its share of the cache.
	before := th.LastSeq + 1
	if len(t.msgs) > 0 {
		before = t.msgs[0].Seq
	}
	for before > floor+1 {
		page, _, err := store.FindMessages(ctx, th.UserID, th.ID, agentmem.MessageFilter{AfterSeq: floor, BeforeSeq: before, Desc: true, Limit: pageHint})
		if err != nil || len(page) == 0 {
			return err
		}
		keep := t.bytes < c.max/4 && (len(t.msgs) == 0 || page[0].Seq == t.msgs[0].Seq-1)
		var added int64
		for _, m := range page {
			before = m.Seq
			if keep {
				added += messageBytes(m)
			}
		}
		if keep {
			older := make([]*agentmem.Message, len(page))
			for i, m := range page {
				older[len(page)-1-i] = m
			}
			t.msgs = append(older, t.msgs...)
			t.bytes += added
			c.grew(added)
		}
		for _, m := range page {
			if !visit(m) {
				return nil
			}
		}
	}
	return nil
}

// refresh brings the tail up to th.LastSeq: it reads the messages
// appended since, or drops the tail if the thread is not the one it was
// made from. It returns the change in bytes.
func (t *tail) refresh(ctx context.Context, store agentmem.MessageStore, th *agentmem.Thread) (int64, error) {
	before := t.bytes
	if n := len(t.msgs); n > 0 {
		last := t.msgs[n-1]
		// Read from the cached newest message on, to check it is still there.
		var fresh []*agentmem.Message
		for after := last.Seq - 1; after < th.LastSeq; {
			page, _, err := store.FindMessages(ctx, th.UserID, th.ID, agentmem.MessageFilter{AfterSeq: after, BeforeSeq: th.LastSeq + 1, Limit: agentmem.MaxPageSize})
			if err != nil {
				return 0, err
			}
			if len(page) == 0 {
				break
			}
			fresh = append(fresh, page...)
			after = page[len(page)-1].Seq
		}
		if len(fresh) == 0 || fresh[0].Seq != last.Seq || fresh[0].ID != last.ID || last.Seq > th.LastSeq {
			t.msgs, t.bytes = nil, 0 // another thread under the same ID: start again
		} else {
			for _, m := range fresh[1:] {
				t.msgs = append(t.msgs, m)
				t.bytes += messageBytes(m)
			}
		}
	}
	return t.bytes - before, nil
}

// readNewest reads a thread's messages below before and above floor,
// newest first, from the store, until visit returns false.
func readNewest(ctx context.Context, store agentmem.MessageStore, th *agentmem.Thread, floor, before int64, pageHint int,
	visit func(*agentmem.Message) bool) error {
	for before > floor+1 {
		page, _, err := store.FindMessages(ctx, th.UserID, th.ID, agentmem.MessageFilter{AfterSeq: floor, BeforeSeq: before, Desc: true, Limit: pageHint})
		if err != nil || len(page) == 0 {
			return err
		}
		for _, m := range page {
			before = m.Seq
			if !visit(m) {
				return nil
			}
		}
	}
	return nil
}
