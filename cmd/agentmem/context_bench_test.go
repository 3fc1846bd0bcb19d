package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/internal/workload"
)

var contextProfile = flag.String("context-cpuprofile", "", "BenchmarkServe_ContextEveryday: write a CPU profile of the timed context builds (server, client, in process), not of the load and its indexing, to this file")

// The context benchmark's requests: the newest messages that fit the
// budget, trimmed (the peer's FIFO), no input, serve's default model
// (gpt-4o: the o200k counts stored with each message) and format (chat
// messages). Two budgets: 21,000 tokens, what LlamaIndex's Memory keeps
// of the chat history with its defaults (token_limit 30,000 × the 0.7
// of it that chat_history_token_ratio reserves for the history: its
// get() returns about as many messages), and its whole token_limit,
// 30,000.
var contextBudgets = []int{21_000, 30_000}

const (
	contextCalls  = 1_000 // timed builds of each kind
	contextWarmup = 20
)

// contextRequest is the benchmark's request with budget; key > 0 makes
// it another request of the same work (a summarize policy, which trim
// never reads but the context cache's key holds), which the cache does
// not answer.
func contextRequest(budget, key int) agentmem.ContextRequest {
	req := agentmem.ContextRequest{BudgetTokens: budget, Strategy: "trim"}
	if key > 0 {
		req.Summarize = &agentmem.SummarizePolicy{TriggerTurns: key}
	}
	return req
}

// BenchmarkServe_ContextEveryday measures the context for the next model
// call of one conversation of 100, 10,000 and 100,000 everyday messages
// (workload.Conversation, the turns bench/peers/run.sh gives LlamaIndex),
// loaded into a real serve through the API in batches of 1,000 and
// indexed by its workers before anything is timed. For each budget (see
// contextBudgets), p50 and p99 of 1,000 builds, each a miss of the
// context cache:
//
//   - http: over HTTP, by the project's Go client (package client: the
//     request encoded, the answer decoded) on one keep-alive connection,
//     one request at a time;
//   - inproc: in process, by the service of an app opened on the same
//     database as `agentmem context` does (no HTTP, no JSON), with its
//     allocations a build;
//
// and hit: 1,000 identical requests over HTTP, which the context cache
// answers. With -context-cpuprofile FILE, the timed builds are profiled
// (server, client and in process; not the load and its indexing).
//
//	go test ./cmd/agentmem -run '^$' -bench 'Serve_ContextEveryday/sqlite' -benchtime 1x -timeout 30m
func BenchmarkServe_ContextEveryday(b *testing.B) {
	for _, backend := range serveBackends {
		for _, n := range []int{100, 10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/msgs=%d", backend.name, n), func(b *testing.B) {
				for b.Loop() {
					benchContextEveryday(b, backend.db(b), n)
				}
			})
		}
	}
}

func benchContextEveryday(b *testing.B, db string, n int) {
	url := MustServe(b, db).URL
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	turns := workload.Conversation(workload.ConversationSeed, n)
	mustPost(b, hc, url+"/v1/users/alice/threads", map[string]string{"id": "t"})
	for i := 0; i < n; i += 1000 {
		mustPost(b, hc, url+"/v1/users/alice/threads/t/messages", map[string]any{"messages": turns[i:min(i+1000, n)]})
	}
	waitIndexed(b, url)

	c := client.New(url, hc)
	var last *agentmem.Context
	overHTTP := func(req agentmem.ContextRequest) {
		var err error
		if last, err = c.BuildContext(context.Background(), "alice", "t", req); err != nil || len(last.Messages) == 0 {
			b.Fatalf("context: %v", err)
		}
	}
	// In process: serve's service over the same database, with a
	// context cache and tails of its own.
	cfg := defaults()
	cfg.DB = db
	acfg, err := cfg.app(os.Getenv, newLogger(io.Discard, "warn"))
	if err != nil {
		b.Fatal(err)
	}
	mem, err := app.New(context.Background(), acfg)
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	inProcess := func(req agentmem.ContextRequest) {
		c, err := mem.BuildContext(context.Background(), "alice", "t", req)
		if err != nil || c.Telemetry.CacheHit || len(c.Messages) == 0 {
			b.Fatalf("context in process: %v", err)
		}
	}

	stopProfile := func() {}
	defer func() { stopProfile() }()
	key := 1 // each build's own: the cache misses
	for k, budget := range contextBudgets {
		for range contextWarmup {
			overHTTP(contextRequest(budget, key))
			inProcess(contextRequest(budget, key))
			key++
		}
		if k == 0 {
			stopProfile = startProfile(b)
		}
		miss := timeCalls(contextCalls, func(int) { overHTTP(contextRequest(budget, key)); key++ })
		if last.Telemetry.CacheHit {
			b.Fatal("a request of its own was answered from the cache")
		}
		prefix := fmt.Sprintf("%dk-", budget/1000)
		b.ReportMetric(float64(last.Telemetry.IncludedMessages), prefix+"messages")
		b.ReportMetric(float64(last.Telemetry.UsedTokens), prefix+"tokens")
		overHTTP(contextRequest(budget, 0))
		hit := timeCalls(contextCalls, func(int) { overHTTP(contextRequest(budget, 0)) })
		if !last.Telemetry.CacheHit {
			b.Fatal("the same request again was not answered from the cache")
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		in := timeCalls(contextCalls, func(int) { inProcess(contextRequest(budget, key)); key++ })
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/contextCalls, prefix+"inproc-allocs/op")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/contextCalls, prefix+"inproc-B/op")
		for name, lat := range map[string][]time.Duration{"http": miss, "hit": hit, "inproc": in} {
			b.ReportMetric(quantileMS(lat, 0.5), prefix+name+"-p50-ms")
			b.ReportMetric(quantileMS(lat, 0.99), prefix+name+"-p99-ms")
		}
	}
}

// startProfile starts the CPU profile of -context-cpuprofile, if set,
// and returns what stops it (once; later calls do nothing).
func startProfile(b *testing.B) (stop func()) {
	if *contextProfile == "" {
		return func() {}
	}
	f, err := os.Create(*contextProfile)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return sync.OnceFunc(func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	})
}

// timeCalls calls call(0) … call(n-1) one after the other and returns
// their latencies.
func timeCalls(n int, call func(i int)) []time.Duration {
	lat := make([]time.Duration, n)
	for i := range lat {
		start := time.Now()
		call(i)
		lat[i] = time.Since(start)
	}
	return lat
}

// quantileMS returns the q quantile of lat in milliseconds: the sorted
// latencies' element at q·(n−1), as the peers' harness computes it.
func quantileMS(lat []time.Duration, q float64) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
}
