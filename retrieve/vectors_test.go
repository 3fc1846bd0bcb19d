package retrieve

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/internal/vecenc"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/sqlite"
)

// countingStore counts the vector reads of a real store.
type countingStore struct {
	*sqlite.Store
	full, since atomic.Int64
}

func (s *countingStore) FindVectors(ctx context.Context, user, space string, scopes []string) ([]agentmem.Vector, error) {
	s.full.Add(1)
	return s.Store.FindVectors(ctx, user, space, scopes)
}

// ScanVectors is what the cache loads a user with.
func (s *countingStore) ScanVectors(ctx context.Context, user, space string, fn func(scope, id string, b []byte) error) error {
	s.full.Add(1)
	return s.Store.ScanVectors(ctx, user, space, fn)
}

func (s *countingStore) FindVectorsSince(ctx context.Context, user, space string, seq int64) ([]agentmem.Vector, error) {
	s.since.Add(1)
	return s.Store.FindVectorsSince(ctx, user, space, seq)
}

func keysOf(u *userVectors) []string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var out []string
	for _, k := range u.keys {
		out = append(out, k.scope+"/"+k.id)
	}
	slices.Sort(out)
	return out
}

// TestVectorCache_CatchUp: after puts, the cache reads only what was put
// (replacing rows in place, appending new ones); after a deletion it
// reloads; unchanged, it reads nothing.
func TestVectorCache_CatchUp(t *testing.T) {
	ctx := context.Background()
	s := &countingStore{Store: testutil.MustOpenSQLite(t)}
	const space = "test/2"
	put := func(id string, v ...float32) {
		t.Helper()
		if err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: id, Space: space, Vec: v}}); err != nil {
			t.Fatal(err)
		}
	}
	c := newVectorCache(1 << 20)
	get := func() *userVectors {
		t.Helper()
		u, err := c.get(ctx, s, "alice", space)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	memories := map[string]bool{agentmem.ScopeMemories: true}
	best := func(u *userVectors, q ...float32) string {
		t.Helper()
		near := u.nearest(q, 1, memories)
		if len(near) == 0 {
			t.Fatal("no vector")
		}
		return near[0].key.id
	}

	put("a", 1, 0)
	put("b", 0, 1)
	u := get()
	if s.full.Load() != 1 || !slices.Equal(keysOf(u), []string{"memories/a", "memories/b"}) {
		t.Fatalf("first load: %d full reads, keys %v", s.full.Load(), keysOf(u))
	}
	get()
	if s.full.Load() != 1 || s.since.Load() != 0 {
		t.Fatalf("unchanged: %d full, %d partial reads; want none", s.full.Load()-1, s.since.Load())
	}
	put("c", 0.6, 0.8)
	put("a", 0, -1) // replaced: a now points away
	u2 := get()
	if u2 != u || s.full.Load() != 1 || s.since.Load() != 1 {
		t.Fatalf("after puts: %d full, %d partial reads (want 1, 1); same entry %v", s.full.Load(), s.since.Load(), u2 == u)
	}
	if got := keysOf(u); !slices.Equal(got, []string{"memories/a", "memories/b", "memories/c"}) || best(u, 0, -1) != "a" || best(u, 1, 0) != "c" {
		t.Fatalf("after catching up: keys %v", got)
	}
	c.mu.Lock()
	if u.size != u.bytes() || c.bytes != u.size {
		t.Errorf("accounting: cache %d, entry %d, rows %d bytes", c.bytes, u.size, u.bytes())
	}
	c.mu.Unlock()

	// A deletion since: reload.
	m := &agentmem.Memory{UserID: "alice", Text: "x"}
	if err := s.CreateMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	put(m.ID, 1, 1)
	if err := s.DeleteMemory(ctx, "alice", m.ID); err != nil {
		t.Fatal(err)
	}
	u3 := get()
	if s.full.Load() != 2 || u3 == u || slices.Contains(keysOf(u3), "memories/"+m.ID) {
		t.Fatalf("after a deletion: %d full reads (want 2), keys %v", s.full.Load(), keysOf(u3))
	}
}

