package sqlite

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/workload"
)

// BenchmarkAppend_Latency appends 1,000 single everyday messages to one
// thread, one after the other, with nothing else running, and reports
// the p50, p99 and maximum of their latencies for each synchronous level;
// and, as the baseline of the same run, the same of an 8 KB write and
// fsync of a file in the same directory (the disk's own floor for a
// commit that waits for it, which FULL does).
func BenchmarkAppend_Latency(b *testing.B) {
	b.Run("fsync", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Create(filepath.Join(b.TempDir(), "f"))
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 8<<10)
			reportLatencies(b, 1000, func(i int) {
				if _, err := f.WriteAt(buf, int64(i)*int64(len(buf))); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			})
			f.Close()
		}
	})
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run(sync, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				s, err := Open(ctx, filepath.Join(b.TempDir(), "a.db"), Options{Synchronous: sync})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "u", ID: "t"}); err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				reportLatencies(b, 1000, func(int) {
					msg := &agentmem.Message{Role: agentmem.RoleUser, Content: workload.Message(rng)}
					if _, err := s.AppendMessages(ctx, "u", "t", []*agentmem.Message{msg}, agentmem.AppendOptions{}); err != nil {
						b.Fatal(err)
					}
				})
				s.Close()
			}
		})
	}
}

// reportLatencies times n calls of call, one after the other, and reports
// their p50, p99 and maximum in milliseconds.
func reportLatencies(b *testing.B, n int, call func(i int)) {
	b.Helper()
	lat := make([]time.Duration, n)
	for i := range lat {
		start := time.Now()
		call(i)
		lat[i] = time.Since(start)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[n/2]), "p50-ms")
	b.ReportMetric(ms(lat[n*99/100]), "p99-ms")
	b.ReportMetric(ms(lat[n-1]), "max-ms")
}
