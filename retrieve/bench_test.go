package retrieve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/internal/workload"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/minilm"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/jackc/pgx/v5"
)

// vocabulary is 20,000 made-up words; memoryText draws from it with a
// Zipf distribution, as natural text does, so that a query's words match
// what they would in real memories (a few common words, many rare ones).
var vocabulary = func() []string {
	syll := strings.Fields("ka lo mi ne su ra to vi de pa ri no ma te lu sa be fo gi ho")
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[string]bool{}
	var out []string
	for len(out) < 20_000 {
		w := ""
		for range 2 + rng.IntN(3) {
			w += syll[rng.IntN(len(syll))]
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

// memoryText is a random statement about a user.
func memoryText(z *rand.Zipf) string {
	n := 5 + int(z.Uint64()%8)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = vocabulary[z.Uint64()]
	}
	return "User " + strings.Join(parts, " ") + "."
}

// BenchmarkSearch searches one user's 1,000 / 10,000 / 100,000 memories
// (SQLite, lexical embedder, vectors cached in the searcher: the cache is
// loaded before timing), hybrid and each signal alone, and reports
// p50/p99.
func BenchmarkSearch(b *testing.B) {
	emb := lexical.New(0)
	benchMemories(b, emb, emb.Space())
}

// BenchmarkSearch_Model is BenchmarkSearch with the built-in model
// (minilm), the query embedded by it in every search.
func BenchmarkSearch_Model(b *testing.B) {
	emb := minilm.New()
	benchMemories(b, emb, emb.Space())
}

func benchMemories(b *testing.B, emb agentmem.Embedder, space string) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocabulary)-1))
	// The query: words of middling frequency, as a question's content words are.
	query := "what about " + strings.Join([]string{vocabulary[40], vocabulary[400], vocabulary[4000]}, " ") + "?"
	have := 0
	for _, n := range []int{1_000, 10_000, 100_000} {
		// Grow the user's memories to n (concurrent writers share commits).
		var texts []string
		for range n - have {
			texts = append(texts, memoryText(zipf))
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var vs []agentmem.Vector
				for i := w; i < len(texts); i += 8 {
					m := &agentmem.Memory{UserID: "u", Text: texts[i], Category: "fact", Confidence: 1, Importance: 0.5}
					if err := s.CreateMemory(ctx, m); err != nil {
						b.Error(err)
						return
					}
					vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMemories, ID: m.ID, Space: space, Vec: vecs[i]})
					if len(vs) == 500 {
						if err := s.PutVectors(ctx, "u", vs); err != nil {
							b.Error(err)
						}
						vs = nil
					}
				}
				if err := s.PutVectors(ctx, "u", vs); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		have = n
		searcher := retrieve.New(s, emb, space, retrieve.Options{})
		for _, signals := range [][]string{nil, {"fulltext"}, {"vector"}} {
			name := "hybrid"
			if signals != nil {
				name = signals[0]
			}
			b.Run(fmt.Sprintf("Memories%d/%s", n, name), func(b *testing.B) {
				benchSearch(b, searcher, retrieve.Request{Query: query, Scopes: []string{agentmem.ScopeMemories}, TopK: 10, Signals: signals})
			})
		}
	}
}

