package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
)

// TestBackup: `agentmem backup` copies the database of a running serve
// while a client appends; the copy holds every message acknowledged
// before the backup began, and serve runs on it as it would after a
// restore. A second backup to the same file is refused; PostgreSQL is
// pointed to pg_dump.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmem.db")
	srv := MustServe(t, db)
	c := client.New(srv.URL, nil)
	if err := c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	var acked atomic.Int64
	appendOne := func(i int) error {
		_, err := c.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: "user", Content: fmt.Sprintf("message %d", i)}}, "")
		if err == nil {
			acked.Add(1)
		}
		return err
	}
	for i := range 50 {
		if err := appendOne(i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // writes go on during the backup
		defer wg.Done()
		for i := 50; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := appendOne(i); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	before := acked.Load()
	out := filepath.Join(dir, "backup.db")
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"backup", "--db", db, "--out", out}, func(string) string { return "" }, nil, &stdout, &stderr)
	close(stop)
	wg.Wait()
	if err != nil || !strings.Contains(stdout.String(), "integrity ok") {
		t.Fatalf("backup: %v\n%s%s", err, stdout.String(), stderr.String())
	}

	// Restored: serve on the copy has what was acknowledged before it.
	restored := MustServe(t, out)
	msgs, _, err := client.New(restored.URL, nil).FindMessages(ctx, "alice", "t", agentmem.MessageFilter{Limit: agentmem.MaxPageSize})
	if err != nil || int64(len(msgs)) < before {
		t.Fatalf("the restored server has %d messages (%v); %d were acknowledged before the backup", len(msgs), err, before)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || m.Content != fmt.Sprintf("message %d", i) {
			t.Fatalf("restored message %d: seq %d %q", i, m.Seq, m.Content)
		}
	}

	if err := run(ctx, []string{"backup", "--db", db, "--out", out}, func(string) string { return "" }, nil, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a backup over an existing file: %v", err)
	}
	if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
		t.Errorf("a partial backup was left behind: %v", err)
	}
	if pg := os.Getenv("AGENTMEM_TEST_POSTGRES"); pg != "" {
		err := run(ctx, []string{"backup", "--db", pg, "--out", filepath.Join(dir, "pg.dump")}, func(string) string { return "" }, nil, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "pg_dump") {
			t.Errorf("backup of PostgreSQL: %v, want a pointer to pg_dump", err)
		}
	}
}
