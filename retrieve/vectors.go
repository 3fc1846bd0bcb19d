package retrieve

import (
	"container/heap"
	"container/list"
	"context"
	"runtime"
	"sync"

	"github.com/agentmem/agentmem"
)

// vectorCache keeps each user's vectors of a space in memory, laid out
// for a fast exact scan, and reloads them when the store's VectorsVersion
// for the user changes. It is bounded by the bytes of the vectors it
// holds (least recently used users out).
type vectorCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	ll    *list.List
	items map[cacheKey]*list.Element
}

type cacheKey struct{ user, space string }

// userVectors is one user's vectors of one space: row i is
// data[i*dim:(i+1)*dim], the vector of keys[i].
type userVectors struct {
	key     cacheKey
	version string
	dim     int
	keys    []itemKey
	data    []float32
}

func (u *userVectors) bytes() int64 { return int64(len(u.data))*4 + int64(len(u.keys))*48 }

func newVectorCache(max int64) *vectorCache {
	return &vectorCache{max: max, ll: list.New(), items: map[cacheKey]*list.Element{}}
}

// get returns the user's vectors of space as the store has them now.
func (c *vectorCache) get(ctx context.Context, store agentmem.VectorStore, user, space string) (*userVectors, error) {
	version, err := store.VectorsVersion(ctx, user, space)
	if err != nil {
		return nil, err
	}
	k := cacheKey{user, space}
	c.mu.Lock()
	if el, ok := c.items[k]; ok && el.Value.(*userVectors).version == version {
		c.ll.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*userVectors), nil
	}
	c.mu.Unlock()

	vs, err := store.FindVectors(ctx, user, space, nil)
	if err != nil {
		return nil, err
	}
	u := &userVectors{key: k, version: version}
	for _, v := range vs {
		if u.dim == 0 {
			u.dim = len(v.Vec)
		}
		if len(v.Vec) != u.dim { // one space has one dimension; skip anything else
			continue
		}
		u.keys = append(u.keys, itemKey{v.Scope, v.ID})
		u.data = append(u.data, v.Vec...)
	}
	if c.max > 0 {
		c.mu.Lock()
		if el, ok := c.items[k]; ok {
			c.bytes -= el.Value.(*userVectors).bytes()
			c.ll.Remove(el)
		}
		c.items[k] = c.ll.PushFront(u)
		c.bytes += u.bytes()
		for c.bytes > c.max && c.ll.Len() > 1 {
			el := c.ll.Back()
			old := el.Value.(*userVectors)
			c.ll.Remove(el)
			delete(c.items, old.key)
			c.bytes -= old.bytes()
		}
		c.mu.Unlock()
	}
	return u, nil
}

// nearest returns the n vectors most similar to q (cosine: vectors are
// L2-normalised, so the dot product) among those whose scope is in
// scopes, best first. Large sets are scanned in parallel, one part per
// CPU, and the parts' best merged.
func (u *userVectors) nearest(q []float32, n int, scopes map[string]bool) []candidate {
	if u.dim == 0 || len(q) != u.dim || n <= 0 {
		return nil
	}
	rows := len(u.keys)
	parts := 1
	if rows >= 8192 {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	heaps := make([]minHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		from, to := rows*p/parts, rows*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			heaps[p] = u.scan(q, n, scopes, from, to)
		}()
	}
	wg.Wait()
	h := heaps[0]
	for _, other := range heaps[1:] {
		for _, c := range other {
			h.offer(c, n)
		}
	}
	out := make([]candidate, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(candidate)
	}
	return out
}

// scan keeps the n best of rows [from, to).
func (u *userVectors) scan(q []float32, n int, scopes map[string]bool, from, to int) minHeap {
	h := minHeap{}
	for i := from; i < to; i++ {
		k := u.keys[i]
		if !scopes[k.scope] {
			continue
		}
		h.offer(candidate{k, float64(dot(q, u.data[i*u.dim:(i+1)*u.dim]))}, n)
	}
	return h
}

// offer keeps c if it is among the n best seen.
func (h *minHeap) offer(c candidate, n int) {
	if h.Len() < n {
		heap.Push(h, c)
	} else if c.score > (*h)[0].score {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
}

// dot is the dot product of two vectors of the same length, unrolled by
// four.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// minHeap keeps the n best candidates seen, worst on top.
type minHeap []candidate

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
