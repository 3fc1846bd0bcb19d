package faults_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBackup takes an online backup of the SQLite database while serve
// runs under the suite's load (`agentmem backup`, a second process),
// restores it by starting serve on the copy, and checks that the copy
// holds every batch acknowledged before the backup began, whole, once and
// at its seqs, with each thread's seqs gap-free, and that it passes
// SQLite's integrity checks. (PostgreSQL is backed up with pg_dump.)
func TestBackup(t *testing.T) {
	Long(t)
	ctx, cancel := context.WithTimeout(context.Background(), BackendTimeout)
	defer cancel()
	path := filepath.Join(t.TempDir(), "agentmem.db")
	srv := StartServe(t, "sqlite:"+path, "--job-lease", JobLease.String())
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	load := StartLoad(ctx, t, srv.URL, DefaultLoad)
	time.Sleep(2 * time.Second) // a gap: the load runs a while before the backup

	// What was acknowledged before the backup began must be in it.
	type acked struct {
		thread   string
		seqs     []int64
		contents []string
	}
	var before []acked
	load.mu.Lock()
	for _, b := range load.batches {
		if b.Acked {
			before = append(before, acked{b.User + "/" + b.Thread, b.Seqs, b.Contents})
		}
	}
	load.mu.Unlock()
	out := filepath.Join(t.TempDir(), "backup.db")
	start := time.Now()
	printed := Agentmem(t, "backup", "--db", "sqlite:"+path, "--out", out)
	took := time.Since(start)
	if !strings.Contains(printed, "integrity ok") {
		t.Errorf("agentmem backup printed %q", printed)
	}
	time.Sleep(500 * time.Millisecond) // a gap: the load goes on after it
	load.Stop()
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}

	// Restored: serve on the copy.
	restored := StartServe(t, "sqlite:"+out)
	if err := restored.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	c := NewClient(restored.URL)
	type message struct {
		Seq     int64  `json:"seq"`
		Content string `json:"content"`
	}
	stored := map[string]map[int64]string{} // thread → seq → content
	total := 0
	for _, ut := range load.cfg.Threads() {
		msgs, err := List[message](ctx, c, "/v1/users/"+ut.User+"/threads/"+ut.Thread+"/messages?limit=1000")
		if err != nil {
			t.Fatal(err)
		}
		thread := ut.User + "/" + ut.Thread
		stored[thread] = map[int64]string{}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Errorf("%s in the backup: message %d has seq %d, want seqs 1..N without a gap", thread, i, m.Seq)
				break
			}
			stored[thread][m.Seq] = m.Content
		}
		total += len(msgs)
	}
	lost, messagesBefore := 0, 0
	for _, a := range before {
		for i, seq := range a.seqs {
			messagesBefore++
			if stored[a.thread][seq] != a.contents[i] {
				lost++
				if lost <= 5 {
					t.Errorf("%s seq %d, acknowledged before the backup: %q in the backup, want %q", a.thread, seq, stored[a.thread][seq], a.contents[i])
				}
			}
		}
	}
	if code, _ := restored.Term(20 * time.Second); code != 0 {
		t.Errorf("serve on the backup exited with status %d", code)
	}
	copyDB := Backend{Name: "sqlite", Driver: "sqlite", DSN: "file:" + out + "?_pragma=busy_timeout(10000)"}.Open(t)
	CheckSQLiteFile(t, copyDB)
	t.Logf("faults: backup sqlite: acknowledged_before=%d messages_before=%d messages_in_backup=%d lost=%d backup_ms=%d size_mib=%.1f",
		len(before), messagesBefore, total, lost, took.Milliseconds(), float64(fi.Size())/(1<<20))
}
