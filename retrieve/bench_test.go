package retrieve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/sqlite"
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
// (SQLite, built-in embedder, vectors cached in the searcher: the cache is
// loaded before timing), hybrid and each signal alone, and reports
// p50/p99.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	emb := lexical.New(0)
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
					vs = append(vs, agentmem.Vector{Scope: agentmem.ScopeMemories, ID: m.ID, Space: emb.Space(), Vec: vecs[i]})
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
		searcher := retrieve.New(s, emb, emb.Space(), retrieve.Options{})
		for _, signals := range [][]string{nil, {"fulltext"}, {"vector"}} {
			name := "hybrid"
			if signals != nil {
				name = signals[0]
			}
			b.Run(fmt.Sprintf("Memories%d/%s", n, name), func(b *testing.B) {
				req := retrieve.Request{Query: query, Scopes: []string{agentmem.ScopeMemories}, TopK: 10, Signals: signals}
				if _, err := searcher.Search(ctx, "u", req); err != nil { // loads the vector cache
					b.Fatal(err)
				}
				var lat []time.Duration
				for b.Loop() {
					start := time.Now()
					res, err := searcher.Search(ctx, "u", req)
					if err != nil || len(res.Results) == 0 {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}