// BenchmarkSearch_Messages searches one user's 200 threads of 50 messages
// and 2,000 memories drawn from them (10 a thread), memories and messages
// (the default scopes), hybrid, top 10 (SQLite, built-in embedder, vectors
// cached), and reports p50/p99: first with every memory valid, then with
// one in ten superseded by another, so that most candidate threads have
// outdated memories (what search reads to demote their turns).
func BenchmarkSearch_Messages(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	emb := lexical.New(0)
	rng := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocabulary)-1))
	query := "what about " + strings.Join([]string{vocabulary[40], vocabulary[400], vocabulary[4000]}, " ") + "?"
	var mems []*agentmem.Memory
	for th := range 200 {
		thread := fmt.Sprint("t", th)
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "u", ID: thread}); err != nil {
			b.Fatal(err)
		}
		msgs := make([]*agentmem.Message, 50)
		texts := make([]string, len(msgs))
		for i := range msgs {
			texts[i] = "I " + strings.TrimPrefix(memoryText(zipf), "User ")
			msgs[i] = &agentmem.Message{Role: agentmem.RoleUser, Content: texts[i]}
		}
		out, err := s.AppendMessages(ctx, "u", thread, msgs, agentmem.AppendOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var vs []agentmem.Vector
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		for i, m := range out {
			vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMessages, ID: m.ID, Space: emb.Space(), Vec: vecs[i]})
		}
		for i := range 10 {
			seq := int64(5*i + 1)
			m := &agentmem.Memory{UserID: "u", Text: "User " + strings.TrimPrefix(texts[seq-1], "I "), Confidence: 1, Importance: 0.5,
				ThreadID: thread, SeqFrom: seq, SeqTo: seq}
			if err := s.CreateMemory(ctx, m); err != nil {
				b.Fatal(err)
			}
			v, err := emb.Embed(ctx, []string{m.Text})
			if err != nil {
				b.Fatal(err)
			}
			vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMemories, ID: m.ID, Space: emb.Space(), Vec: v[0]})
			mems = append(mems, m)
		}
		if err := s.PutVectors(ctx, "u", vs); err != nil {
			b.Fatal(err)
		}
	}
	searcher := retrieve.New(s, emb, emb.Space(), retrieve.Options{VectorWeight: retrieve.VectorWeightLexical})
	for _, name := range []string{"valid", "superseded10pct"} {
		if name == "superseded10pct" {
			for i := 0; i+1 < len(mems); i += 10 {
				if _, err := s.InvalidateMemory(ctx, "u", mems[i].ID, mems[i+1].ID, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(name, func(b *testing.B) {
			benchSearch(b, searcher, retrieve.Request{Query: query, TopK: 10})
		})
		// What outdated adds to each search: one FindMemorySources over the
		// turns of the candidates (at most 2 × 50 items; here 100 messages
		// of 100 threads, one in five the source of a memory).
		b.Run(name+"/sources", func(b *testing.B) {
			var ranges []agentmem.ThreadRange
			for i := range 100 {
				ranges = append(ranges, agentmem.ThreadRange{ThreadID: fmt.Sprint("t", 2*i), SeqFrom: int64(i%50 + 1), SeqTo: int64(i%50 + 1)})
			}
			timeEach(b, func() error {
				_, err := s.FindMemorySources(ctx, "u", ranges)
				return err
			})
		})
	}
}

// benchSearch times searcher's answers to req, after a first search that
// loads the vector cache; each must find something. With queries, the
// searches ask each of them in turn instead of req.Query.
func benchSearch(b *testing.B, searcher *retrieve.Searcher, req retrieve.Request, queries ...string) {
	b.Helper()
	ctx := context.Background()
	if _, err := searcher.Search(ctx, "u", req); err != nil {
		b.Fatal(err)
	}
	i := 0
	timeEach(b, func() error {
		if len(queries) > 0 {
			req.Query = queries[i%len(queries)]
			i++
		}
		res, err := searcher.Search(ctx, "u", req)
		if err == nil && len(res.Results) == 0 {
			err = fmt.Errorf("no results for %q", req.Query)
		}
		return err
	})
}

// timeEach runs fn in the benchmark's loop and reports the p50 and p99 of
// its durations. The loop's samples in a CPU profile (and those of the
// goroutines it starts) carry the label bench=the benchmark's name, so
// that a profile shows the searches apart from the loading:
// go tool pprof -tagfocus 'bench=Messages100000/warm' ...
func timeEach(b *testing.B, fn func() error) {
	b.Helper()
	var lat []time.Duration
	pprof.Do(context.Background(), pprof.Labels("bench", b.Name()), func(context.Context) {
		for b.Loop() {
			start := time.Now()
			if err := fn(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
	})
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkSearch_History searches one user whose history grows to 1,000,
// 10,000 and 100,000 messages (threads of 100 turns), each indexed as
// serve indexes it (its window, agentmem.WindowText, for full-text search
// and embedded), with a memory for every tenth message: the default
// scopes (memories and messages), hybrid, top 10, on SQLite and on
// PostgreSQL (where AGENTMEM_TEST_POSTGRES is set), with serve's
// configuration of the lexical embedder (--embedder lexical: its vectors
// and vector weight). "cold" is the first search of a new searcher (an
// empty vector cache, as after a restart), "warmup" what serve's warm-up
// after a start spends on the user (Searcher.Warm), "warm" the searches
// after ("fulltext" and "vector" each signal alone, "memories" the
// memories alone: one for every tenth message).
func BenchmarkSearch_History(b *testing.B) {
	benchHistoryBackends(b, madeUpText(), "lexical")
}

// BenchmarkSearch_Everyday is BenchmarkSearch_BuiltinHistory on the
// everyday workload (package workload: 30-word messages and 8-word
// queries from a 250-word vocabulary, so that every query word occurs in
// thousands of turns), with serve's default embedders, 50 queries in
// turn.
func BenchmarkSearch_Everyday(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 9))
	text := historyText{message: func() string { return workload.Message(rng) }}
	for range 50 {
		text.queries = append(text.queries, workload.Query(rng))
	}
	benchHistoryBackends(b, text, "builtin")
}

// BenchmarkSearch_BuiltinHistory is BenchmarkSearch_History with serve's
// default embedders (--embedder builtin: the windows embedded by the
// static table, the bulk space; the memories by the model; the query by
// each in every search; each space's vector weight) and, as its
// baseline, the lexical embedder's: the same history is embedded by both
// (in their own spaces), and each measurement runs with one, then the
// other ("Messages100000/builtin/warm", "Messages100000/lexical/warm"),
// so that a ratio compares searches of the same data a moment apart.
// (Its name does not contain "Search_History", so that the commands of
// docs/benchmarks.md that run BenchmarkSearch_History run it alone.)
func BenchmarkSearch_BuiltinHistory(b *testing.B) {
	benchHistoryBackends(b, madeUpText(), "builtin", "lexical")
}

// historyText is what a benchmark's history says, and what it is asked.
type historyText struct {
	message func() string
	queries []string
}

// madeUpText is the history of BenchmarkSearch_History: statements of
// the made-up vocabulary drawn by a Zipf distribution, and a query of
// words of middling frequency, as a question's content words are, and
// one the history lacks (expanded by the built-in embedders: see
// nearVocabulary).
func madeUpText() historyText {
	rng := rand.New(rand.NewPCG(5, 6))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocabulary)-1))
	return historyText{
		message: func() string { return "I " + strings.TrimPrefix(memoryText(zipf), "User ") },
		queries: []string{"what about " + strings.Join([]string{vocabulary[40], vocabulary[400], vocabulary[4000]}, " ") + " quokka?"},
	}
}

