package client_test

import (
	"context"
	"encoding/json"
	"github.com/agentmem/agentmem/core"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/tokens"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// MustServe serves the real handler over an empty SQLite store and returns
// a client of it.
func MustServe(tb testing.TB) *client.Client {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "test.db"), sqlite.Options{})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	s.Tokens = tokens.Default()
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	srv := httptest.NewServer(httpapi.NewHandler(nil, core.New(s, core.Options{}), httpapi.Options{}))
	tb.Cleanup(srv.Close)
	return client.New(srv.URL+"/", srv.Client())
}

// wantCode fails unless err carries the agentmem error code want.
func wantCode(tb testing.TB, err error, want string) {
	tb.Helper()
	if got := agentmem.ErrorCode(err); got != want {
		tb.Fatalf("ErrorCode=%q (%v), want %q", got, err, want)
	}
}

func TestClient(t *testing.T) {
	c := MustServe(t)
	ctx := context.Background()

	if err := c.Health(ctx); err != nil {
		t.Fatalf("Health: %v", err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}

	// Threads.
	th, err := c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t1", AgentID: "bot", Title: "Hello", Metadata: json.RawMessage(`{"k":1}`), Tags: []string{"x"}})
	if err != nil {
		t.Fatalf("CreateThread: %v", err)
	}
	if th.ID != "t1" || th.UserID != "alice" || th.AgentID != "bot" || th.Status != agentmem.ThreadActive || string(th.Metadata) != `{"k":1}` {
		t.Fatalf("CreateThread=%+v, want alice's t1 of bot", th)
	}
	_, err = c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t1"})
	wantCode(t, err, agentmem.ECONFLICT)
	t2, err := c.CreateThread(ctx, "alice", &agentmem.Thread{})
	if err != nil || t2.ID == "" {
		t.Fatalf("CreateThread without ID=%+v, %v; want an assigned ID", t2, err)
	}
	got, err := c.GetThread(ctx, "alice", "t1")
	if err != nil {
		t.Fatalf("GetThread: %v", err)
	}
	if diff := cmp.Diff(th, got); diff != "" {
		t.Fatalf("GetThread mismatch (-want +got):\n%s", diff)
	}
	_, err = c.GetThread(ctx, "bob", "t1")
	wantCode(t, err, agentmem.ENOTFOUND)
	_, err = c.GetThread(ctx, "alice", "a/b")
	wantCode(t, err, agentmem.EINVALID)

	title := "Renamed"
	if th, err = c.UpdateThread(ctx, "alice", "t1", agentmem.ThreadUpdate{Title: &title}); err != nil || th.Title != title || th.AgentID != "bot" {
		t.Fatalf("UpdateThread=%+v, %v; want only the title changed", th, err)
	}
	if th, err = c.EndThread(ctx, "alice", "t1"); err != nil || th.Status != agentmem.ThreadEnded {
		t.Fatalf("EndThread=%+v, %v; want ended", th, err)
	}

	bot := "bot"
	page, next, err := c.ListThreads(ctx, "alice", client.ListThreadsOptions{AgentID: &bot})
	if err != nil || len(page) != 1 || page[0].ID != "t1" || next != "" {
		t.Fatalf("ListThreads(agent bot)=%v, %q, %v; want t1 only", page, next, err)
	}
	page, next, err = c.ListThreads(ctx, "alice", client.ListThreadsOptions{Limit: 1})
	if err != nil || len(page) != 1 || next == "" {
		t.Fatalf("ListThreads(limit 1)=%v, %q, %v; want one and a cursor", page, next, err)
	}
	if page, next, err = c.ListThreads(ctx, "alice", client.ListThreadsOptions{Limit: 1, Cursor: next}); err != nil || len(page) != 1 || next != "" {
		t.Fatalf("ListThreads(page 2)=%v, %q, %v; want the last one", page, next, err)
	}
	if page, _, err = c.ListThreads(ctx, "alice", client.ListThreadsOptions{Status: agentmem.ThreadEnded}); err != nil || len(page) != 1 {
		t.Fatalf("ListThreads(ended)=%v, %v; want t1", page, err)
	}
	_, _, err = c.ListThreads(ctx, "alice", client.ListThreadsOptions{Cursor: "garbage!"})
	wantCode(t, err, agentmem.EINVALID)

	// Messages.
	msgs := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "Weather?"},
		{Role: agentmem.RoleAssistant, ToolCalls: []agentmem.ToolCall{{ID: "c1", Function: agentmem.FunctionCall{Name: "weather", Arguments: "{}"}}}},
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "rain", Metadata: json.RawMessage(`{"src":"api"}`)},
	}
	stored, err := c.AppendMessages(ctx, "alice", "t1", msgs, "key-1")
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if len(stored) != 3 || stored[0].Seq != 1 || stored[2].Seq != 3 || stored[1].ToolCalls[0].Type != "function" {
		t.Fatalf("AppendMessages=%v, want seqs 1..3", stored)
	}
	retry, err := c.AppendMessages(ctx, "alice", "t1", msgs, "key-1")
	if err != nil {
		t.Fatalf("AppendMessages retry: %v", err)
	}
	if diff := cmp.Diff(stored, retry); diff != "" {
		t.Fatalf("retry mismatch (-want +got):\n%s", diff)
	}
	_, err = c.AppendMessages(ctx, "alice", "t1", msgs[:1], "key-1")
	wantCode(t, err, agentmem.ECONFLICT)
	_, err = c.AppendMessages(ctx, "alice", "t1", []*agentmem.Message{{Role: "robot"}}, "")
	wantCode(t, err, agentmem.EINVALID)
	_, err = c.AppendMessages(ctx, "alice", "t1", []*agentmem.Message{{Role: "user", Content: strings.Repeat("x", agentmem.DefaultMaxMessageBytes+1)}}, "")
	wantCode(t, err, agentmem.ETOOLARGE)

	all, next, err := c.ListMessages(ctx, "alice", "t1", agentmem.MessageFilter{})
	if err != nil || next != "" {
		t.Fatalf("ListMessages: %v, next %q", err, next)
	}
	if diff := cmp.Diff(stored, all); diff != "" {
		t.Fatalf("ListMessages mismatch (-want +got):\n%s", diff)
	}
	tail, next, err := c.ListMessages(ctx, "alice", "t1", agentmem.MessageFilter{Desc: true, Limit: 2})
	if err != nil || len(tail) != 2 || tail[0].Seq != 3 || next == "" {
		t.Fatalf("ListMessages(desc, 2)=%v, %q, %v; want seqs 3, 2 and a cursor", tail, next, err)
	}
	if rest, next, err := c.ListMessages(ctx, "alice", "t1", agentmem.MessageFilter{Desc: true, Limit: 2, Cursor: next}); err != nil || len(rest) != 1 || rest[0].Seq != 1 || next != "" {
		t.Fatalf("ListMessages(desc, page 2)=%v, %q, %v; want seq 1", rest, next, err)
	}
	if mid, _, err := c.ListMessages(ctx, "alice", "t1", agentmem.MessageFilter{AfterSeq: 1, BeforeSeq: 3}); err != nil || len(mid) != 1 || mid[0].Seq != 2 {
		t.Fatalf("ListMessages(1 < seq < 3)=%v, %v; want seq 2", mid, err)
	}

	// Elements.
	el, err := c.CreateElement(ctx, "alice", "t1", &agentmem.Element{MessageID: stored[2].ID, Type: "citation", Name: "source", URL: "https://example.com"})
	if err != nil || el.ID == "" || el.ThreadID != "t1" {
		t.Fatalf("CreateElement=%+v, %v", el, err)
	}
	_, err = c.CreateElement(ctx, "alice", "t1", &agentmem.Element{MessageID: "nope"})
	wantCode(t, err, agentmem.ENOTFOUND)
	els, _, err := c.ListElements(ctx, "alice", "t1", agentmem.ElementFilter{MessageID: &stored[2].ID})
	if err != nil {
		t.Fatalf("ListElements: %v", err)
	}
	if diff := cmp.Diff([]*agentmem.Element{el}, els); diff != "" {
		t.Fatalf("ListElements mismatch (-want +got):\n%s", diff)
	}

	// Sessions.
	_, err = c.GetSession(ctx, "alice", "bot", false)
	wantCode(t, err, agentmem.ENOTFOUND)
	sess, err := c.GetSession(ctx, "alice", "bot", true)
	if err != nil || sess.ThreadID == "" || sess.AgentID != "bot" {
		t.Fatalf("GetSession(create)=%+v, %v", sess, err)
	}
	if again, err := c.GetSession(ctx, "alice", "bot", true); err != nil || again.ThreadID != sess.ThreadID {
		t.Fatalf("GetSession(create) again=%+v, %v; want the same thread %s", again, err, sess.ThreadID)
	}
	if sess, err = c.SetSession(ctx, "alice", "bot", "t1"); err != nil || sess.ThreadID != "t1" {
		t.Fatalf("SetSession=%+v, %v", sess, err)
	}
	_, err = c.SetSession(ctx, "bob", "bot", "t1")
	wantCode(t, err, agentmem.ENOTFOUND)

	// Export and import.
	x, err := c.ExportThread(ctx, "alice", "t1")
	if err != nil {
		t.Fatalf("ExportThread: %v", err)
	}
	if diff := cmp.Diff(stored, x.Messages); diff != "" {
		t.Fatalf("ExportThread messages mismatch (-want +got):\n%s", diff)
	}
	md, err := c.ExportThreadMarkdown(ctx, "alice", "t1")
	if err != nil || !strings.HasPrefix(md, "# Renamed\n") || !strings.Contains(md, "## 👤 User\n\nWeather?\n\n---\n") {
		t.Fatalf("ExportThreadMarkdown=%q, %v", md, err)
	}
	imported, err := c.ImportThread(ctx, "bob", x)
	if err != nil || imported.UserID != "bob" || imported.ID != "t1" || imported.MessageCount != 3 {
		t.Fatalf("ImportThread=%+v, %v", imported, err)
	}
	y, err := c.ExportThread(ctx, "bob", "t1")
	if err != nil {
		t.Fatalf("ExportThread(bob): %v", err)
	}
	if diff := cmp.Diff(x, y, cmpopts.IgnoreFields(agentmem.Thread{}, "UserID")); diff != "" {
		t.Fatalf("import round trip mismatch (-want +got):\n%s", diff)
	}
	_, err = c.ImportThread(ctx, "bob", x)
	wantCode(t, err, agentmem.ECONFLICT)

	ux, err := c.ExportUser(ctx, "alice")
	if err != nil || ux.UserID != "alice" || len(ux.Threads) != 3 {
		t.Fatalf("ExportUser=%+v, %v; want alice's 3 threads", ux, err)
	}

	// Stats and erasure.
	st, err := c.Stats(ctx)
	if err != nil || st.Users != 2 || st.Messages != 6 {
		t.Fatalf("Stats=%+v, %v; want 2 users, 6 messages", st, err)
	}
	counts, err := c.DeleteUser(ctx, "alice")
	if err != nil || counts.Users != 1 || counts.Threads != 3 || counts.Messages != 3 || counts.Elements != 1 || counts.Sessions != 1 {
		t.Fatalf("DeleteUser=%+v, %v", counts, err)
	}
	if _, err := c.GetThread(ctx, "bob", "t1"); err != nil {
		t.Fatalf("bob's thread after erasing alice: %v", err)
	}

	// Deletion.
	if err := c.DeleteThread(ctx, "bob", "t1", false); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	_, err = c.GetThread(ctx, "bob", "t1")
	wantCode(t, err, agentmem.ENOTFOUND)
	if err := c.DeleteThread(ctx, "bob", "t1", true); err != nil {
		t.Fatalf("DeleteThread(permanent) of a soft-deleted thread: %v", err)
	}
	wantCode(t, c.DeleteThread(ctx, "bob", "t1", true), agentmem.ENOTFOUND)
}

