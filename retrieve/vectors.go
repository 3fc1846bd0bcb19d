package retrieve

import (
	"container/heap"
	"container/list"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/vecenc"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"
)

// vectorCache keeps each user's vectors of a space in memory, laid out
// for a fast exact scan, and keeps them up to date with the store: when
// the user's VectorsState has moved, it reads only the vectors put since
// (FindVectorsSince) and writes them in place or appends them; only a
// deletion since, or an erasure, makes it reload everything. It is
// bounded by the bytes of the vectors it holds (least recently used users
// out).
type vectorCache struct {
	loads singleflight.Group
	mu    sync.Mutex
	max   int64
	bytes int64
	ll    *list.List
	items map[cacheKey]*list.Element
	// forgets counts the calls of forget: a load during which a user was
	// forgotten is not kept, since it may hold what was erased.
	forgets uint64
}

type cacheKey struct{ user, space string }

// userVectors is one user's vectors of one space, quantised as the store
// keeps them (8 bits a dimension, see agentmem.VectorStore): row i is
// data[i*dim:(i+1)*dim] times scale[i], the vector of keys[i], of scope
// scopes[scope[i]]. A quarter of float32's memory, and a quarter of the
// bytes a scan reads. mu guards the rows against a catch-up while
// searches scan them; catchUp serialises the catch-ups.
type userVectors struct {
	key     cacheKey
	catchUp sync.Mutex
	mu      sync.RWMutex
	state   agentmem.VectorsState
	dim     int
	keys    []itemKey
	data    []int8
	scale   []float32
	scope   []uint8         // index into scopes
	scopes  []string        // the scopes of the rows, each once
	rows    map[itemKey]int // key → row
	size    int64           // what the cache counts for u (guarded by the cache's mu)
	want    int             // the rows load expects (see reserve)
}

// reserve makes room for n rows, so that a load of n vectors does not
// grow the rows (and copy them) as it goes: that was a fifth of a cold
// load of 100,000 vectors. Their dimension is known at the first row.
func (u *userVectors) reserve(n int) {
	u.want = n
	u.rows = make(map[itemKey]int, n)
	u.keys = make([]itemKey, 0, n)
	u.scale = make([]float32, 0, n)
	u.scope = make([]uint8, 0, n)
}

// bytes is the memory u takes, roughly; the caller holds u.mu (or owns u).
func (u *userVectors) bytes() int64 { return int64(len(u.data)) + int64(len(u.keys))*101 }

// add writes the vectors vs of the space into u: in place for a key it
// has, appended otherwise. Vectors of another dimension than u's are
// skipped (a space has one). The caller holds u.mu.
func (u *userVectors) add(vs []agentmem.Vector) {
	for _, v := range vs {
		if row, ok := u.row(v.Scope, v.ID, len(v.Vec)); ok {
			u.scale[row] = vecenc.Quantise(u.data[row*u.dim:(row+1)*u.dim], v.Vec)
		}
	}
}

// addBytes writes a vector as the store keeps it (package internal/vecenc)
// into u, as add does. The caller holds u.mu.
func (u *userVectors) addBytes(scope, id string, b []byte) error {
	d, err := vecenc.Dims(b)
	if err != nil {
		return fmt.Errorf("vector %s/%s: %w", scope, id, err)
	}
	row, ok := u.row(scope, id, d)
	if !ok {
		return nil
	}
	u.scale[row], err = vecenc.Read(u.data[row*u.dim:(row+1)*u.dim], b)
	if err != nil {
		return fmt.Errorf("vector %s/%s: %w", scope, id, err)
	}
	return nil
}

