package proxy_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/proxy"
)

// BenchmarkProxy measures what the proxy adds to a model call: each
// iteration sends one new turn through the proxy (full mode: agentmem
// stores it, builds the context from a thread of 100 or 100,000 messages
// within gpt-4o's budget, forwards it, stores the answer), then the very
// request the proxy forwarded straight to the fake upstream, the
// baseline. The added time is the difference, at p50 and p99; streamed,
// to the first event (time to first byte), else to the whole answer. The
// user's first call after the history was loaded, which reads it cold,
// is reported apart (first-call-ms).
//
//	go test ./proxy -run '^$' -bench BenchmarkProxy -benchtime 200x
//
// With AGENTMEM_TEST_POSTGRES set, PostgreSQL runs too.
func BenchmarkProxy(b *testing.B) {
	backends := []string{"SQLite"}
	if os.Getenv("AGENTMEM_TEST_POSTGRES") != "" {
		backends = append(backends, "PostgreSQL")
	}
	for _, backend := range backends {
		for _, history := range []int{100, 100_000} {
			for _, streamed := range []bool{false, true} {
				name := fmt.Sprintf("%s/history=%d/stream=%v", backend, history, streamed)
				b.Run(name, func(b *testing.B) {
					var db string
					if backend == "PostgreSQL" {
						db = testutil.MustCreateSchema(b)
					}
					e := newEnv(b, func(o *envOptions) { o.db = db })
					seedHistory(b, e, history)
					benchProxy(b, e, streamed)
				})
			}
		}
	}
}

// seedHistory appends a thread of n messages for user "bench" and waits
// until it is indexed.
func seedHistory(b *testing.B, e *env, n int) {
	b.Helper()
	msgs := make([]*agentmem.Message, n)
	for i := range msgs {
		role, text := agentmem.RoleUser, fmt.Sprintf("Turn %d: I am planning the trip to Kyoto, item %d on my list is a temple visit with my sister.", i/2, i)
		if i%2 == 1 {
			role, text = agentmem.RoleAssistant, fmt.Sprintf("Noted item %d: the temple visit; the best hours are early morning, before the crowds.", i)
		}
		msgs[i] = &agentmem.Message{Role: role, Content: text}
	}
	if err := e.mem.CreateThread(ctx, "bench", &agentmem.Thread{ID: "bench"}); err != nil {
		b.Fatal(err)
	}
	for batch := range slices.Chunk(msgs, agentmem.MaxBatchMessages) {
		if _, err := e.mem.AppendMessages(ctx, "bench", "bench", batch, ""); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		backlog, err := e.mem.JobBacklog(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(backlog) == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("still indexing: %+v", backlog)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func benchProxy(b *testing.B, e *env, streamed bool) {
	hc := &http.Client{}
	call := func(url, auth string, body []byte, header http.Header) time.Duration {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header = header.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+auth)
		start := time.Now()
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			msg, _ := io.ReadAll(res.Body)
			b.Fatalf("%s: %d %s", url, res.StatusCode, msg)
		}
		if streamed {
			line, err := bufio.NewReader(res.Body).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "data:") {
				b.Fatalf("first line %q: %v", line, err)
			}
			d := time.Since(start)
			io.Copy(io.Discard, res.Body)
			return d
		}
		io.Copy(io.Discard, res.Body)
		return time.Since(start)
	}
	header := http.Header{proxy.HeaderUser: {"bench"}, proxy.HeaderThread: {"bench"}, proxy.HeaderMemory: {agentmem.MemoryFull}}
	body := func(i int) []byte {
		return fmt.Appendf(nil, `{"model":"gpt-4o","stream":%v,"messages":[{"role":"system","content":"You are a travel agent."},{"role":"user","content":"What about day %d of the Kyoto trip?"}]}`, streamed, i)
	}
	// The user's first call after the history was loaded reads it cold
	// (the search's vectors, the thread's tail): reported apart.
	cold := call(e.srv.URL+"/openai/v1/chat/completions", "app-key", body(-1), header)
	var proxied, direct []time.Duration
	var sentBytes int
	b.ResetTimer()
	for i := range b.N {
		body := body(i)
		proxied = append(proxied, call(e.srv.URL+"/openai/v1/chat/completions", "app-key", body, header))
		bodies := e.upstreamBodies("/v1/chat/completions")
		fwd := bodies[len(bodies)-1]
		sentBytes += len(fwd)
		direct = append(direct, call(e.fake.BaseURL()+"/chat/completions", "upstream-key", fwd, http.Header{}))
	}
	b.StopTimer()
	p := func(ds []time.Duration, q float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(proxied, .5), "proxy-p50-ms")
	b.ReportMetric(p(proxied, .99), "proxy-p99-ms")
	b.ReportMetric(p(direct, .5), "direct-p50-ms")
	b.ReportMetric(p(direct, .99), "direct-p99-ms")
	added := make([]time.Duration, len(proxied))
	for i := range proxied {
		added[i] = proxied[i] - direct[i]
	}
	b.ReportMetric(p(added, .5), "added-p50-ms")
	b.ReportMetric(p(added, .99), "added-p99-ms")
	b.ReportMetric(float64(sentBytes)/float64(b.N), "upstream-B/req")
	b.ReportMetric(float64(cold.Microseconds())/1000, "first-call-ms")
}
