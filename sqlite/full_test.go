package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
)

// TestStore_DiskFull: with the file at its MaxPageCount (a full disk, as
// SQLite sees it), appends fail EUNAVAILABLE naming the full disk, and
// each one, alone or in a group commit with others, is stored entirely
// or not at all; reads go on, the file passes integrity_check, and once
// there is room again the same appends succeed without a restart.
func TestStore_DiskFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentmem.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers = 8
	for w := range writers {
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: fmt.Sprint("t", w)}); err != nil {
			t.Fatal(err)
		}
	}
	pages, err := s.SetMaxPageCount(ctx, 1) // at most the file's size: nothing may grow it
	if err != nil || pages < 2 {
		t.Fatalf("SetMaxPageCount: %d, %v", pages, err)
	}
	// Writers append at once (so that appends share group commits) until
	// each has been refused a few times; a batch is big enough to need
	// new pages soon.
	var mu sync.Mutex
	acked, refused := map[string]bool{}, map[string]string{} // refused: the content of each
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i, fails := 0, 0; fails < 5 && i < 200; i++ {
				key := fmt.Sprintf("w%d-b%d", w, i)
				// Sizes vary, so that some appends fit in the pages left
				// while others of the same group need new ones.
				msgs := []*agentmem.Message{{Role: agentmem.RoleUser, Content: key + " " + strings.Repeat("a kayak trip to Lisbon ", 1+(7*i+3*w)%40)}}
				_, err := s.AppendMessages(ctx, "alice", fmt.Sprint("t", w), msgs, agentmem.AppendOptions{})
				mu.Lock()
				switch {
				case err == nil:
					acked[key] = true
				case agentmem.ErrorCode(err) == agentmem.EUNAVAILABLE && strings.Contains(agentmem.ErrorMessage(err), "disk is full"):
					refused[key] = msgs[0].Content
					fails++
				default:
					t.Errorf("append %s: %v, want nil or EUNAVAILABLE naming the full disk", key, err)
					fails = 5
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(refused) == 0 {
		t.Fatalf("no append was refused at the file's bound (%d acknowledged)", len(acked))
	}
	stored := func() map[string]bool {
		t.Helper()
		got := map[string]bool{}
		for w := range writers {
			msgs, _, err := s.FindMessages(ctx, "alice", fmt.Sprint("t", w), agentmem.MessageFilter{Limit: agentmem.MaxPageSize})
			if err != nil {
				t.Fatalf("read while full: %v", err)
			}
			for i, m := range msgs {
				if m.Seq != int64(i+1) {
					t.Fatalf("thread t%d: seq %d at %d, want no gaps", w, m.Seq, i+1)
				}
				key, _, _ := strings.Cut(m.Content, " ")
				if got[key] {
					t.Fatalf("%s stored twice", key)
				}
				got[key] = true
			}
		}
		return got
	}
	got := stored()
	t.Logf("%d appends acknowledged, %d refused at %d pages", len(acked), len(refused), pages)
	for key := range acked {
		if !got[key] {
			t.Errorf("%s acknowledged but not stored", key)
		}
	}
	for key := range refused {
		if got[key] {
			t.Errorf("%s refused but stored", key)
		}
	}
	if hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "kayak", Limit: 5}); err != nil {
		t.Fatalf("search while full: %v", err)
	} else if len(acked) > 0 && len(hits) == 0 {
		t.Fatal("search while full found none of the messages stored")
	}
	checkIntegrity(t, path)

	if _, err := s.SetMaxPageCount(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for key, content := range refused { // the client's retries, once there is room
		w := key[1:strings.IndexByte(key, '-')]
		msgs := []*agentmem.Message{{Role: agentmem.RoleUser, Content: content}}
		if _, err := s.AppendMessages(ctx, "alice", "t"+w, msgs, agentmem.AppendOptions{}); err != nil {
			t.Fatalf("append %s with room again: %v", key, err)
		}
	}
	if got := stored(); len(got) != len(acked)+len(refused) {
		t.Fatalf("%d messages stored, want %d acknowledged and %d retried", len(got), len(acked), len(refused))
	}
	checkIntegrity(t, path)
}

// checkIntegrity runs PRAGMA integrity_check on the file, on a connection
// of its own.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q, %v", res, err)
	}
}