// row returns the row of the vector of scope and id, appended when u has
// none; false when its dimension d is not u's.
func (u *userVectors) row(scope, id string, d int) (int, bool) {
	if u.dim == 0 {
		u.dim = d
		if u.want > 0 && len(u.data) == 0 {
			u.data = make([]int8, 0, u.want*d)
		}
	}
	if d != u.dim {
		return 0, false
	}
	if u.rows == nil {
		u.rows = map[itemKey]int{}
	}
	k := itemKey{scope, id}
	if row, ok := u.rows[k]; ok {
		return row, true
	}
	row := len(u.keys)
	u.rows[k] = row
	u.keys = append(u.keys, k)
	if n := len(u.data) + u.dim; n <= cap(u.data) {
		u.data = u.data[:n] // the caller writes every dimension
	} else {
		u.data = slices.Grow(u.data, max(n, 2*len(u.data), 256*u.dim)-len(u.data))[:n]
	}
	u.scale = append(u.scale, 0)
	sc := slices.Index(u.scopes, scope)
	if sc < 0 {
		sc = len(u.scopes)
		u.scopes = append(u.scopes, scope)
	}
	u.scope = append(u.scope, uint8(sc))
	return row, true
}

// vectorScanner is a store that hands out its vectors as it keeps them
// (package internal/vecenc): the cache reads their 8-bit values without
// decoding them to float32s and quantising them again, and without
// holding them all twice. Both stores are; the cache reads another
// VectorStore through FindVectors and FindVectorsSince.
type vectorScanner interface {
	ScanVectors(ctx context.Context, userID, space string, fn func(scope, id string, b []byte) error) error
}

// maxReserve bounds the rows a count reserves.
const maxReserve = 10_000_000

// vectorCounter is a store that counts a user's vectors of a space
// cheaply (SQLite, from its index), so that a load makes room for them at
// once.
type vectorCounter interface {
	CountVectors(ctx context.Context, userID, space string) (int, error)
}

// vectorHalves is a store that reads a user's vectors of a space put by
// the writes up to maxSeq in the order of their writes, either way, until
// fn returns an error (SQLite): a load reads them from both ends side by
// side, one query a core, until the two reads have read them all.
type vectorHalves interface {
	ScanVectorsBySeq(ctx context.Context, userID, space string, maxSeq int64, desc bool, fn func(scope, id string, b []byte) error) error
}

// halvesFrom is the count of vectors from which a load reads them in two
// halves side by side.
const halvesFrom = 20_000

// errMet stops a read of loadHalves once the two have read every row.
var errMet = errors.New("the reads met")

// load adds all the vectors of u's user and space to u, which the caller
// owns. (A catch-up reads the few put since through FindVectorsSince.)
func (u *userVectors) load(ctx context.Context, store agentmem.VectorStore) error {
	n, count := -1, -1
	if c, ok := store.(vectorCounter); ok {
		var err error
		if count, err = c.CountVectors(ctx, u.key.user, u.key.space); err == nil {
			n = min(count, maxReserve) // a hint: the load reads what is there
		} else {
			count = -1
		}
	}
	if h, ok := store.(vectorHalves); ok && count >= halvesFrom && runtime.GOMAXPROCS(0) > 1 {
		return u.loadHalves(ctx, h, count)
	}
	if n >= 0 {
		u.reserve(n)
	}
	if sc, ok := store.(vectorScanner); ok {
		return sc.ScanVectors(ctx, u.key.user, u.key.space, u.addBytes)
	}
	vs, err := store.FindVectors(ctx, u.key.user, u.key.space, nil)
	if err != nil {
		return err
	}
	u.add(vs)
	return nil
}

