package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/internal/workload"
	"github.com/agentmem/agentmem/metrics"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql
	"github.com/prometheus/client_golang/prometheus"
)

// serveBackends are the databases the serve benchmarks run on: a new
// SQLite file, and a new PostgreSQL schema (where AGENTMEM_TEST_POSTGRES
// is set).
var serveBackends = []struct {
	name string
	db   func(b *testing.B) string
}{
	{"sqlite", func(b *testing.B) string { return filepath.Join(b.TempDir(), "bench.db") }},
	{"postgres", func(b *testing.B) string { return testutil.MustCreateSchema(b) }},
}

// BenchmarkServe_Append measures appends of one message through the HTTP
// API from 16 concurrent keep-alive clients on the same machine, each on
// a thread of its own, on SQLite (synchronous=FULL) and, when
// AGENTMEM_TEST_POSTGRES is set, PostgreSQL. Each backend runs four
// servers, so that every figure has its baseline in the same run:
//
//   - noindex: the baseline, the API as it was before search: the
//     handler of serve without an indexer, on a database whose messages
//     are not indexed for full-text search (SQLite: the trigger that
//     queues them dropped; PostgreSQL: the tsvector column and its index
//     dropped);
//   - fulltext: the same handler on a database that indexes messages for
//     full-text search as they are committed, still without index jobs;
//   - jobs: fulltext plus the index job of each batch, as serve enqueues
//     it, but no workers to run the jobs: the cost of enqueueing alone;
//   - serve: a real `agentmem serve`: full-text indexing, index jobs and
//     the workers that run them (embedding, windows, chunks, memories),
//     in the same process and on the same database.
func BenchmarkServe_Append(b *testing.B) {
	for _, backend := range serveBackends {
		b.Run(backend.name+"/noindex", func(b *testing.B) {
			db := backend.db(b)
			dropFullText(b, db)
			benchmarkAppends(b, mustServeAPI(b, db, false))
		})
		b.Run(backend.name+"/fulltext", func(b *testing.B) {
			benchmarkAppends(b, mustServeAPI(b, backend.db(b), false))
		})
		b.Run(backend.name+"/jobs", func(b *testing.B) {
			benchmarkAppends(b, mustServeAPI(b, backend.db(b), true))
		})
		b.Run(backend.name+"/serve", func(b *testing.B) {
			benchmarkAppends(b, MustServe(b, backend.db(b)).URL)
		})
	}
}

// benchmarkAppends appends one message per request from 16 clients, each
// on a thread of its own, and reports messages/s, and the CPU time that
// the process (server, workers and clients; not PostgreSQL) spent per
// message, which another process's load on the machine disturbs less
// than the throughput.
func benchmarkAppends(b *testing.B, url string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	cpu := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		thread := fmt.Sprintf("%s/v1/users/u%d/threads", url, n.Add(1))
		resp, err := client.Post(thread, "application/json", strings.NewReader(`{"id":"t"}`))
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Errorf("create thread: %v %v", err, resp)
			return
		}
		resp.Body.Close()
		body := []byte(`{"messages":[{"role":"user","content":"The quick brown fox jumps over the lazy dog, and then asks what to cook for dinner tonight."}]}`)
		for pb.Next() {
			resp, err := client.Post(thread+"/t/messages", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("append: status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if cpu := processCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/msg")
	}
	// The rate with indexing keeping up: until the index jobs of all the
	// appends are done (the same as msgs/s where nothing indexes).
	b.StopTimer()
	appended := b.Elapsed()
	start := time.Now()
	waitIndexed(b, url)
	b.ReportMetric(float64(b.N)/(appended+time.Since(start)).Seconds(), "indexed-msgs/s")
}