// TestVectorCache_Concurrent: searches scan while puts are caught up
// (run with -race).
func TestVectorCache_Concurrent(t *testing.T) {
	ctx := context.Background()
	s := testutil.MustOpenSQLite(t)
	c := newVectorCache(1 << 20)
	memories := map[string]bool{agentmem.ScopeMemories: true}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				if w == 0 {
					v := agentmem.Vector{Scope: agentmem.ScopeMemories, ID: string(rune('a' + i%10)), Space: "test/2", Vec: []float32{float32(i), 1}}
					if err := s.PutVectors(ctx, "alice", []agentmem.Vector{v}); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				u, err := c.get(ctx, s, "alice", "test/2")
				if err != nil {
					t.Error(err)
					return
				}
				u.nearest([]float32{1, 0}, 3, memories)
			}
		}()
	}
	wg.Wait()
	u, err := c.get(ctx, s, "alice", "test/2")
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(u); len(got) != 10 {
		t.Fatalf("keys after concurrent puts %v, want 10", got)
	}
	all, err := s.FindVectors(ctx, "alice", "test/2", nil)
	if err != nil {
		t.Fatal(err)
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	for _, v := range all {
		row := u.rows[itemKey{v.Scope, v.ID}]
		want := make([]int8, len(v.Vec))
		scale := vecenc.Quantise(want, v.Vec)
		if !slices.Equal(u.data[row*u.dim:(row+1)*u.dim], want) || u.scale[row] != scale {
			t.Fatalf("cached %s = %v × %g, stored %v", v.ID, u.data[row*u.dim:(row+1)*u.dim], u.scale[row], v.Vec)
		}
	}
}

// BenchmarkVectorCache_AfterPut: the cost a search pays for the cache
// after one vector of a user with 100,000 (512 dimensions) was put — as
// after every indexed turn: catching up (reading what was put) against
// reloading them all (what the cache did before).
func BenchmarkVectorCache_AfterPut(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, dim, space = 100_000, 512, "bench/512"
	rng := uint64(1)
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			rng = rng*6364136223846793005 + 1442695040888963407
			v[i] = float32(int32(rng>>33)) / (1 << 31)
		}
		return v
	}
	for start := 0; start < n; start += 1000 {
		vs := make([]agentmem.Vector, 1000)
		for i := range vs {
			vs[i] = agentmem.Vector{Scope: agentmem.ScopeMessages, ID: "m" + strconv.Itoa(start+i), Space: space, Vec: vec()}
		}
		if err := s.PutVectors(ctx, "alice", vs); err != nil {
			b.Fatal(err)
		}
	}
	for _, reload := range []bool{false, true} {
		name := "catch-up"
		if reload {
			name = "reload"
		}
		b.Run(name, func(b *testing.B) {
			c := newVectorCache(1 << 30)
			if _, err := c.get(ctx, s, "alice", space); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				if err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMessages, ID: "new" + strconv.Itoa(i), Space: space, Vec: vec()}}); err != nil {
					b.Fatal(err)
				}
				if reload {
					c = newVectorCache(1 << 30)
				}
				b.StartTimer()
				if _, err := c.get(ctx, s, "alice", space); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestVectorCache_Load: the cache reads the same rows from a store's bytes
// (ScanVectors) as from its float32s (a VectorStore without ScanVectors),
// on both backends.
func TestVectorCache_Load(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) { testVectorCacheLoad(t, s, 50) })
}

// TestVectorCache_LoadHalves: a user with halvesFrom vectors or more is
// loaded from both ends side by side (SQLite), to the same rows, each
// read once or so, even when one write put them all.
func TestVectorCache_LoadHalves(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: loads are not split")
	}
	s := testutil.MustOpenSQLite(t)
	spy := &halvesSpy{Store: s, halves: s}
	const n = halvesFrom + 1
	testVectorCacheLoad(t, spy, n)
	if got := spy.scans.Load(); got != 2 {
		t.Errorf("%d half scans, want 2", got)
	}
	if got := spy.rows.Load(); got > n+1 {
		t.Errorf("the half scans kept %d rows, want %d (+1: both may take the last)", got, n)
	}
}

// halvesSpy counts the half scans of a store that has them, and the rows
// they kept.
type halvesSpy struct {
	agentmem.Store
	halves interface {
		vectorHalves
		vectorCounter
	}
	scans, rows atomic.Int64
}

func (s *halvesSpy) CountVectors(ctx context.Context, userID, space string) (int, error) {
	return s.halves.CountVectors(ctx, userID, space)
}