// loadHalves reads the user's n vectors (CountVectors), those put by
// u.state's writes, from both ends of their write order side by side: the
// first into u, the last into another set of rows, until the two have
// kept n together; then it appends the other's rows to u's, in write
// order. Each read does the share its core gets; no split of the rows is
// needed.
//
// Each read is a transaction of its own, and so was the count, all after
// u.state was read. None misses a row both see: the rows of seqs up to
// the state's were all there when n was counted (a later write has a
// higher seq), so the reads see n rows at most between them; a row both
// see and neither kept would have the rows one kept before it and those
// the other kept after it, n, and itself. (Rows both kept mean the reads
// have crossed: none is missed.) A row one sees and the other does not
// was deleted since (a deletion moves the state's ResetSeq: the next
// search reloads) or put again (under a seq above the state's: the next
// catch-up reads it); rows put since are left to the catch-up too.
func (u *userVectors) loadHalves(ctx context.Context, h vectorHalves, n int) error {
	second := &userVectors{key: u.key}
	u.reserve(min(n, maxReserve)) // room for both: the second's rows are appended
	second.reserve(min(n, maxReserve)/2 + 1)
	var read atomic.Int64 // the rows both reads have kept
	scan := func(into *userVectors, desc bool) error {
		err := h.ScanVectorsBySeq(ctx, u.key.user, u.key.space, u.state.Seq, desc, func(scope, id string, b []byte) error {
			if read.Load() >= int64(n) {
				return errMet
			}
			if err := into.addBytes(scope, id, b); err != nil {
				return err
			}
			read.Add(1)
			return nil
		})
		if errors.Is(err, errMet) {
			return nil
		}
		return err
	}
	var g errgroup.Group
	g.Go(func() error { return scan(u, false) })
	g.Go(func() error { return scan(second, true) })
	if err := g.Wait(); err != nil {
		return err
	}
	if len(second.keys) == 0 {
		return nil
	}
	if u.dim == 0 {
		u.dim = second.dim
	}
	if second.dim != u.dim {
		return nil // a space has one dimension: the first's rows stand
	}
	for i := len(second.keys) - 1; i >= 0; i-- { // in write order
		k := second.keys[i]
		row, _ := u.row(k.scope, k.id, u.dim)
		copy(u.data[row*u.dim:(row+1)*u.dim], second.data[i*u.dim:(i+1)*u.dim])
		u.scale[row] = second.scale[i]
	}
	return nil
}

func newVectorCache(max int64) *vectorCache {
	return &vectorCache{max: max, ll: list.New(), items: map[cacheKey]*list.Element{}}
}

