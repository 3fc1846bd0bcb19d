package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server is agentmem serve running in-process, as a user would start it.
type server struct {
	URL    string
	cancel context.CancelFunc
	done   chan error
}

// MustServe runs `agentmem serve --addr 127.0.0.1:0 --db DB` in a
// goroutine, reads the address it prints, and waits for /healthz.
func MustServe(tb testing.TB, db string, extra ...string) *server {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{cancel: cancel, done: make(chan error, 1)}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "warn"}, extra...)
	go func() {
		err := run(ctx, args, func(string) string { return "" }, strings.NewReader(""), pw, io.Discard)
		pw.CloseWithError(fmt.Errorf("serve returned: %v", err))
		s.done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		tb.Fatalf("serve printed no address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		cancel()
		tb.Fatalf("serve printed %q, want listening on http://ADDR", line)
	}
	s.URL = addr
	for i := 0; ; i++ {
		resp, err := http.Get(s.URL + "/healthz")
		if err == nil && resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		if i == 100 {
			cancel()
			tb.Fatalf("healthz never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Cleanup(func() { s.Stop(tb) })
	return s
}

// Stop shuts the server down as SIGTERM does and waits for run to return.
func (s *server) Stop(tb testing.TB) {
	tb.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			tb.Errorf("serve returned %v", err)
		}
	case <-time.After(30 * time.Second):
		tb.Errorf("serve did not stop")
	}
}

// BenchmarkServe_Append measures appends of one message through the HTTP
// API of a real `serve` on SQLite (synchronous=FULL), from many concurrent
// keep-alive clients on the same machine.
func BenchmarkServe_Append(b *testing.B) {
	srv := MustServe(b, filepath.Join(b.TempDir(), "bench.db"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		thread := fmt.Sprintf("%s/v1/users/u%d/threads", srv.URL, n.Add(1))
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
}
