package window_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/tokens"
	"github.com/agentmem/agentmem/window"
)

// fill appends n messages of a realistic chat to a new thread of user u.
func fill(b *testing.B, s *sqlite.Store, id string, n int) {
	b.Helper()
	th := &agentmem.Thread{UserID: "u", ID: id}
	if err := s.CreateThread(ctx, th); err != nil {
		b.Fatal(err)
	}
	msgs := conversation((n + 1) / 2)[:n]
	for i := 0; i < n; i += agentmem.MaxBatchMessages {
		batch := msgs[i:min(i+agentmem.MaxBatchMessages, n)]
		if _, err := s.AppendMessages(ctx, "u", id, batch, agentmem.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// naiveBuild is what the seeds do for every call: read the whole history,
// count every message with the tokenizer, and drop the oldest until the
// rest fits. It is the baseline of BenchmarkBuild.
func naiveBuild(b *testing.B, s *sqlite.Store, id string, budget int) int {
	tok := tokens.Default()
	var all []*agentmem.Message
	for cursor := ""; ; {
		page, next, err := s.FindMessages(ctx, "u", id, agentmem.MessageFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	counts := make([]int, len(all))
	total := 0
	for i, m := range all {
		counts[i] = 3 + tok.CountTokens(m.Content)
		total += counts[i]
	}
	for len(all) > 0 && total > budget {
		total -= counts[0]
		all, counts = all[1:], counts[1:]
	}
	return len(all)
}

// BenchmarkBuild builds contexts (trim, chat messages) with 4K, 32K and
// 128K budgets over threads of 100, 10,000 and 100,000 messages, warm and
// cold, and reports p50/p99. Baseline: the naive rebuild of naiveBuild, on the
// same threads, for the 4K budget (its cost does not depend on the budget).
func BenchmarkBuild(b *testing.B) {
	s := testutil.MustOpenSQLite(b)
	sizes := []int{100, 10_000, 100_000}
	for _, n := range sizes {
		fill(b, s, fmt.Sprint("t", n), n)
	}
	// Warm: a thread built before, as in a conversation; its newest
	// messages are in the tail cache. Cold: every build reads its history
	// from the store (the tail cache disabled). The context cache is off
	// in both, or every build after the first would be a cache hit.
	builders := map[string]*window.Builder{
		"Warm": MustBuilder(s, window.Options{CacheSize: -1}),
		"Cold": MustBuilder(s, window.Options{CacheSize: -1, TailCacheBytes: -1}),
	}
	for _, budget := range []int{4_000, 32_000, 128_000} {
		for _, n := range sizes {
			for _, mode := range []string{"Warm", "Cold"} {
				bld := builders[mode]
				b.Run(fmt.Sprintf("Budget%dK/History%d/%s", budget/1000, n, mode), func(b *testing.B) {
					req := window.Request{Input: "What next?", BudgetTokens: budget, Strategy: window.StrategyTrim}
					var lat []time.Duration
					b.ReportAllocs()
					for b.Loop() {
						start := time.Now()
						c, err := bld.Build(ctx, "u", fmt.Sprint("t", n), req)
						if err != nil || c.Telemetry.UsedTokens > budget {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					report(b, lat)
				})
			}
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("Budget4K/History%d/BaselineNaive", n), func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				naiveBuild(b, s, fmt.Sprint("t", n), 4_000)
				lat = append(lat, time.Since(start))
			}
			report(b, lat)
		})
	}
	b.Run("Budget32K/History100000/Cached", func(b *testing.B) {
		cached := MustBuilder(s, window.Options{})
		req := window.Request{Input: "What next?", BudgetTokens: 32_000, Strategy: window.StrategyTrim}
		var lat []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := cached.Build(ctx, "u", "t100000", req); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		report(b, lat)
	})
}

func report(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkCountTokens measures the tokenizer on chat text, the cost the
// stored counts save at every build.
func BenchmarkCountTokens(b *testing.B) {
	text := strings.Repeat("Sure. For the Lisbon trip, start with a list of what matters most, then we can plan it together. ", 10)
	tok := tokens.Default()
	b.SetBytes(int64(len(text)))
	n := 0
	for b.Loop() {
		n += tok.CountTokens(text)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
}
