//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testutil"
)

// bigDatabase writes a database of about mib MiB at path, so that a
// backup of it takes long enough to be killed or met while it runs.
func bigDatabase(t *testing.T, path string, mib int) {
	t.Helper()
	testutil.MustOpenSQLiteFile(t, path).Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE filler (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 1<<20)
	for range mib {
		rand.Read(blob)
		if _, err := db.Exec(`INSERT INTO filler VALUES (?)`, blob); err != nil {
			t.Fatal(err)
		}
	}
}

// backupProcess is `agentmem backup` running as a process of its own.
type backupProcess struct {
	cmd  *exec.Cmd
	done chan error // its exit
}

// startBackup starts `agentmem backup` to out and returns it once it
// writes out's partial copy, or nil when it was done first.
func startBackup(t *testing.T, bin, db, out string) *backupProcess {
	t.Helper()
	p := &backupProcess{cmd: exec.Command(bin, "backup", "--db", db, "--out", out), done: make(chan error, 1)}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	for {
		select {
		case err := <-p.done:
			if err != nil {
				t.Fatalf("backup to %s: %v", out, err)
			}
			return nil
		default:
		}
		if fi, err := os.Stat(out + ".partial"); err == nil && fi.Size() > 0 {
			t.Cleanup(func() { p.cmd.Process.Kill() })
			return p
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBackup_KilledThenConcurrent: backups killed (kill -9) while they
// copy, to files of different names, leave partial copies, which the next
// backup removes, saying so; a backup to a file that another backup (a
// process of its own) is writing is refused at once, naming it, and the
// other goes on to finish.
func TestBackup_KilledThenConcurrent(t *testing.T) {
	bin := agentmemBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmem.db")
	bigDatabase(t, db, 64)
	ctx := context.Background()
	noEnv := func(string) string { return "" }

	killed := 0
	for i := 0; killed < 3 && i < 10; i++ {
		p := startBackup(t, bin, db, filepath.Join(dir, fmt.Sprintf("backup-%d.db", i)))
		if p == nil {
			continue // done before it could be killed
		}
		if err := p.cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		<-p.done
		killed++
	}
	partials, _ := filepath.Glob(filepath.Join(dir, "*.partial"))
	if killed == 0 || len(partials) == 0 {
		t.Fatalf("%d backups killed mid-copy, leaving %v: the test kills none", killed, partials)
	}
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"backup", "--db", db, "--out", filepath.Join(dir, "after.db")}, noEnv, nil, &stdout, &stderr); err != nil {
		t.Fatalf("backup after killed ones: %v\n%s", err, stderr.String())
	}
	for _, p := range partials {
		if !strings.Contains(stderr.String(), "removed "+p+":") {
			t.Errorf("the next backup did not say it removed %s:\n%s", p, stderr.String())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.partial*")); len(left) != 0 {
		t.Fatalf("left after the next backup: %v", left)
	}

	for i := 0; ; i++ {
		out := filepath.Join(dir, fmt.Sprintf("busy-%d.db", i))
		other := startBackup(t, bin, db, out)
		if other == nil {
			if i == 5 {
				t.Fatal("every backup was done before a second one could start")
			}
			continue
		}
		err := run(ctx, []string{"backup", "--db", db, "--out", out}, noEnv, nil, &stdout, &stderr)
		if err != nil && strings.Contains(err.Error(), out+" exists") && i < 5 {
			<-other.done
			continue // the other was done first
		}
		want := fmt.Sprintf("Another backup to %s is running (process %d)", out, other.cmd.Process.Pid)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("a backup to a file another is writing: %v, want %q", err, want)
		}
		if err := <-other.done; err != nil {
			t.Fatalf("the other backup: %v", err)
		}
		if _, err := os.Stat(out); err != nil {
			t.Fatalf("the other backup wrote nothing: %v", err)
		}
		break
	}
}