// mustServeAPI serves the handler of serve over the store of db, as serve
// wires it (the store timed into the metrics registry, logs at warn) but
// without workers, and returns its URL. With jobs, an indexer enqueues
// the index jobs of appends, which nothing runs.
func mustServeAPI(b *testing.B, db string, jobs bool) string {
	b.Helper()
	cfg := defaults()
	cfg.DB = db
	store, err := openStore(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	measured := metrics.Store(store, reg, nil)
	var ix *index.Indexer
	if jobs {
		ix = &index.Indexer{Store: measured, Jobs: measured}
	}
	svc := core.New(measured, core.Options{Indexer: ix, MaxBatchMessages: cfg.MaxBatchMessages})
	metrics.RegisterStats(reg, svc, nil)
	handler := httpapi.NewHandler(newLogger(io.Discard, "warn"), svc, httpapi.Options{
		MaxBodyBytes:  cfg.MaxBodyBytes,
		Middleware:    metrics.HTTP(reg, httpapi.Served),
		Metrics:       metrics.Handler(reg),
		MaxQueryBytes: cfg.MaxQueryBytes,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := errors.Join(srv.Shutdown(ctx), store.Close()); err != nil {
			b.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// dropFullText migrates db, then removes what indexes its messages for
// full-text search, so that appends cost what they did before search.
func dropFullText(b *testing.B, db string) {
	b.Helper()
	cfg := defaults()
	cfg.DB = db
	store, err := openStore(context.Background(), cfg) // migrates
	if err != nil {
		b.Fatal(err)
	}
	store.Close()
	if strings.HasPrefix(db, "postgres") {
		testutil.MustExec(b, db, `ALTER TABLE messages DROP COLUMN tsv`) // its index goes with it
		return
	}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(`DROP TRIGGER messages_fts_insert`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkServe_Storage loads 20,000 short chat messages (200 threads of
// 100, half of them the user's: "I live in Oslo now.", "ok thanks!",
// "Got it!"…) into a real serve through the API, in one batch per thread,
// waits until its workers have indexed them (windows, vectors, chunks,
// memories, entities), and reports the bytes the store takes per message
// (/v1/stats: every table with its indexes), the load's rate and the
// seconds from the first append until indexing was done.
func BenchmarkServe_Storage(b *testing.B) {
	for _, backend := range serveBackends {
		b.Run(backend.name, func(b *testing.B) {
			for b.Loop() {
				benchStorage(b, MustServe(b, backend.db(b)).URL)
			}
		})
	}
}

// chatLines returns a generator of short chat turns: the user's ("I live
// in Oslo now.", "ok thanks!"…) at even i, the assistant's at odd.
func chatLines(seed uint64) func(i int) map[string]string {
	rng := rand.New(rand.NewPCG(seed, 1))
	pick := func(s string) string { f := strings.Fields(s); return f[rng.IntN(len(f))] }
	userLines := []string{"I live in %s now.", "ok thanks!", "I work as a %s.", "see you tomorrow", "my sister %s is visiting", "sounds good",
		"I love %s.", "what time is it in %s?", "I'm going to %s next week.", "lol yes", "my dog %s is sick", "I can't eat %s."}
	botLines := []string{"Got it!", "Sure, happy to help.", "That sounds lovely.", "Noted.", "How was it?", "Good luck!"}
	words := "Lisbon Porto Berlin Paris Madrid Rome Oslo Vienna nurse teacher pilot chef Ana Mia Tom Leo sushi pasta peanuts curry"
	return func(i int) map[string]string {
		if i%2 == 1 {
			return map[string]string{"role": "assistant", "content": botLines[rng.IntN(len(botLines))]}
		}
		line := userLines[rng.IntN(len(userLines))]
		if strings.Contains(line, "%s") {
			line = fmt.Sprintf(line, pick(words))
		}
		return map[string]string{"role": "user", "content": line}
	}
}

// mustPost posts body as JSON to url and fails unless it is 200 or 201.
func mustPost(b *testing.B, client *http.Client, url string, body any) {
	b.Helper()
	buf, _ := json.Marshal(body)
	resp, err := client.Post(url, "application/json", bytes.NewReader(buf))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: status %d", url, resp.StatusCode)
	}
}

// indexing reports whether serve at url has index jobs waiting.
func indexing(b *testing.B, url string) bool {
	b.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return strings.Contains(string(m), `agentmem_jobs_backlog{kind="index"}`)
}

// waitIndexed waits until serve at url has no index job waiting.
func waitIndexed(b *testing.B, url string) {
	b.Helper()
	for deadline := time.Now().Add(20 * time.Minute); indexing(b, url); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("not indexed after 20 minutes")
		}
	}
}

// stageSeconds returns the time serve's index jobs spent in each stage
// (agentmem_index_stage_seconds_total of /metrics), by stage.
func stageSeconds(b *testing.B, url string) map[string]float64 {
	b.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(text)) {
		rest, ok := strings.CutPrefix(line, `agentmem_index_stage_seconds_total{stage="`)
		if !ok {
			continue
		}
		stage, value, _ := strings.Cut(rest, `"} `)
		var sec float64
		if _, err := fmt.Sscan(value, &sec); err != nil {
			b.Fatalf("metrics: %q: %v", line, err)
		}
		out[stage] = sec
	}
	if len(out) == 0 {
		b.Fatal("metrics: no agentmem_index_stage_seconds_total")
	}
	return out
}

// storeBytes returns the bytes of serve's store (GET /v1/stats), which
// must hold messages messages.
func storeBytes(b *testing.B, url string, messages int64) float64 {
	b.Helper()
	resp, err := http.Get(url + "/v1/stats")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Messages   int64 `json:"messages"`
		StoreBytes int64 `json:"store_bytes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Messages != messages {
		b.Fatalf("stats: %+v, %v; want %d messages", st, err, messages)
	}
	return float64(st.StoreBytes)
}

func benchStorage(b *testing.B, url string) {
	const threads, turns = 200, 100
	line := chatLines(1)
	start := time.Now()
	for t := range threads {
		mustPost(b, http.DefaultClient, url+"/v1/users/alice/threads", map[string]string{"id": fmt.Sprint("t", t)})
		var msgs []map[string]string
		for i := range turns {
			msgs = append(msgs, line(i))
		}
		mustPost(b, http.DefaultClient, fmt.Sprintf("%s/v1/users/alice/threads/t%d/messages", url, t), map[string]any{"messages": msgs})
	}
	loaded := time.Since(start)
	waitIndexed(b, url)
	indexed := time.Since(start)
	b.ReportMetric(storeBytes(b, url, threads*turns)/threads/turns, "bytes/msg")
	b.ReportMetric(threads*turns/loaded.Seconds(), "load-msgs/s")
	b.ReportMetric(indexed.Seconds(), "indexed-s")
}

// BenchmarkServe_Load is the load of one thread of 100,000
// messages through the API, in batches of 1,000, into a real serve: the
// load's rate, the seconds until its workers have indexed it all, and
// single appends of another user (a thread of their own) while the
// backlog is indexed against the same appends once it is: p50 and p99 of
// 200 each.
func BenchmarkServe_Load(b *testing.B) {
	for _, backend := range serveBackends {
		b.Run(backend.name, func(b *testing.B) {
			for b.Loop() {
				benchLoad(b, MustServe(b, backend.db(b)).URL)
			}
		})
	}
}

func benchLoad(b *testing.B, url string) {
	const batches, batch = 100, 1000
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	line := chatLines(2)
	mustPost(b, client, url+"/v1/users/alice/threads", map[string]string{"id": "big"})
	mustPost(b, client, url+"/v1/users/bob/threads", map[string]string{"id": "live"})
	start := time.Now()
	for k := range batches {
		msgs := make([]map[string]string, batch)
		for i := range msgs {
			msgs[i] = line(k*batch + i)
		}
		mustPost(b, client, url+"/v1/users/alice/threads/big/messages", map[string]any{"messages": msgs})
	}
	loaded := time.Since(start)
	appends := func() (p50, p99 float64) {
		p50, p99, _ = appendLatencies(b, client, url+"/v1/users/bob/threads/live/messages", 200, func() map[string]string { return line(0) })
		return p50, p99
	}
	busy50, busy99 := appends()
	if !indexing(b, url) {
		b.Log("indexing was done before the appends ended: their figures are an idle server's")
	}
	waitIndexed(b, url)
	indexed := time.Since(start)
	idle50, idle99 := appends()
	b.ReportMetric(batches*batch/loaded.Seconds(), "load-msgs/s")
	b.ReportMetric(indexed.Seconds(), "indexed-s")
	b.ReportMetric(busy50, "indexing-p50-ms")
	b.ReportMetric(busy99, "indexing-p99-ms")
	b.ReportMetric(idle50, "idle-p50-ms")
	b.ReportMetric(idle99, "idle-p99-ms")
}

// appendLatencies appends n single messages (msg's) to a thread (its
// messages URL), one after the other, and returns the p50, p99 and
// maximum of their latencies in milliseconds.
func appendLatencies(b *testing.B, client *http.Client, messagesURL string, n int, msg func() map[string]string) (p50, p99, most float64) {
	b.Helper()
	lat := make([]time.Duration, n)
	for i := range lat {
		t := time.Now()
		mustPost(b, client, messagesURL, map[string]any{"messages": []map[string]string{msg()}})
		lat[i] = time.Since(t)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), ms(lat[len(lat)-1])
}

// BenchmarkServe_AppendEveryday: the appends while indexing runs,
// on the everyday workload. One user's 20,000 everyday messages (as in
// BenchmarkServe_IndexEveryday) are loaded into a real serve; while its
// workers index them, another user appends single everyday messages to a
// thread of their own, one after the other (500); then the same once
// indexing is done (200): p50, p99 and the maximum of each, over HTTP.
func BenchmarkServe_AppendEveryday(b *testing.B) {
	for _, backend := range serveBackends {
		b.Run(backend.name, func(b *testing.B) {
			for b.Loop() {
				var extra []string
				if sync := os.Getenv("AGENTMEM_BENCH_SYNC"); sync != "" && backend.name == "sqlite" {
					extra = []string{"--sqlite-synchronous", sync}
				}
				url := MustServe(b, backend.db(b), extra...).URL
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
				defer client.CloseIdleConnections()
				rng := rand.New(rand.NewPCG(5, 6))
				msg := func(role string) map[string]string {
					return map[string]string{"role": role, "content": workload.Message(rng)}
				}
				mustPost(b, client, url+"/v1/users/bob/threads", map[string]string{"id": "live"})
				for t := range 20 {
					id := fmt.Sprint("t", t)
					mustPost(b, client, url+"/v1/users/alice/threads", map[string]string{"id": id})
					msgs := make([]map[string]string, 1000)
					for i := range msgs {
						msgs[i] = msg([]string{"user", "assistant"}[i%2])
					}
					mustPost(b, client, url+"/v1/users/alice/threads/"+id+"/messages", map[string]any{"messages": msgs})
				}
				live := url + "/v1/users/bob/threads/live/messages"
				user := func() map[string]string { return msg("user") }
				busy50, busy99, busyMax := appendLatencies(b, client, live, 500, user)
				if !indexing(b, url) {
					b.Log("indexing was done before the appends ended: their figures are an idle server's")
				}
				waitIndexed(b, url)
				idle50, idle99, idleMax := appendLatencies(b, client, live, 200, user)
				b.ReportMetric(busy50, "indexing-p50-ms")
				b.ReportMetric(busy99, "indexing-p99-ms")
				b.ReportMetric(busyMax, "indexing-max-ms")
				b.ReportMetric(idle50, "idle-p50-ms")
				b.ReportMetric(idle99, "idle-p99-ms")
				b.ReportMetric(idleMax, "idle-max-ms")
			}
		})
	}
}

// BenchmarkServe_IndexEveryday loads one user's 20,000 and 100,000
// messages of the everyday workload (package workload: 30-word turns of a
// 250-word vocabulary, user and assistant in turn) into a real serve with
// its defaults, threads of 1,000 in batches of 1,000, and reports the
// load's rate and the indexing's (messages over the time from the first
// append to the end of indexing; the workers index while the load runs),
// how long indexing ran on after the load, the bytes of the store a
// message takes, and each stage's time a message. With -cpuprofile, the
// profile is the server's too (it runs in process).
func BenchmarkServe_IndexEveryday(b *testing.B) {
	for _, backend := range serveBackends {
		for _, threads := range []int{20, 100} {
			b.Run(fmt.Sprintf("%s/msgs=%d", backend.name, threads*1000), func(b *testing.B) {
				for b.Loop() {
					db := backend.db(b)
					benchIndexEveryday(b, MustServe(b, db).URL, threads)
					if os.Getenv("AGENTMEM_BENCH_BYTES") != "" {
						logStoreBytes(b, db, float64(threads*1000))
					}
				}
			})
		}
	}
}

// logStoreBytes logs the bytes a message of each table and index of the
// store db (a SQLite file or a PostgreSQL DSN) holding n messages:
// SQLite's dbstat, PostgreSQL's relation sizes (a table's TOAST apart).
func logStoreBytes(b *testing.B, db string, n float64) {
	b.Helper()
	query, driver, dsn := `SELECT name, sum(pgsize) FROM dbstat GROUP BY name
		UNION ALL SELECT '(free pages)', f.freelist_count * p.page_size FROM pragma_freelist_count f, pragma_page_size p ORDER BY 2 DESC`, "sqlite", db
	if strings.HasPrefix(db, "postgres") {
		query, driver = `SELECT c.relname || CASE c.relkind WHEN 'i' THEN ' (index)' ELSE '' END, pg_relation_size(c.oid) FROM pg_class c
				WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'i')
			UNION ALL SELECT c.relname || ' (TOAST)', pg_total_relation_size(c.reltoastrelid) FROM pg_class c
				WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.reltoastrelid <> 0
			ORDER BY 2 DESC`, "pgx"
	}
	type sized struct {
		name  string
		bytes float64
	}
	var sizes []sized
	conn, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(query)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s sized
		if err := rows.Scan(&s.name, &s.bytes); err != nil {
			b.Fatal(err)
		}
		sizes = append(sizes, s)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	var total float64
	var lines []string
	for _, s := range sizes {
		if s.bytes > 0 {
			total += s.bytes
			lines = append(lines, fmt.Sprintf("%-40s %7.1f B/msg", s.name, s.bytes/n))
		}
	}
	// On stderr: the testing package cuts a benchmark's log to its first
	// lines.
	fmt.Fprintf(os.Stderr, "%s: store bytes a message by table and index (%.1f in all):\n%s\n", b.Name(), total/n, strings.Join(lines, "\n"))
}

// benchIndexEveryday is BenchmarkServe_IndexEveryday's load of threads
// threads of 1,000 everyday turns into the serve at url.
func benchIndexEveryday(b *testing.B, url string, threads int) {
	const turns = 1000
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Now()
	for t := range threads {
		id := fmt.Sprint("t", t)
		mustPost(b, http.DefaultClient, url+"/v1/users/alice/threads", map[string]string{"id": id})
		msgs := make([]map[string]string, turns)
		for i := range msgs {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			msgs[i] = map[string]string{"role": role, "content": workload.Message(rng)}
		}
		mustPost(b, http.DefaultClient, url+"/v1/users/alice/threads/"+id+"/messages", map[string]any{"messages": msgs})
	}
	loaded := time.Now()
	waitIndexed(b, url)
	n := float64(threads * turns)
	b.ReportMetric(n/loaded.Sub(start).Seconds(), "load-msgs/s")
	b.ReportMetric(n/time.Since(start).Seconds(), "indexed-msgs/s")
	b.ReportMetric(time.Since(loaded).Seconds(), "lag-after-load-s")
	b.ReportMetric(storeBytes(b, url, int64(n))/n, "bytes/msg")
	for stage, sec := range stageSeconds(b, url) {
		b.ReportMetric(sec*1e6/n, stage+"-µs/msg")
	}
}