func TestClient_Errors(t *testing.T) {
	t.Run("NotJSON", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
		}))
		defer srv.Close()
		err := client.New(srv.URL, nil).Health(context.Background())
		wantCode(t, err, agentmem.EUNAVAILABLE)
		if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, "502") {
			t.Fatalf("ErrorMessage=%q, want the status in it", msg)
		}
	})
	t.Run("APIError", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":"rate_limited","message":"Slow down."}}`))
		}))
		defer srv.Close()
		_, err := client.New(srv.URL, nil).Stats(context.Background())
		want := &agentmem.Error{Code: agentmem.ERATELIMIT, Message: "Slow down."}
		if diff := cmp.Diff(want, err); diff != "" {
			t.Fatalf("error mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		err := client.New(srv.URL, nil).Health(context.Background())
		if err == nil || !strings.Contains(err.Error(), "GET /healthz") {
			t.Fatalf("err=%v, want a transport error naming the request", err)
		}
	})
	t.Run("OddIDs", func(t *testing.T) {
		c := MustServe(t)
		ctx := context.Background()
		// "/v1/users//threads/threads" would be a path to clean: refused.
		_, err := c.GetThread(ctx, "", "threads")
		wantCode(t, err, agentmem.EINVALID)
		// Dots are valid IDs and reach their own thread, not a cleaned path.
		for _, id := range []string{".", ".."} {
			if _, err := c.CreateThread(ctx, "u", &agentmem.Thread{ID: id}); err != nil {
				t.Fatalf("CreateThread(%q): %v", id, err)
			}
			if th, err := c.GetThread(ctx, "u", id); err != nil || th.ID != id {
				t.Fatalf("GetThread(%q)=%v, %v", id, th, err)
			}
			if err := c.DeleteThread(ctx, "u", id, true); err != nil {
				t.Fatalf("DeleteThread(%q): %v", id, err)
			}
		}
		if page, _, err := c.ListThreads(ctx, "u", client.ListThreadsOptions{}); err != nil || len(page) != 0 {
			t.Fatalf("ListThreads=%v, %v; want none left", page, err)
		}
	})
}
