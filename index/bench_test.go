package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/window"
)

// benchTurns are statements and replies of the kind a user makes to an
// assistant, a third of them first-person facts the heuristic extractor
// keeps, mixed at random.
var benchTurns = []string{
	"I live in %s and I work as a nurse at the central hospital.",
	"My favourite food is %s, especially on Sundays with my family.",
	"I'm planning to visit %s next summer with my sister.",
	"We talked about the trip to %s and how expensive the flights were.",
	"That sounds wonderful! What do you like most about %s?",
	"I have two dogs and one of them is scared of the vacuum cleaner near %s.",
	"Yesterday I went hiking near %s and the weather was perfect.",
	"Have you thought about taking a course in painting or pottery in %s?",
	"I don't like %s anymore since the restaurant changed its menu.",
	"The meeting with my boss about the %s project went better than expected.",
}

var benchPlaces = strings.Fields("Lisbon Porto Berlin Paris Madrid Rome Oslo Vienna Prague Dublin Seattle Boston Denver Austin Toronto sushi pasta curry tacos ramen")

// BenchmarkIndex measures ingestion through the indexer: a user's 10
// threads of 100 turns each are indexed as index jobs do after appends:
// each turn's window (full-text) and its vector, heuristic extraction and
// consolidation, and chunks of 10 turns with an extractive summary,
// topics, entities and two vectors. turns/s is what one worker sustains
// on SQLite. "no-embedder" indexes without an embedder: windows and
// chunks only, for consolidation needs vectors and is skipped.
func BenchmarkIndex(b *testing.B) {
	for _, tc := range []struct {
		name string
		emb  bool
	}{{"full", true}, {"no-embedder", false}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			const threads, turns = 10, 100
			var indexed int
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("bench%d.db", i)), sqlite.Options{Synchronous: "NORMAL"})
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				for t := range threads {
					id := fmt.Sprintf("t%d", t)
					if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: id}); err != nil {
						b.Fatal(err)
					}
					msgs := make([]*agentmem.Message, turns)
					for j := range msgs {
						role, name := agentmem.RoleUser, "Alice"
						if j%2 == 1 {
							role, name = agentmem.RoleAssistant, "Bob"
						}
						msgs[j] = &agentmem.Message{Role: role, Name: name,
							Content: fmt.Sprintf(benchTurns[rng.IntN(len(benchTurns))], benchPlaces[rng.IntN(len(benchPlaces))])}
					}
					if _, err := s.AppendMessages(ctx, "alice", id, msgs, agentmem.AppendOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				ix := &index.Indexer{Store: s, Space: "lexical", Summarize: (&window.Summarizer{}).SummarizeChunk}
				if tc.emb {
					emb := lexical.New(0)
					ix.Emb, ix.Space = emb, emb.Space()
				}
				b.StartTimer()
				start := time.Now()
				if err := ix.IndexUser(ctx, "alice"); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				indexed += threads * turns
				b.StopTimer()
				s.Close()
			}
			b.ReportMetric(float64(indexed)/elapsed.Seconds(), "turns/s")
		})
	}
}
