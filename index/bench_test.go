package index_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
				if err := ix.IndexUser(agentmem.WithBackground(ctx), "alice"); err != nil { // as a job runs it
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

// BenchmarkAppend_WhileIndexing measures what indexing costs the request
// path on SQLite: single-message appends to a thread of their own, p50
// and p99, on an idle store ("idle") and while one worker indexes a
// backlog of 20,000 turns of another user, in threads of 1,000 ("indexing": windows and their
// vectors, extraction and consolidation, chunks), as after a bulk load.
func BenchmarkAppend_WhileIndexing(b *testing.B) {
	for _, name := range []string{"idle", "indexing"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: os.Getenv("SYNC")})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			const threads, turns = 20, 1000
			for t := range threads {
				id := fmt.Sprintf("t%d", t)
				if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "bulk", ID: id}); err != nil {
					b.Fatal(err)
				}
				msgs := make([]*agentmem.Message, turns)
				for j := range msgs {
					role := agentmem.RoleUser
					if j%2 == 1 {
						role = agentmem.RoleAssistant
					}
					msgs[j] = &agentmem.Message{Role: role, Content: fmt.Sprintf(benchTurns[rng.IntN(len(benchTurns))], benchPlaces[rng.IntN(len(benchPlaces))])}
				}
				if _, err := s.AppendMessages(ctx, "bulk", id, msgs, agentmem.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "live", ID: "chat"}); err != nil {
				b.Fatal(err)
			}
			idxCtx, stop := context.WithCancel(ctx)
			indexed := make(chan error, 1)
			if name == "indexing" {
				emb := lexical.New(0)
				ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space(), Summarize: (&window.Summarizer{}).SummarizeChunk}
				// As the worker runs it: background work (agentmem.WithBackground).
				go func() { indexed <- ix.IndexUser(agentmem.WithBackground(idxCtx), "bulk") }()
				time.Sleep(200 * time.Millisecond) // under way
			} else {
				indexed <- nil
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := s.AppendMessages(ctx, "live", "chat", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "I live in Lisbon and I work as a nurse."}}, agentmem.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			stop()
			if err := <-indexed; err != nil && !errors.Is(err, context.Canceled) {
				b.Fatal(err)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		})
	}
}

// BenchmarkIndexer_Lag: what reading a thread's index lag adds to each
// context build (SQLite), with the thread's two shared index jobs waiting
// among 1,000 jobs of other threads of the user.
func BenchmarkIndexer_Lag(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ix := &index.Indexer{Store: s, Jobs: s}
	for i := range 1000 {
		if err := ix.Enqueue(ctx, "alice", fmt.Sprint("other", i), 1, 10); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "hi"}}, agentmem.AppendOptions{}); err != nil {
		b.Fatal(err)
	}
	if err := ix.Enqueue(ctx, "alice", "t", 1, 1); err != nil {
		b.Fatal(err)
	}
	th, err := s.FindThreadByID(ctx, "alice", "t")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if n, _, err := ix.Lag(ctx, th); err != nil || n != 1 {
			b.Fatalf("lag %d, %v; want 1", n, err)
		}
	}
}
