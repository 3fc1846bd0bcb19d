package mcp_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResources: the profile and the notes read as resources; a
// subscriber to the notes is told when manage_notes changes them; the
// session-start prompt opens with what is remembered.
func TestResources(t *testing.T) {
	mem := apptest.Open(t)
	// The server's log goes to the test's output: an update it could not
	// send says why there.
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	srv := mcp.NewServer(mem.Service, mcp.Options{User: "erin", Agent: "assistant", Log: log})
	ct, st := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	updates := make(chan string, 4)
	client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
	})
	// Since the protocol of 2026-07-28 a subscription is a request that
	// stays open: Subscribe returns once it is sent, and the server
	// acknowledges it once it holds. The test waits for that, or a change
	// made meanwhile would reach no subscriber (CI saw it once).
	acks := make(chan struct{}, 4)
	client.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/subscriptions/acknowledged" {
				acks <- struct{}{}
			}
			return res, err
		}
	})
	var session *sdk.ClientSession // connected below
	subscribe := func(uri string) {
		t.Helper()
		if err := session.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-acks:
		case <-time.After(5 * time.Second): // an older protocol's Subscribe returns once it holds, unacknowledged
		}
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	session = cs

	read := func(uri string) string {
		t.Helper()
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		return res.Contents[0].Text
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 2 {
		t.Fatalf("resources: %+v, %v", list, err)
	}
	if got := read("agentmem://profile"); got != "" {
		t.Errorf("profile before any: %q", got)
	}

	subscribe("agentmem://notes")
	call(t, cs, "manage_notes", map[string]any{"operation": "overwrite", "content": "# Erin\n- Prefers mornings"}, nil)
	select {
	case uri := <-updates:
		if uri != "agentmem://notes" {
			t.Errorf("update of %q", uri)
		}
	case <-time.After(30 * time.Second): // only a failure waits this long
		t.Fatal("no update of the notes")
	}
	if got := read("agentmem://notes"); !strings.Contains(got, "Prefers mornings") {
		t.Errorf("notes: %q", got)
	}
	call(t, cs, "manage_notes", map[string]any{"operation": "read"}, nil)
	select {
	case uri := <-updates:
		t.Errorf("reading the notes sent an update of %s", uri)
	case <-time.After(100 * time.Millisecond):
	}

	// A profile written elsewhere (reflection, in the background) reaches
	// a subscriber at its next call.
	subscribe("agentmem://profile")
	call(t, cs, "remember", map[string]any{"text": "User is a pediatric nurse.", "category": "work"}, nil)
	if _, err := mem.RefreshProfile(ctx, "erin"); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "list_threads", map[string]any{}, nil)
	select {
	case uri := <-updates:
		if uri != "agentmem://profile" {
			t.Errorf("update of %q", uri)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no update of the profile")
	}

	// With a profile, the session starts with it and the notes.
	if got := read("agentmem://profile"); !strings.Contains(got, "pediatric nurse") {
		t.Errorf("profile: %q", got)
	}
	p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "session_start"})
	if err != nil {
		t.Fatal(err)
	}
	text := p.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.Contains(text, "pediatric nurse") || !strings.Contains(text, "Prefers mornings") || strings.Contains(text, "Active Conversation") {
		t.Errorf("session start:\n%s", text)
	}
	if th, _, err := mem.FindThreads(ctx, "erin", agentmem.ThreadFilter{}); err != nil || len(th) != 1 {
		t.Errorf("threads after the session started: %d, %v", len(th), err)
	}
}
