package faults_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/plot"
	"github.com/agentmem/agentmem/llm/llmtest"
)

// soakOps are the soak's operations and their shares of the requests
// (in tenths of a percent): turns appended, contexts built, searches,
// turns through the OpenAI-compatible proxy, threads ended (which queues
// their summary and reflection) and profiles synthesised again.
var soakOps = []struct {
	name  string
	share int
}{
	{"append", 400}, {"context", 200}, {"search", 150}, {"proxy", 150}, {"end", 50}, {"reflect", 50},
}

// soakSample is what the server looked like at one moment of the soak.
type soakSample struct {
	at                    time.Duration // since the start
	heap, rss             float64       // bytes in use on the heap; resident
	goroutines, openFiles float64
	storeBytes, messages  float64
}

// soakLatency is one request's time.
type soakLatency struct {
	op string
	at time.Duration // when it was sent, since the start
	d  time.Duration
}

// TestSoak runs a mixed workload at a fixed rate (20 requests a second:
// appends, contexts, searches, turns through the proxy in front of the
// fake model, thread ends and profile syntheses over 8 users) for
// AGENTMEM_SOAK (default 30s; the figures of docs/reliability.md are of
// 10m), on each backend. Every request must succeed; the server must keep
// up with the rate; and what it holds must stay flat: goroutines and open
// files, heap in use, and database bytes per message, compared between
// the second quarter of the run and the last. It samples /metrics and
// /v1/stats every 1/40 of the run and prints the latency (p50/p99 per
// operation) and the samples; with AGENTMEM_SOAK_PLOTS=DIR it draws them
// as PNG charts there (docs/soak-*.png).
func TestSoak(t *testing.T) {
	Long(t)
	duration := 30 * time.Second
	if v := os.Getenv("AGENTMEM_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("AGENTMEM_SOAK=%q: %v", v, err)
		}
		duration = d
	}
	fake := llmtest.NewServer(t)
	Backends(t, func(t *testing.T, b Backend) {
		srv := StartServe(t, b.DB, "--proxy-upstream", fake.BaseURL())
		ctx, cancel := context.WithTimeout(context.Background(), duration+2*time.Minute)
		defer cancel()
		c := NewClient(srv.URL)
		const users, rate = 8, 20
		for u := range users {
			if status, body, err := c.Retrying(ctx, http.MethodPost, fmt.Sprintf("/v1/users/s%d/threads", u), map[string]any{"id": "t0", "title": "soak"}, nil); err != nil || status != http.StatusCreated {
				t.Fatalf("create thread: %d %s %v", status, body, err)
			}
			// A memory from the start, so that every profile synthesis
			// has something to build on (a user with none is 404).
			if status, body, err := c.Retrying(ctx, http.MethodPost, fmt.Sprintf("/v1/users/s%d/memories", u), map[string]any{"text": "User lives in Porto."}, nil); err != nil || status != http.StatusCreated {
				t.Fatalf("create memory: %d %s %v", status, body, err)
			}
		}

		var (
			mu        sync.Mutex
			latencies []soakLatency
			samples   []soakSample
			failures  []string
			late      atomic.Int64
			notFound  atomic.Int64
			sent      atomic.Int64
			threadOf  = make([]atomic.Int64, users) // the current thread of each user: t0, t1…
		)
		fail := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			if len(failures) < 20 {
				failures = append(failures, fmt.Sprintf(format, args...))
			}
		}
		start := time.Now()
		do := func(op string, u int, i int64) {
			user := fmt.Sprintf("s%d", u)
			thread := fmt.Sprintf("t%d", threadOf[u].Load())
			var method, path string
			var body any
			var headers []string
			want := http.StatusOK
			switch op {
			case "append":
				method, path, want = http.MethodPost, "/v1/users/"+user+"/threads/"+thread+"/messages", http.StatusCreated
				body = map[string]any{"messages": []map[string]string{
					{"role": "user", "content": fmt.Sprintf("Turn %d: I went %s today and it was %s.", i, pick(i, "hiking", "to the market", "swimming", "to a concert"), pick(i/4, "lovely", "tiring", "fun"))},
					{"role": "assistant", "content": fmt.Sprintf("Noted, turn %d.", i)},
				}}
			case "context":
				method, path = http.MethodPost, "/v1/users/"+user+"/threads/"+thread+"/context"
				body = map[string]any{"query": "what did I do today?"}
			case "search":
				method, path = http.MethodPost, "/v1/users/"+user+"/search"
				body = map[string]any{"query": pick(i, "hiking", "market", "concert", "swimming"), "scopes": []string{"memories", "messages"}}
			case "proxy":
				method, path = http.MethodPost, "/openai/v1/chat/completions"
				body = map[string]any{"model": "gpt-4o-mini", "messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("What should I do after turn %d?", i)}}}
				headers = []string{"X-Agentmem-User", user, "X-Agentmem-Thread", thread}
			case "end":
				method, path = http.MethodPost, "/v1/users/"+user+"/threads/"+thread+"/end"
				// The next turns go to a new thread, as a new session's.
				defer func() {
					n := threadOf[u].Add(1)
					c.Do(ctx, http.MethodPost, "/v1/users/"+user+"/threads", map[string]any{"id": fmt.Sprintf("t%d", n)}, nil)
				}()
			case "reflect":
				method, path = http.MethodPost, "/v1/users/"+user+"/profile/refresh"
			}
			begin := time.Now()
			status, b, err := c.Do(ctx, method, path, body, nil, headers...)
			d := time.Since(begin)
			switch {
			case err != nil:
				fail("%s %s: %v", op, path, err)
			case status == http.StatusNotFound && op != "append" && op != "reflect":
				// a thread just ended and replaced: its successor may not
				// exist yet (counted, and bounded below)
				notFound.Add(1)
			case status/100 != 2:
				fail("%s %s: %d %s", op, path, status, b)
			case status != want && op == "append":
				fail("%s %s: %d, want %d", op, path, status, want)
			}
			mu.Lock()
			latencies = append(latencies, soakLatency{op, begin.Sub(start), d})
			mu.Unlock()
		}
		sample := func() {
			s := soakSample{at: time.Since(start)}
			m, err := scrape(ctx, c)
			if err != nil {
				fail("metrics: %v", err)
				return
			}
			s.heap, s.rss, s.goroutines, s.openFiles = m["go_memstats_heap_inuse_bytes"], m["process_resident_memory_bytes"], m["go_goroutines"], m["process_open_fds"]
			var st struct {
				Messages   float64 `json:"messages"`
				StoreBytes float64 `json:"store_bytes"`
			}
			if status, b, err := c.Do(ctx, http.MethodGet, "/v1/stats", nil, &st); err != nil || status != http.StatusOK {
				fail("stats: %d %s %v", status, b, err)
				return
			}
			s.storeBytes, s.messages = st.StoreBytes, st.Messages
			mu.Lock()
			samples = append(samples, s)
			mu.Unlock()
		}

		// The requests, at a fixed rate (each at its moment, whatever the
		// ones before it take: an open loop), by 16 workers; one whose
		// moment comes while every worker is busy is late.
		work := make(chan func(), 16)
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for f := range work {
					f()
				}
			}()
		}
		var choices []string
		for _, op := range soakOps {
			for range op.share / 10 {
				choices = append(choices, op.name)
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		tick := time.NewTicker(time.Second / rate)
		every := max(duration/40, time.Second)
		nextSample := time.Duration(0)
		for now := range tick.C {
			at := now.Sub(start)
			if at >= duration {
				break
			}
			if at >= nextSample {
				nextSample += every
				go sample()
			}
			op, u, i := choices[rng.IntN(len(choices))], rng.IntN(users), sent.Add(1)
			select {
			case work <- func() { do(op, u, i) }:
			default:
				late.Add(1)
			}
		}
		tick.Stop()
		close(work)
		wg.Wait()
		sample()

		// The figures.
		mu.Lock()
		defer mu.Unlock()
		for _, f := range failures {
			t.Error(f)
		}
		if n := notFound.Load(); n*50 > sent.Load() {
			t.Errorf("%d of %d requests found no thread", n, sent.Load())
		}
		if l := late.Load(); l*100 > sent.Load() {
			t.Errorf("%d of %d requests found every worker busy: the server did not keep up with %d a second", l, sent.Load(), rate)
		}
		slices.SortFunc(samples, func(a, b soakSample) int { return int(a.at - b.at) })
		if len(samples) < 8 {
			t.Fatalf("only %d samples", len(samples))
		}
		q2, last := samples[len(samples)/4:len(samples)/2], samples[len(samples)*3/4:]
		early, late4 := samples[len(samples)/4], samples[len(samples)-1]
		maxOf := func(ss []soakSample, f func(soakSample) float64) float64 {
			m := 0.0
			for _, s := range ss {
				m = max(m, f(s))
			}
			return m
		}
		medianOf := func(ss []soakSample, f func(soakSample) float64) float64 {
			v := make([]float64, len(ss))
			for i, s := range ss {
				v[i] = f(s)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		gor := func(s soakSample) float64 { return s.goroutines }
		fds := func(s soakSample) float64 { return s.openFiles }
		heap := func(s soakSample) float64 { return s.heap }
		perMsg := func(s soakSample) float64 { return s.storeBytes / max(s.messages, 1) }
		// Medians: a leak raises them all, where a moment's pile-up of
		// requests on a loaded machine raises one sample (123 against 38,
		// and 31 at the end, on a CI run that shared the machine).
		if g, base := medianOf(last, gor), medianOf(q2, gor); g > base+25 {
			t.Errorf("goroutines grew: median %v in the last quarter, %v in the second", g, base)
		}
		if f, base := maxOf(last, fds), maxOf(q2, fds); f > base+25 {
			t.Errorf("open files grew: %v in the last quarter, %v in the second", f, base)
		}
		if h, base := medianOf(last, heap), medianOf(q2, heap); h > 1.5*base+16<<20 {
			t.Errorf("heap in use grew: median %.1f MiB in the last quarter, %.1f MiB in the second", h/(1<<20), base/(1<<20))
		}
		if p, base := perMsg(late4), perMsg(early); p > 1.3*base {
			t.Errorf("database bytes per message grew: %.0f at the end, %.0f a quarter in", p, base)
		}

		ops := map[string][]time.Duration{}
		for _, l := range latencies {
			ops[l.op] = append(ops[l.op], l.d)
		}
		var line strings.Builder
		fmt.Fprintf(&line, "faults: soak %s: duration=%s rate=%d/s requests=%d late=%d not_found=%d", b.Name, duration, rate, len(latencies), late.Load(), notFound.Load())
		for _, op := range soakOps {
			p50, p99 := percentiles(ops[op.name])
			fmt.Fprintf(&line, " %s_p50/p99_ms=%.1f/%.1f", op.name, ms(p50), ms(p99))
		}
		fmt.Fprintf(&line, " heap_mib=%.1f→%.1f heap_per_message_kib=%.1f→%.1f goroutines=%v→%v open_files=%v→%v bytes_per_message=%.0f→%.0f messages=%.0f→%.0f",
			early.heap/(1<<20), late4.heap/(1<<20), early.heap/1024/max(early.messages, 1), late4.heap/1024/max(late4.messages, 1),
			early.goroutines, late4.goroutines, early.openFiles, late4.openFiles, perMsg(early), perMsg(late4), early.messages, late4.messages)
		t.Log(line.String())
		if dir := os.Getenv("AGENTMEM_SOAK_PLOTS"); dir != "" {
			if err := soakPlots(dir, b.Name, duration, latencies, samples); err != nil {
				t.Error(err)
			}
		}
	})
}

// pick is one of the choices, by i.
func pick(i int64, choices ...string) string { return choices[int(i)%len(choices)] }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentiles returns the median and the 99th percentile of ds.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// scrape reads the gauges of the server's /metrics (the Go and process
// collectors'), by name, without labels.
func scrape(ctx context.Context, c *Client) (map[string]float64, error) {
	status, b, err := c.Do(ctx, http.MethodGet, "/metrics", nil, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d", status)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			m[name] = v
		}
	}
	return m, sc.Err()
}

