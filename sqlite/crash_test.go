package sqlite_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestAppendMessages_JobSurvivesCrash: once AppendMessages returns, the
// job the batch asked for is on disk with it. The files are copied while
// the store is open, as a process killed right after the append would
// leave them, and the copy is opened as after a restart.
func TestAppendMessages_JobSurvivesCrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := testutil.MustOpenSQLiteFile(t, filepath.Join(dir, "agentmem.db"))
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	opt := agentmem.AppendOptions{Jobs: func(stored []*agentmem.Message) []*agentmem.Job {
		return []*agentmem.Job{{Kind: "index", Key: "t#a", Payload: json.RawMessage(`{"thread_id":"t","seq_from":1}`)}}
	}}
	if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: "user", Content: "remember this"}}, opt); err != nil {
		t.Fatal(err)
	}

	crashed := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, "agentmem.db"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, "agentmem.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	restarted := testutil.MustOpenSQLiteFile(t, filepath.Join(crashed, "agentmem.db"))
	msgs, _, err := restarted.FindMessages(ctx, "alice", "t", agentmem.MessageFilter{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("after the crash: %d messages (%v), want 1", len(msgs), err)
	}
	jobs, _, err := restarted.FindJobs(ctx, agentmem.JobFilter{})
	if err != nil || len(jobs) != 1 || jobs[0].Key != "t#a" || jobs[0].Status != agentmem.JobQueued {
		t.Fatalf("after the crash: jobs %+v (%v), want the queued job t#a", jobs, err)
	}
}