// nearVocabulary stands for minilm.NearWords in the benchmarks, whose
// words are made up: the query's word the history lacks ("quokka", see
// benchHistory) has for near words five of the vocabulary's of middling
// frequency (ranks 401–405), which the history holds, so that scoring the
// candidates that hold near words (retrieve.withNearWords) has some to
// score, as in real text, where near words are the user's words too; the
// others have none (they are found, and are not expanded anyway).
func nearVocabulary(w string) ([]string, error) {
	if w == "quokka" {
		return vocabulary[401:406], nil
	}
	return nil, nil
}

// benchHistoryBackends runs benchHistory on SQLite and PostgreSQL with
// the embedders serve configures for each --embedder of embedders.
func benchHistoryBackends(b *testing.B, text historyText, embedders ...string) {
	embs := make([]*app.Embedders, len(embedders))
	for i, name := range embedders {
		var err error
		if embs[i], err = app.NewEmbedders(context.Background(), app.Config{Embedder: name}); err != nil {
			b.Fatal(err)
		}
		if embs[i].Expand != nil {
			embs[i].Expand = nearVocabulary
		}
	}
	names := embedders
	if len(names) == 1 {
		names = []string{""} // the measurements' names, as they were before others
	}
	b.Run("SQLite", func(b *testing.B) {
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchHistory(b, s, text, names, embs, func() {})
	})
	b.Run("PostgreSQL", func(b *testing.B) {
		dsn := testutil.MustCreateSchema(b)
		s := testutil.MustOpenPostgresDSN(b, dsn)
		// After each load, the statistics autovacuum would gather within
		// its minute: without them the planner takes the user's thousand
		// threads for one and looks up candidates thread by thread (55 ms
		// for 20 messages, against 0.7 ms).
		analyze := func() {
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), "ANALYZE"); err != nil {
				b.Fatal(err)
			}
		}
		benchHistory(b, s, text, names, embs, analyze)
	})
}

