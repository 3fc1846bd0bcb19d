package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkServe_SearchFlood is issue 28's flood: 40 searches sent at
// once to a real serve (on the same machine, over 127.0.0.1) of a user
// with 100,000 short chat messages (100 threads of 1,000, indexed), five
// rounds, while another client appends one message at a time. Each
// backend runs serve four times on the same database, alternating
// "before" (--admit-search -1: no admission control, as before issue 28)
// and "after" (the defaults: one search per CPU at once, a second's wait),
// and reports per run the p50 and p99 of the searches answered 200, of
// all the answers (200 and 503) and of the appends meanwhile, and the
// searches refused (503). Bounded in time: 200 searches and their
// appends a run, each request within the client's 2 minutes.
//
//	go test -run '^$' -bench Serve_SearchFlood -benchtime 1x -timeout 30m ./cmd/agentmem
func BenchmarkServe_SearchFlood(b *testing.B) {
	for _, backend := range serveBackends {
		b.Run(backend.name, func(b *testing.B) {
			db := backend.db(b)
			seed := MustServe(b, db)
			loadChats(b, seed.URL, "flood", 100, 1000)
			waitIndexed(b, seed.URL)
			seed.Stop(b)
			for i, run := range []struct {
				name string
				args []string
			}{
				{"before", []string{"--admit-search", "-1"}}, {"after", nil},
				{"before", []string{"--admit-search", "-1"}}, {"after", nil},
			} {
				b.Run(fmt.Sprintf("%s-%d", run.name, i/2+1), func(b *testing.B) {
					for b.Loop() {
						srv := MustServe(b, db, run.args...)
						benchFlood(b, srv.URL, "flood")
						srv.Stop(b)
					}
				})
			}
		})
	}
}

// loadChats appends threads×turns short chat messages to user's
// threads f0, f1…, one batch a thread.
func loadChats(b *testing.B, url, user string, threads, turns int) {
	b.Helper()
	line := chatLines(1)
	for t := range threads {
		mustPost(b, http.DefaultClient, url+"/v1/users/"+user+"/threads", map[string]string{"id": fmt.Sprint("f", t)})
		var msgs []map[string]string
		for i := range turns {
			msgs = append(msgs, line(i))
		}
		mustPost(b, http.DefaultClient, fmt.Sprintf("%s/v1/users/%s/threads/f%d/messages", url, user, t), map[string]any{"messages": msgs})
	}
}

// benchFlood sends five rounds of 40 searches at once to the user's
// memory at url (after a few searches alone, which load the user's
// vectors as the first search after a start does), with one client
// appending meanwhile, and reports their latencies.
func benchFlood(b *testing.B, url, user string) {
	const rounds, clients = 5, 40
	queries := []string{"Lisbon", "sushi", "my sister is visiting", "the dog is sick", "I work as a teacher", "going to Paris next week", "peanuts", "Oslo"}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients + 1}}
	type answer struct {
		status int
		took   time.Duration
	}
	post := func(path string, body any) answer {
		buf, _ := json.Marshal(body)
		start := time.Now()
		resp, err := client.Post(url+path, "application/json", bytes.NewReader(buf))
		if err != nil {
			b.Error(err) // from the clients' goroutines: counted as failed
			return answer{0, time.Since(start)}
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return answer{resp.StatusCode, time.Since(start)}
	}
	search := func(i int) answer {
		return post("/v1/users/"+user+"/search", map[string]any{"query": queries[i%len(queries)]})
	}
	var alone []time.Duration
	for i := range 2 * len(queries) {
		a := search(i)
		if a.status != http.StatusOK {
			b.Fatalf("search alone: %d", a.status)
		}
		if i >= len(queries) { // the first round warms the cache
			alone = append(alone, a.took)
		}
	}

	thread := fmt.Sprint("appends", time.Now().UnixNano()) // a thread of the run's own
	mustPost(b, http.DefaultClient, url+"/v1/users/"+user+"/threads", map[string]string{"id": thread})
	var (
		mu               sync.Mutex
		ok, all, appends []time.Duration
		refused, failed  int
	)
	for r := range rounds {
		stop := make(chan struct{})
		appended := make(chan struct{})
		go func() { // one client appends while the round runs
			defer close(appended)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a := post("/v1/users/"+user+"/threads/"+thread+"/messages",
					map[string]any{"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("Round %d, note %d.", r, i)}}})
				mu.Lock()
				if a.status != http.StatusCreated {
					failed++
				}
				appends = append(appends, a.took)
				mu.Unlock()
			}
		}()
		var wg sync.WaitGroup
		start := make(chan struct{})
		for c := range clients {
			wg.Go(func() {
				<-start
				a := search(r*clients + c)
				mu.Lock()
				defer mu.Unlock()
				all = append(all, a.took)
				switch a.status {
				case http.StatusOK:
					ok = append(ok, a.took)
				case http.StatusServiceUnavailable:
					refused++
				default:
					failed++
				}
			})
		}
		close(start)
		wg.Wait()
		close(stop)
		<-appended
	}
	if failed > 0 {
		b.Fatalf("%d requests failed otherwise than 503", failed)
	}
	ms := func(d []time.Duration, q float64) float64 {
		if len(d) == 0 {
			return 0
		}
		s := slices.Sorted(slices.Values(d))
		return float64(s[min(int(q*float64(len(s))), len(s)-1)].Microseconds()) / 1000
	}
	b.ReportMetric(ms(alone, 0.5), "alone-p50-ms")
	b.ReportMetric(ms(ok, 0.5), "ok-p50-ms")
	b.ReportMetric(ms(ok, 0.99), "ok-p99-ms")
	b.ReportMetric(ms(all, 0.5), "all-p50-ms")
	b.ReportMetric(ms(all, 0.99), "all-p99-ms")
	b.ReportMetric(float64(refused), "refused")
	b.ReportMetric(ms(appends, 0.5), "append-p50-ms")
	b.ReportMetric(ms(appends, 0.99), "append-p99-ms")
	b.Logf("flood: searches=%d ok=%d refused=%d alone_p50=%.1fms ok_p50=%.0fms ok_p99=%.0fms ok_max=%.0fms all_p50=%.0fms all_p99=%.0fms appends=%d append_p50=%.1fms append_p99=%.1fms",
		len(all), len(ok), refused, ms(alone, 0.5), ms(ok, 0.5), ms(ok, 0.99), ms(ok, 1), ms(all, 0.5), ms(all, 0.99), len(appends), ms(appends, 0.5), ms(appends, 0.99))
}
