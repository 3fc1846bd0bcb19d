package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestBackup: a backup taken while messages are being appended holds
// every message acknowledged before it began, opens as a store of its
// own, and never overwrites a file.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := testutil.MustOpenSQLiteFile(t, filepath.Join(dir, "agentmem.db"))
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	appendOne := func(i int) {
		if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: "user", Content: fmt.Sprintf("message %d", i)}}, agentmem.AppendOptions{}); err != nil {
			t.Error(err)
		}
	}
	for i := range 100 {
		appendOne(i)
	}
	// Writes go on while the backup runs.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 100; i < 300; i++ {
			appendOne(i)
		}
	}()
	out := filepath.Join(dir, "backup.db")
	res, err := s.Backup(ctx, out)
	wg.Wait()
	if err != nil || res.Size == 0 {
		t.Fatalf("Backup: %+v, %v", res, err)
	}
	restored := testutil.MustOpenSQLiteFile(t, out)
	msgs, _, err := restored.FindMessages(ctx, "alice", "t", agentmem.MessageFilter{Limit: agentmem.MaxPageSize})
	if err != nil || len(msgs) < 100 {
		t.Fatalf("the backup holds %d messages (%v), want at least the 100 acknowledged before it", len(msgs), err)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || m.Content != fmt.Sprintf("message %d", i) {
			t.Fatalf("message %d of the backup: seq %d %q", i, m.Seq, m.Content)
		}
	}
	if _, err := s.Backup(ctx, out); agentmem.ErrorCode(err) != agentmem.EINVALID {
		t.Errorf("a backup over an existing file: %v, want EINVALID", err)
	}
}
