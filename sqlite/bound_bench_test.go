package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/workload"
)

// BenchmarkSearchMessages_Bound compares the bounded search over
// messages (searchMessages, whose word lists fill over a long history)
// with ranking every match (windowScores with lists of every match) on one user's 100,000
// turns of the everyday workload (package workload), windows as serve
// writes them: the share of the exact top 10 that the bounded top 10
// holds (overlap@10), the share of the exact top 10 that is among the
// newest 10,000 turns, and each search's mean time, over 50 queries.
func BenchmarkSearchMessages_Bound(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	const threads, turns = 1000, 100
	for th := range threads {
		id := fmt.Sprint("t", th)
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "u", ID: id}); err != nil {
			b.Fatal(err)
		}
		msgs := make([]*agentmem.Message, turns)
		texts := make([]string, turns)
		seqs := make([]int64, turns)
		for i := range msgs {
			texts[i] = workload.Message(rng)
			msgs[i] = &agentmem.Message{Role: agentmem.RoleUser, Content: texts[i]}
			seqs[i] = int64(i + 1)
		}
		ws := agentmem.TurnWindows(seqs)
		if _, err := s.AppendMessages(ctx, "u", id, msgs, agentmem.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := s.PutMessageWindows(ctx, "u", id, ws); err != nil {
			b.Fatal(err)
		}
	}
	var queries [][]string
	for range 50 {
		queries = append(queries, agentmem.SearchTerms(workload.Query(rng)))
	}
	var overlap, recent, n float64
	var bounded, exact time.Duration
	for b.Loop() {
		for _, terms := range queries {
			q := agentmem.TextQuery{Scopes: []string{agentmem.ScopeMessages}, Limit: 10}
			var got, want []agentmem.TextHit
			err := s.read(ctx, func(tx *sql.Tx) error {
				start := time.Now()
				var err error
				if got, err = searchMessages(ctx, tx, "u", terms, q); err != nil {
					return err
				}
				bounded += time.Since(start)
				start = time.Now()
				scores, _, err := windowScores(ctx, tx, "u", terms, -1)
				if err != nil {
					return err
				}
				if want, err = joinBounded(scores, q.Limit, func(docs string) ([]agentmem.TextHit, error) {
					return joinMessages(ctx, tx, "u", q, docsScores, docs)
				}); err != nil {
					return err
				}
				exact += time.Since(start)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			in := map[string]bool{}
			for _, h := range got {
				in[h.ID] = true
			}
			for _, h := range want {
				if in[h.ID] {
					overlap++
				}
				var th int
				fmt.Sscanf(h.ThreadID, "t%d", &th)
				if th >= threads-10_000/turns {
					recent++
				}
				n++
			}
		}
	}
	b.ReportMetric(overlap/n, "overlap@10")
	b.ReportMetric(recent/n, "exact-top10-newest-10k")
	b.ReportMetric(float64(bounded.Milliseconds())/n*10, "bounded-ms")
	b.ReportMetric(float64(exact.Milliseconds())/n*10, "exact-ms")
}
