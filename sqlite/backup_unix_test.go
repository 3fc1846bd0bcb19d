//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
)

// leftover writes what a backup to out killed mid-copy leaves: its
// partial copy, SQLite's journal of it, and its lock file, which names a
// process that is gone and which no one holds.
func leftover(t *testing.T, out string, size int) {
	t.Helper()
	for name, body := range map[string]string{
		out + ".partial":         strings.Repeat("x", size),
		out + ".partial-journal": "journal",
		out + ".partial.lock":    "agentmem backup pid 999999999\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// holdLock takes the lock of a backup to out as a running backup (of
// another process) holds it, until the test ends or release is called.
func holdLock(t *testing.T, out string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(out+".partial.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "agentmem backup pid %d\n", os.Getpid())
	var once sync.Once
	release = func() { once.Do(func() { f.Close() }) }
	t.Cleanup(release)
	return release
}

// TestBackup_Killed: what a killed backup left (its partial copy, journal
// and lock) is removed by the next backup, to the same file or another in
// the same directory; files that are not a backup's are left alone.
func TestBackup_Killed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := testutil.MustOpenSQLiteFile(t, filepath.Join(dir, "agentmem.db"))
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	out, other := filepath.Join(dir, "backup.db"), filepath.Join(dir, "backup-yesterday.db")
	leftover(t, out, 1<<20)
	leftover(t, other, 1<<20)
	notOurs := []string{filepath.Join(dir, "notes.partial"), filepath.Join(dir, "x.partial.lock"), filepath.Join(dir, "x.partial")}
	for _, name := range notOurs {
		if err := os.WriteFile(name, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	res, err := s.Backup(ctx, out)
	if err != nil || res.Size == 0 {
		t.Fatalf("Backup after a killed one: %+v, %v", res, err)
	}
	for _, name := range []string{out, other} {
		for _, suffix := range []string{".partial", ".partial-journal", ".partial.lock"} {
			if _, err := os.Stat(name + suffix); !os.IsNotExist(err) {
				t.Errorf("%s is left: %v", name+suffix, err)
			}
		}
	}
	want := []string{other + ".partial", out + ".partial"}
	if fmt.Sprint(res.Removed) != fmt.Sprint(want) {
		t.Errorf("Removed = %v, want %v", res.Removed, want)
	}
	for _, name := range notOurs {
		if b, err := os.ReadFile(name); err != nil || string(b) != "mine" {
			t.Errorf("%s, not a backup's, was touched: %q, %v", name, b, err)
		}
	}
	if _, err := testutil.MustOpenSQLiteFile(t, out).FindThreadByID(ctx, "alice", "t"); err != nil {
		t.Fatalf("the backup: %v", err)
	}
}

// TestBackup_Concurrent: a backup to a file another backup is writing is
// refused at once, saying so; it leaves the other's partial copy alone,
// and once the other is done, a backup runs. Two backups started
// together: one copies, the other is refused.
func TestBackup_Concurrent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := testutil.MustOpenSQLiteFile(t, filepath.Join(dir, "agentmem.db"))
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "backup.db")
	release := holdLock(t, out)
	if err := os.WriteFile(out+".partial", []byte("being written"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Backup(ctx, out)
	if agentmem.ErrorCode(err) != agentmem.ECONFLICT || !strings.Contains(agentmem.ErrorMessage(err), "Another backup to "+out+" is running") ||
		!strings.Contains(agentmem.ErrorMessage(err), fmt.Sprint(os.Getpid())) {
		t.Fatalf("Backup while another runs: %v, want ECONFLICT saying another backup to %s is running, and its process", err, out)
	}
	if b, err := os.ReadFile(out + ".partial"); err != nil || string(b) != "being written" {
		t.Fatalf("the running backup's partial copy: %q, %v", b, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused backup wrote %s: %v", out, err)
	}
	release() // the other backup died, or ended without removing its partial copy
	if _, err := s.Backup(ctx, out); err != nil {
		t.Fatalf("Backup once the other is gone: %v", err)
	}

	// Started together.
	out = filepath.Join(dir, "together.db")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Backup(ctx, out)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case agentmem.ErrorCode(err) == agentmem.ECONFLICT && strings.Contains(err.Error(), "is running"):
		case agentmem.ErrorCode(err) == agentmem.EINVALID && strings.Contains(err.Error(), "exists"): // the other was done first
		default:
			t.Errorf("one of two backups to one file: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of two backups to one file succeeded (%v), want 1", ok, errs)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "together.db.*"))
	if len(m) != 0 {
		t.Fatalf("left: %v", m)
	}
	if _, err := testutil.MustOpenSQLiteFile(t, out).FindThreadByID(ctx, "alice", "t"); err != nil {
		t.Fatalf("the backup: %v", err)
	}
}
