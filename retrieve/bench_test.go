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

var words = strings.Fields(`travel lisbon porto budget groceries portuguese lessons party birthday maria rollover
	retirement savings running marathon garden tomatoes cooking pasta sushi vegetarian nurse hospital shift
	daughter school piano guitar cello concert museum painting photography camera hiking mountains beach
	surfing dog cat vet appointment insurance car bike commute train flight hotel apartment rent mortgage`)

// memoryText is a random statement about a user, like those extraction writes.
func memoryText(rng *rand.Rand) string {
	n := 5 + rng.IntN(8)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[rng.IntN(len(words))]
	}
	return "User " + strings.Join(parts, " ") + "."
}

// BenchmarkSearch searches one user's 1,000 / 10,000 / 100,000 memories
// (SQLite, built-in embedder, vectors cached in the searcher), hybrid and
// each signal alone, and reports p50/p99.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	emb := lexical.New(0)
	rng := rand.New(rand.NewPCG(1, 2))
	have := 0
	for _, n := range []int{1_000, 10_000, 100_000} {
		// Grow the user's memories to n (concurrent writers share commits).
		var texts []string
		for range n - have {
			texts = append(texts, memoryText(rng))
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
				var lat []time.Duration
				for b.Loop() {
					start := time.Now()
					res, err := searcher.Search(ctx, "u", retrieve.Request{Query: "what does the user cook for the birthday party?", Scopes: []string{agentmem.ScopeMemories}, TopK: 10, Signals: signals})
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