// soakPlots draws the soak's latency (p50 and p99 per operation, per
// twentieth of the run), memory, goroutines and open files, and bytes per
// message (database and heap) over time, as DIR/soak-BACKEND-*.png.
func soakPlots(dir, backend string, duration time.Duration, latencies []soakLatency, samples []soakSample) error {
	minutes := func(d time.Duration) float64 { return d.Minutes() }
	window := duration / 20
	var p50s, p99s []plot.Series
	for _, op := range soakOps {
		buckets := map[int][]time.Duration{}
		for _, l := range latencies {
			if l.op == op.name {
				buckets[int(l.at/window)] = append(buckets[int(l.at/window)], l.d)
			}
		}
		s50, s99 := plot.Series{Name: op.name}, plot.Series{Name: op.name}
		for w := range 20 {
			if len(buckets[w]) == 0 {
				continue
			}
			p50, p99 := percentiles(buckets[w])
			x := minutes(time.Duration(w)*window + window/2)
			s50.Points = append(s50.Points, plot.Point{X: x, Y: ms(p50)})
			s99.Points = append(s99.Points, plot.Point{X: x, Y: ms(p99)})
		}
		p50s, p99s = append(p50s, s50), append(p99s, s99)
	}
	heap, rss := plot.Series{Name: "heap in use (MiB)"}, plot.Series{Name: "resident (MiB)"}
	gor, fds := plot.Series{Name: "goroutines"}, plot.Series{Name: "open files"}
	perMsg, heapPerMsg := plot.Series{Name: "database bytes per message"}, plot.Series{Name: "heap bytes per message"}
	for _, s := range samples {
		x := minutes(s.at)
		heap.Points = append(heap.Points, plot.Point{X: x, Y: s.heap / (1 << 20)})
		rss.Points = append(rss.Points, plot.Point{X: x, Y: s.rss / (1 << 20)})
		gor.Points = append(gor.Points, plot.Point{X: x, Y: s.goroutines})
		fds.Points = append(fds.Points, plot.Point{X: x, Y: s.openFiles})
		if s.messages >= 500 { // before, the empty database's own bytes dominate
			perMsg.Points = append(perMsg.Points, plot.Point{X: x, Y: s.storeBytes / s.messages})
			heapPerMsg.Points = append(heapPerMsg.Points, plot.Point{X: x, Y: s.heap / s.messages})
		}
	}
	charts := map[string]plot.Chart{
		"p50":       {Title: "Soak on " + backend + ": median latency per operation", XLabel: "minutes", YLabel: "ms", Series: p50s},
		"p99":       {Title: "Soak on " + backend + ": p99 latency per operation", XLabel: "minutes", YLabel: "ms", Series: p99s},
		"memory":    {Title: "Soak on " + backend + ": server memory", XLabel: "minutes", YLabel: "MiB", Series: []plot.Series{heap, rss}},
		"resources": {Title: "Soak on " + backend + ": goroutines and open files", XLabel: "minutes", YLabel: "count", Series: []plot.Series{gor, fds}},
		"storage":   {Title: "Soak on " + backend + ": bytes per message stored", XLabel: "minutes", YLabel: "bytes", Series: []plot.Series{perMsg, heapPerMsg}},
	}
	for name, c := range charts {
		f, err := os.Create(filepath.Join(dir, "soak-"+backend+"-"+name+".png"))
		if err != nil {
			return err
		}
		err = c.WritePNG(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