// benchHistory is BenchmarkSearch_History on s: the history is embedded
// by each of embs (app.Embedders: the windows by its Bulk when set, the
// memories by its Emb), and each measurement runs with each (the query
// embedded, and the searcher configured, as serve does), named
// "Messages<n>/<name>/<measurement>" ("Messages<n>/<measurement>" for a
// name ""); analyze runs after each load.
func benchHistory(b *testing.B, s agentmem.Store, text historyText, names []string, embs []*app.Embedders, analyze func()) {
	ctx := context.Background()
	// As serve's searcher (app.New), but for the admission control.
	newSearcher := func(e *app.Embedders) *retrieve.Searcher {
		return retrieve.New(s, e.Queries, e.Space, e.SearchOptions())
	}
	const turns = 100
	have := 0
	for _, n := range []int{1_000, 10_000, 100_000} {
		for ; have < n; have += turns {
			thread := fmt.Sprint("t", have/turns)
			if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "u", ID: thread}); err != nil {
				b.Fatal(err)
			}
			msgs := make([]*agentmem.Message, turns)
			texts := make([]string, turns)
			for i := range msgs {
				role := agentmem.RoleUser
				if i%2 == 1 {
					role = agentmem.RoleAssistant
				}
				texts[i] = text.message()
				msgs[i] = &agentmem.Message{Role: role, Content: texts[i]}
			}
			out, err := s.AppendMessages(ctx, "u", thread, msgs, agentmem.AppendOptions{})
			if err != nil {
				b.Fatal(err)
			}
			seqs := make([]int64, turns)
			wt := make([]string, turns)
			for i := range seqs {
				wt[i] = agentmem.WindowText(texts, i)
				seqs[i] = out[i].Seq
			}
			ws := agentmem.TurnWindows(seqs)
			if err := s.PutMessageWindows(ctx, "u", thread, ws); err != nil {
				b.Fatal(err)
			}
			var mtexts []string
			var mems []*agentmem.Memory
			for i := 0; i < turns; i += 10 {
				m := &agentmem.Memory{UserID: "u", Text: "User " + strings.TrimPrefix(texts[i], "I "), Confidence: 1, Importance: 0.5,
					ThreadID: thread, SeqFrom: out[i].Seq, SeqTo: out[i].Seq}
				if !strings.HasPrefix(texts[i], "I ") {
					m.Text = "User " + strings.ToLower(texts[i][:1]) + texts[i][1:]
				}
				if err := s.CreateMemory(ctx, m); err != nil {
					b.Fatal(err)
				}
				mems, mtexts = append(mems, m), append(mtexts, m.Text)
			}
			var vs []agentmem.Vector
			for _, e := range embs {
				bulk := agentmem.Embedding{Embedder: e.Emb, Space: e.Space}
				if e.Bulk != nil {
					bulk = *e.Bulk
				}
				vecs, err := bulk.Embedder.Embed(ctx, wt)
				if err != nil {
					b.Fatal(err)
				}
				for i, m := range out {
					vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMessages, ID: m.ID, Space: bulk.Space, Vec: vecs[i]})
				}
				mvecs, err := e.Emb.Embed(ctx, mtexts)
				if err != nil {
					b.Fatal(err)
				}
				for i, m := range mems {
					vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMemories, ID: m.ID, Space: e.Space, Vec: mvecs[i]})
				}
			}
			if err := s.PutVectors(ctx, "u", vs); err != nil {
				b.Fatal(err)
			}
		}
		analyze()
		req := retrieve.Request{Query: text.queries[0], TopK: 10}
		name := func(measurement, embedder string) string {
			if embedder == "" {
				return fmt.Sprintf("Messages%d/%s", n, measurement)
			}
			return fmt.Sprintf("Messages%d/%s/%s", n, embedder, measurement)
		}
		for i, e := range embs {
			b.Run(name("cold", names[i]), func(b *testing.B) {
				timeEach(b, func() error {
					_, err := newSearcher(e).Search(ctx, "u", req)
					return err
				})
			})
		}
		// What serve's warm-up after a start does for this user.
		for i, e := range embs {
			b.Run(name("warmup", names[i]), func(b *testing.B) {
				timeEach(b, func() error {
					_, err := newSearcher(e).Warm(ctx, "u")
					return err
				})
			})
		}
		searchers := make([]*retrieve.Searcher, len(embs))
		for i, e := range embs {
			searchers[i] = newSearcher(e)
		}
		for _, measurement := range []string{"warm", "fulltext", "vector", "memories"} {
			r := req
			switch measurement {
			case "fulltext", "vector":
				r.Signals = []string{measurement}
			case "memories":
				r.Scopes = []string{agentmem.ScopeMemories}
			}
			for i := range embs {
				b.Run(name(measurement, names[i]), func(b *testing.B) {
					benchSearch(b, searchers[i], r, text.queries...)
				})
			}
		}
	}
}