// get returns the user's vectors of space as the store has them now.
func (c *vectorCache) get(ctx context.Context, store agentmem.VectorStore, user, space string) (*userVectors, error) {
	st, err := store.VectorsState(ctx, user, space)
	if err != nil {
		return nil, err
	}
	k := cacheKey{user, space}
	c.mu.Lock()
	var cached *userVectors
	if el, ok := c.items[k]; ok {
		c.ll.MoveToFront(el)
		cached = el.Value.(*userVectors)
	}
	c.mu.Unlock()
	if cached != nil {
		if u, err := c.catchUp(ctx, store, cached, st); u != nil || err != nil {
			return u, err
		}
	}

	// One load of a user's vectors at a state, whoever asks meanwhile (the
	// warm-up after a start and the user's first search, say); it runs to
	// its end even if the one who started it stops waiting.
	ch := c.loads.DoChan(user+"\x00"+space+"\x00"+st.Version, func() (any, error) {
		c.mu.Lock()
		forgets := c.forgets
		c.mu.Unlock()
		u := &userVectors{key: k, state: st}
		if err := u.load(context.WithoutCancel(ctx), store); err != nil {
			return nil, err
		}
		c.keep(u, forgets)
		return u, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*userVectors), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// keep caches u, loaded while forget had been called forgets times, unless
// a user was forgotten since: the load may have read vectors erased
// meanwhile, and the next search of that user loads again.
func (c *vectorCache) keep(u *userVectors, forgets uint64) {
	c.mu.Lock()
	forgotten := c.forgets != forgets
	c.mu.Unlock()
	if !forgotten {
		c.resize(u, nil, u.bytes())
	}
}

// forget drops the user's vectors of every space (the user was erased):
// what the store no longer holds must not stay in memory either, until
// the user's next search or an eviction.
func (c *vectorCache) forget(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
	for k, el := range c.items {
		if k.user == user {
			c.ll.Remove(el)
			delete(c.items, k)
			c.bytes -= el.Value.(*userVectors).size
		}
	}
}

// full reports whether the cache holds 90 % of its bound or more, or can
// hold nothing.
func (c *vectorCache) full() bool {
	if c.max <= 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes >= c.max/10*9
}

// catchUp brings u up to state st by reading what was put since u's
// state; nil when it cannot (something was deleted since), and the
// caller reloads.
func (c *vectorCache) catchUp(ctx context.Context, store agentmem.VectorStore, u *userVectors, st agentmem.VectorsState) (*userVectors, error) {
	u.catchUp.Lock()
	defer u.catchUp.Unlock()
	switch {
	case u.state.Version == st.Version:
		return u, nil
	case !u.state.CanCatchUp(st):
		return nil, nil
	}
	// st was read before the vectors: those put after it are read too,
	// and read again next time, which writes them in place.
	vs, err := store.FindVectorsSince(ctx, u.key.user, u.key.space, u.state.Seq)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.add(vs)
	u.state = st
	bytes := u.bytes()
	u.mu.Unlock()
	c.resize(u, u, bytes)
	return u, nil
}

// resize accounts for u, whose rows now take bytes: a new entry when old
// is nil (replacing the user's entry, if any), or old grown; then evicts
// the least recently used users beyond the bound.
func (c *vectorCache) resize(u, old *userVectors, bytes int64) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old != nil {
		if el, ok := c.items[u.key]; ok && el.Value == old {
			c.bytes += bytes - u.size
			u.size = bytes
		}
	} else {
		if el, ok := c.items[u.key]; ok {
			c.bytes -= el.Value.(*userVectors).size
			c.ll.Remove(el)
		}
		c.items[u.key] = c.ll.PushFront(u)
		u.size = bytes
		c.bytes += bytes
	}
	for c.bytes > c.max && c.ll.Len() > 1 {
		el := c.ll.Back()
		victim := el.Value.(*userVectors)
		c.ll.Remove(el)
		delete(c.items, victim.key)
		c.bytes -= victim.size
	}
}

// nearest returns the n vectors most similar to q (cosine: vectors are
// L2-normalised, so the dot product) among those whose scope is in
// scopes, best first. Large sets are scanned in parallel, one part per
// CPU, and the parts' best merged.
func (u *userVectors) nearest(q []float32, n int, scopes map[string]bool) []candidate {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.dim == 0 || len(q) != u.dim || n <= 0 {
		return nil
	}
	var in [256]bool
	for i, sc := range u.scopes {
		in[i] = scopes[sc]
	}
	qry := newQueryVector(q)
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
			heaps[p] = u.scan(qry, n, &in, from, to)
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

// queryVector is a query vector laid out for scanning: whole, or, when few of
// its dimensions are not zero (the built-in lexical embedder's query
// holds a few words hashed into hundreds of dimensions), as the list of
// those, so that a row costs a few multiplications rather than dim.
type queryVector struct {
	dense []float32
	dims  []int32
	vals  []float32
}

func newQueryVector(q []float32) queryVector {
	var dims []int32
	var vals []float32
	for i, x := range q {
		if x != 0 {
			dims, vals = append(dims, int32(i)), append(vals, x)
		}
	}
	if 4*len(dims) > len(q) {
		return queryVector{dense: q}
	}
	return queryVector{dims: dims, vals: vals}
}

// scan keeps the n best of rows [from, to) whose scope is in.
func (u *userVectors) scan(q queryVector, n int, in *[256]bool, from, to int) minHeap {
	h := minHeap{}
	for i := from; i < to; i++ {
		if !in[u.scope[i]] {
			continue
		}
		row := u.data[i*u.dim : (i+1)*u.dim]
		var s float32
		if q.dense != nil {
			s = dot(q.dense, row)
		} else {
			for j, d := range q.dims {
				s += q.vals[j] * float32(row[d])
			}
		}
		h.offer(candidate{u.keys[i], float64(s * u.scale[i])}, n)
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

// dot is the dot product of a vector and a quantised row of the same
// length: its first multiple of 32 by the AVX2 kernel where the CPU has
// one (a model's dense vectors: 384 dimensions in about a tenth of the
// time of the loop), the rest by a loop unrolled by four.
func dot(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	if n := len(a) &^ 31; hasDotAVX && n > 0 {
		s0, i = dotAVX(&a[0], &b[0], n), n
	}
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * float32(b[i])
		s1 += a[i+1] * float32(b[i+1])
		s2 += a[i+2] * float32(b[i+2])
		s3 += a[i+3] * float32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
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
