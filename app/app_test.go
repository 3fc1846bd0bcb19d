package app_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/profile"
	"github.com/agentmem/agentmem/reflection"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSameAnswers: a Go program in library mode (app.Open) and a client of
// the REST API over the same agentmem are two implementations of
// agentmem.Service; the same calls give the same answers.
func TestSameAnswers(t *testing.T) {
	ctx := context.Background()
	mem, err := app.Open(ctx, app.Config{DB: "sqlite:" + filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{}))
	defer srv.Close()
	remote := client.New(srv.URL, srv.Client())

	// Library mode: a turn through the hooks, a memory, notes, an end.
	if _, err := mem.Before(ctx, "alice", "t1", "I live in Oslo and I love skiing.", agentmem.ContextRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := mem.After(ctx, "alice", "t1", "I live in Oslo and I love skiing.", &agentmem.Message{Content: "Noted!"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User's sister is Ana.", Category: "relationship"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.EditNotes(ctx, "alice", "helper", agentmem.NotesOp{Operation: agentmem.NotesAppend, Content: "## Trips\nOslo in May."}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.EndThread(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	// Let the background jobs (indexing, reflection, profile) finish, so
	// that both sides read one state.
	waitIdle(t, mem)

	type answers struct {
		Thread   *agentmem.Thread
		Messages []*agentmem.Message
		Memories []*agentmem.Memory
		Search   *agentmem.SearchResponse
		Context  *agentmem.Context
		Notes    *agentmem.Notes
		Profile  *agentmem.Profile
	}
	ask := func(s agentmem.Service) answers {
		t.Helper()
		var a answers
		var err error
		must := func(e error) {
			t.Helper()
			if e != nil {
				t.Fatal(e)
			}
		}
		a.Thread, err = s.FindThreadByID(ctx, "alice", "t1")
		must(err)
		a.Messages, _, err = s.FindMessages(ctx, "alice", "t1", agentmem.MessageFilter{})
		must(err)
		a.Memories, _, err = s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
		must(err)
		a.Search, err = s.Search(ctx, "alice", agentmem.SearchRequest{Query: "where does alice live?"})
		must(err)
		a.Context, err = s.BuildContext(ctx, "alice", "t1", agentmem.ContextRequest{Input: "What about Ana?", Format: agentmem.FormatText})
		must(err)
		a.Notes, err = s.FindNotes(ctx, "alice", "helper")
		must(err)
		a.Profile, err = s.FindProfile(ctx, "alice")
		must(err)
		return a
	}
	local, viaHTTP := ask(mem), ask(remote)
	if len(local.Memories) < 2 || len(local.Search.Results) == 0 || local.Profile == nil {
		t.Fatalf("library answers are thin: %d memories, %d results", len(local.Memories), len(local.Search.Results))
	}
	opts := cmp.Options{
		cmpopts.IgnoreFields(agentmem.Telemetry{}, "CacheHit"), // the second build of a context is cached
		cmpopts.EquateEmpty(),
		cmpopts.IgnoreUnexported(agentmem.Context{}),
	}
	if diff := cmp.Diff(local, viaHTTP, opts...); diff != "" {
		t.Fatalf("library and REST client answer differently (-library +client):\n%s", diff)
	}
}

// waitIdle waits until mem has no queued or running job.
func waitIdle(t *testing.T, mem *app.App) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		busy := 0
		for _, st := range []string{agentmem.JobQueued, agentmem.JobRunning} {
			js, _, err := mem.FindJobs(context.Background(), agentmem.JobFilter{Status: &st})
			if err != nil {
				t.Fatal(err)
			}
			busy += len(js)
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still pending after 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRun_WarmsSearch: after a start, the app loads every user's vectors
// into the search cache in the background, and says so.
func TestRun_WarmsSearch(t *testing.T) {
	ctx := context.Background()
	db := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	mem, err := app.New(ctx, app.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"alice", "bob"} {
		if _, err := mem.CreateMemory(ctx, user, agentmem.MemoryInput{Text: "User lives in Oslo.", Category: "fact"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
	log, buf := testutil.NewLog()
	mem, err = app.Open(ctx, app.Config{DB: db, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(buf.String(), "search cache warmed"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no warm-up logged in 10 s:\n%s", buf.String())
		}
	}
	if !strings.Contains(buf.String(), "users=2") {
		t.Fatalf("warm-up log %q, want users=2", buf.String())
	}
}

// TestProfileManual: with ProfileManual, memories and an ended thread's
// reflection queue no profile job, and no profile is written, until one
// is asked for (TestSameAnswers has the automatic one, after the same
// steps).
func TestProfileManual(t *testing.T) {
	ctx := context.Background()
	mem, err := app.Open(ctx, app.Config{DB: "sqlite:" + filepath.Join(t.TempDir(), "a.db"), ProfileManual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.After(ctx, "alice", "t1", "I live in Oslo and I love skiing.", &agentmem.Message{Content: "Noted!"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User's sister is Ana.", Category: "relationship"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.EndThread(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, mem)
	jobs, _, err := mem.FindJobs(ctx, agentmem.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, j := range jobs {
		kinds = append(kinds, j.Kind)
		if j.Kind == profile.JobKind {
			t.Errorf("a profile job was queued: %+v", j)
		}
	}
	if !slices.Contains(kinds, reflection.JobKind) {
		t.Fatalf("jobs %v: the ended thread was not reflected on, so the test shows nothing", kinds)
	}
	if _, err := mem.FindProfile(ctx, "alice"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("FindProfile before a refresh: %v, want not found", err)
	}
	p, err := mem.RefreshProfile(ctx, "alice")
	if err != nil || !strings.Contains(p.Text, "Ana") {
		t.Fatalf("RefreshProfile = %+v, %v; want a profile of the memories", p, err)
	}
}