func (s *halvesSpy) ScanVectorsBySeq(ctx context.Context, userID, space string, maxSeq int64, desc bool, fn func(scope, id string, b []byte) error) error {
	s.scans.Add(1)
	return s.halves.ScanVectorsBySeq(ctx, userID, space, maxSeq, desc, func(scope, id string, b []byte) error {
		err := fn(scope, id, b)
		if err == nil {
			s.rows.Add(1)
		}
		return err
	})
}

func testVectorCacheLoad(t *testing.T, s agentmem.Store, n int) {
	ctx := context.Background()
	if _, ok := s.(vectorScanner); !ok {
		if _, ok := s.(vectorHalves); !ok {
			t.Fatalf("%T has no ScanVectors", s)
		}
	}
	rng := rand.New(rand.NewPCG(4, 4))
	var vs []agentmem.Vector
	for i := range n {
		v := make([]float32, 32)
		for j := range v {
			if i%2 == 0 || rng.IntN(8) == 0 { // dense and sparse rows
				v[j] = float32(rng.NormFloat64())
			}
		}
		vs = append(vs, agentmem.Vector{Scope: []string{agentmem.ScopeMemories, agentmem.ScopeMessages}[i%2], ID: fmt.Sprint(i), Space: "test/32", Vec: v})
	}
	if err := s.PutVectors(ctx, "alice", vs); err != nil {
		t.Fatal(err)
	}
	scanned, err := newVectorCache(1<<30).get(ctx, s, "alice", "test/32")
	if err != nil {
		t.Fatal(err)
	}
	found, err := newVectorCache(1<<30).get(ctx, struct{ agentmem.VectorStore }{s}, "alice", "test/32")
	if err != nil {
		t.Fatal(err)
	}
	if len(scanned.keys) != n || len(found.keys) != n {
		t.Fatalf("%d rows scanned, %d found; want %d", len(scanned.keys), len(found.keys), n)
	}
	for k, i := range scanned.rows {
		j, ok := found.rows[k]
		if !ok || scanned.scale[i] != found.scale[j] || !slices.Equal(scanned.data[i*32:(i+1)*32], found.data[j*32:(j+1)*32]) ||
			scanned.scopes[scanned.scope[i]] != k.scope || found.scopes[found.scope[j]] != k.scope {
			t.Fatalf("%v: scanned %v × %g, found %v × %g", k, scanned.data[i*32:(i+1)*32], scanned.scale[i], found.data[j*32:(j+1)*32], found.scale[j])
		}
	}
}

// TestSearcher_Warm: warming a user loads their vectors once, and their
// first search then reads none; a cache that would be full says so.
func TestSearcher_Warm(t *testing.T) {
	ctx := context.Background()
	s := &countingStore{Store: testutil.MustOpenSQLite(t)}
	emb := lexical.New(0)
	vecs, err := emb.Embed(ctx, []string{"I live in Lisbon", "I work as a nurse"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: fmt.Sprint("m", i), Space: emb.Space(), Vec: v}}); err != nil {
			t.Fatal(err)
		}
	}
	searcher := New(s, emb, emb.Space(), Options{})
	room, err := searcher.Warm(ctx, "alice")
	if err != nil || !room || s.full.Load() != 1 {
		t.Fatalf("Warm = %v, %v after %d loads; want room after 1", room, err, s.full.Load())
	}
	if _, err := searcher.Search(ctx, "alice", Request{Query: "where does alice live", Scopes: []string{agentmem.ScopeMemories}, Signals: []string{"vector"}}); err != nil {
		t.Fatal(err)
	}
	if s.full.Load() != 1 || s.since.Load() != 0 {
		t.Fatalf("the first search after Warm read %d full and %d partial loads, want none", s.full.Load()-1, s.since.Load())
	}
	// A cache of a few bytes is full after one user; none has no room.
	if room, err := New(s, emb, emb.Space(), Options{CacheBytes: 100}).Warm(ctx, "alice"); err != nil || room {
		t.Fatalf("Warm into a 100-byte cache = %v, %v; want no room", room, err)
	}
	if room, err := New(s, emb, emb.Space(), Options{CacheBytes: -1}).Warm(ctx, "alice"); err != nil || room {
		t.Fatalf("Warm without a cache = %v, %v; want no room", room, err)
	}
}

