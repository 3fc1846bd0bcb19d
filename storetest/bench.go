package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

// Bench measures the store operations whose targets DESIGN.md sets. open
// returns an empty, migrated store, as for Run.
func Bench(b *testing.B, open func(tb testing.TB) agentmem.Store) {
	content := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4) // ~180 bytes, a short chat turn
	b.Run("AppendOne", func(b *testing.B) {
		s := open(b)
		th := MustCreateThread(b, s, &agentmem.Thread{UserID: "u"})
		b.ReportAllocs()
		var lat latencies
		for b.Loop() {
			start := time.Now()
			if _, err := s.AppendMessages(ctx, "u", th.ID, []*agentmem.Message{{Role: "user", Content: content}}, agentmem.AppendOptions{}); err != nil {
				b.Fatal(err)
			}
			lat.add(start)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		lat.report(b)
	})
	b.Run("AppendBatch10", func(b *testing.B) {
		s := open(b)
		th := MustCreateThread(b, s, &agentmem.Thread{UserID: "u"})
		var lat latencies
		for b.Loop() {
			batch := make([]*agentmem.Message, 10)
			for i := range batch {
				batch[i] = &agentmem.Message{Role: "user", Content: content}
			}
			start := time.Now()
			if _, err := s.AppendMessages(ctx, "u", th.ID, batch, agentmem.AppendOptions{}); err != nil {
				b.Fatal(err)
			}
			lat.add(start)
		}
		b.ReportMetric(10*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		lat.report(b)
	})
	// AppendOneParallel: many clients, each appending single messages to
	// its own thread, as HTTP handlers do; group commit shares the fsyncs.
	b.Run("AppendOneParallel", func(b *testing.B) {
		s := open(b)
		var n atomic.Int64
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			th := MustCreateThread(b, s, &agentmem.Thread{UserID: fmt.Sprintf("u%d", n.Add(1))})
			for pb.Next() {
				if _, err := s.AppendMessages(ctx, th.UserID, th.ID, []*agentmem.Message{{Role: "user", Content: content}}, agentmem.AppendOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
	for _, size := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("Newest50Of%d", size), func(b *testing.B) {
			s := open(b)
			th := fillThread(b, s, size, content)
			analyze(b, s)
			b.ReportAllocs()
			var lat latencies
			for b.Loop() {
				start := time.Now()
				page, _, err := s.FindMessages(ctx, "u", th.ID, agentmem.MessageFilter{Desc: true, Limit: 50})
				if err != nil || len(page) != 50 || page[0].Seq != int64(size) {
					b.Fatalf("newest page: %d messages, %v", len(page), err)
				}
				lat.add(start)
			}
			lat.report(b)
			// After the loop: b.Loop's first call resets the timer, which
			// clears metrics reported before it.
			if st, err := s.Stats(ctx); err == nil {
				b.ReportMetric(float64(st.StoreBytes)*100/float64(size), "store-B/100msgs")
			}
		})
		// The baseline: what a chat history that reads the whole thread to
		// keep its tail (LangChain's PostgresChatMessageHistory) costs here.
		b.Run(fmt.Sprintf("Newest50Of%d/BaselineReadAll", size), func(b *testing.B) {
			s := open(b)
			th := fillThread(b, s, size, content)
			for b.Loop() {
				all := allMessages(b, s, "u", th.ID)
				if tail := all[len(all)-50:]; tail[49].Seq != int64(size) {
					b.Fatal("wrong tail")
				}
			}
		})
	}
	benchSearch(b, open)
	b.Run("ThreadList10000", func(b *testing.B) {
		s := open(b)
		const threads, workers = 10_000, 32
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < threads; i += workers {
					if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "u", Title: fmt.Sprint(i)}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		analyze(b, s)
		// The cursor of the page that starts at thread 9,000.
		deep := ""
		for range 9_000 / 1_000 {
			_, next, err := s.FindThreads(ctx, "u", agentmem.ThreadFilter{Limit: 1_000, Cursor: deep})
			if err != nil {
				b.Fatal(err)
			}
			deep = next
		}
		for _, page := range []struct{ name, cursor string }{{"FirstPage", ""}, {"DeepPage", deep}} {
			b.Run(page.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					got, _, err := s.FindThreads(ctx, "u", agentmem.ThreadFilter{Limit: 50, Cursor: page.cursor})
					if err != nil || len(got) != 50 {
						b.Fatalf("page: %d threads, %v", len(got), err)
					}
				}
			})
		}
	})
}

// fillThread creates a thread of user "u" holding size messages.
func fillThread(b *testing.B, s agentmem.Store, size int, content string) *agentmem.Thread {
	th := MustCreateThread(b, s, &agentmem.Thread{UserID: "u"})
	for done := 0; done < size; done += agentmem.MaxBatchMessages {
		batch := make([]*agentmem.Message, min(agentmem.MaxBatchMessages, size-done))
		for i := range batch {
			batch[i] = &agentmem.Message{Role: "user", Content: content}
		}
		if _, err := s.AppendMessages(ctx, "u", th.ID, batch, agentmem.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return th
}

// latencies records the duration of each operation of a benchmark so that
// it can report tail latency (p99) beside Go's mean ns/op.
type latencies []time.Duration

func (l *latencies) add(start time.Time) { *l = append(*l, time.Since(start)) }

// report adds p50 and p99 in microseconds to the benchmark's metrics.
func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	at := func(q float64) float64 { return float64(l[int(q*float64(len(l)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// analyze refreshes the planner statistics of a store that keeps them (see
// postgres.Store.Analyze) after a bulk load, as an operator would after an
// import: a table filled faster than autovacuum analyzes it is planned as
// if empty, and the first page of 10,000 threads is then sorted instead of
// read from the index (5.8 ms instead of 0.4 ms, measured).
func analyze(b *testing.B, s agentmem.Store) {
	if a, ok := s.(interface{ Analyze(context.Context) error }); ok {
		if err := a.Analyze(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