// gatedStore holds every full load until its gate opens, and counts the
// callers that have read the vectors' state (the step before they ask
// for the load) and the loads that wait at the gate.
type gatedStore struct {
	*countingStore
	gate            chan struct{}
	states, waiting atomic.Int64
}

func (s *gatedStore) VectorsState(ctx context.Context, user, space string) (agentmem.VectorsState, error) {
	st, err := s.countingStore.VectorsState(ctx, user, space)
	s.states.Add(1)
	return st, err
}

func (s *gatedStore) ScanVectors(ctx context.Context, user, space string, fn func(scope, id string, b []byte) error) error {
	s.waiting.Add(1)
	<-s.gate
	return s.countingStore.ScanVectors(ctx, user, space, fn)
}

// TestVectorCache_OneLoad: those who ask for a user's vectors while they
// load share one load; one who stops waiting does not stop it.
func TestVectorCache_OneLoad(t *testing.T) {
	ctx := context.Background()
	s := &gatedStore{countingStore: &countingStore{Store: testutil.MustOpenSQLite(t)}, gate: make(chan struct{})}
	if err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "a", Space: "test/2", Vec: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	c := newVectorCache(1 << 20)
	impatient, cancel := context.WithCancel(ctx)
	errs := make(chan error, 9)
	go func() {
		_, err := c.get(impatient, s, "alice", "test/2")
		errs <- err
	}()
	for range 8 {
		go func() {
			u, err := c.get(ctx, s, "alice", "test/2")
			if err == nil && len(u.keys) != 1 {
				err = fmt.Errorf("%d rows, want 1", len(u.keys))
			}
			errs <- err
		}()
	}
	// All nine have read the state, and the load waits at the gate; a
	// moment more and each waits on the load. (Were one late, it would
	// find the load or its result all the same: the gap only makes the
	// impatient caller's leaving happen while the others wait.)
	for deadline := time.Now().Add(10 * time.Second); s.states.Load() < 9 || s.waiting.Load() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, %d of 9 callers read the state, %d loads wait at the gate", s.states.Load(), s.waiting.Load())
		}
	}
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("the impatient caller: %v, want context.Canceled", err)
	}
	close(s.gate)
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := s.full.Load(); n != 1 {
		t.Fatalf("%d full loads, want 1", n)
	}
}

// TestVectorCache_Forget (issue 28): forgetting an erased user drops
// their vectors of every space from the cache, with their bytes, and
// leaves other users'; a load that was in flight when a user was
// forgotten is answered but not kept, since it may hold erased vectors.
func TestVectorCache_Forget(t *testing.T) {
	ctx := context.Background()
	s := &countingStore{Store: testutil.MustOpenSQLite(t)}
	for _, user := range []string{"alice", "bob"} {
		for _, space := range []string{"test/2", "other/2"} {
			if err := s.PutVectors(ctx, user, []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: "m1", Space: space, Vec: []float32{1, 0}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := newVectorCache(1 << 20)
	var bobs int64
	for _, user := range []string{"alice", "bob"} {
		for _, space := range []string{"test/2", "other/2"} {
			u, err := c.get(ctx, s, user, space)
			if err != nil {
				t.Fatal(err)
			}
			if user == "bob" {
				bobs += u.size
			}
		}
	}
	c.forget("alice")
	c.mu.Lock()
	var users []string
	for k := range c.items {
		users = append(users, k.user)
	}
	if !slices.Equal(users, []string{"bob", "bob"}) || c.ll.Len() != 2 || c.bytes != bobs {
		t.Errorf("after forgetting alice: entries of %v (list %d), %d bytes; want bob's two, %d bytes", users, c.ll.Len(), c.bytes, bobs)
	}
	c.mu.Unlock()

	// A load that began before a forget is not kept.
	u := &userVectors{key: cacheKey{"carol", "test/2"}}
	before := c.forgets
	c.forget("dave")
	c.keep(u, before)
	if _, ok := c.items[u.key]; ok {
		t.Error("a load begun before a forget was kept")
	}
	c.keep(u, c.forgets)
	if _, ok := c.items[u.key]; !ok {
		t.Error("a load begun after the last forget was not kept")
	}
}
