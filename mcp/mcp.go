// Package mcp is agentmem's MCP server: the memory of one user as tools an
// agent host (Claude Desktop, Cursor, VS Code, any MCP client) calls, on
// the official SDK github.com/modelcontextprotocol/go-sdk. Each tool makes
// one call of agentmem.Service, in process (core.Service) or over the
// REST API (client.Client), so that a tool and the REST route it mirrors
// answer alike.
//
// Whose memory a tool reaches is never a tool argument: Options.User
// says, from the configured user (stdio) or the caller's identity (HTTP).
package mcp

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/agentmem/agentmem"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a server.
type Options struct {
	// User is the user the server acts for (required): the configured
	// user over stdio, the one who opened the session over HTTP.
	User string
	// Agent is the agent of the notes and of the session a call without a
	// thread uses (agentmem.DefaultAgent when "").
	Agent string
	// Version is reported to clients.
	Version string
	// Log receives the SDK's logs (nil discards).
	Log *slog.Logger
}

// schemas caches the tools' JSON schemas for every server.
var schemas = sdk.NewSchemaCache()

// NewServer returns the MCP server of svc's tools (see tools.go).
func NewServer(svc agentmem.Service, opt Options) *sdk.Server {
	opt.Agent = cmp.Or(opt.Agent, agentmem.DefaultAgent)
	t := &handlers{svc: svc, opt: opt}
	s := sdk.NewServer(&sdk.Implementation{Name: "agentmem", Title: "agentmem memory", Version: cmp.Or(opt.Version, "dev")}, &sdk.ServerOptions{
		Instructions: "agentmem remembers this user across conversations. Call retrieve_user_facts or search_memory before answering " +
			"questions about the user; call remember when the user states a lasting fact or preference; keep your own working notes " +
			"about the user with manage_notes.",
		Logger: quietLog(opt.Log),
		// Every server has the same tools: their schemas are made once
		// and shared, not once per server (over HTTP, once per session).
		SchemaCache: schemas,
		// Subscriptions are kept by the SDK, which sends each resource's
		// updates to the sessions subscribed to it; a subscription notes
		// the versions its updates are told against (see changes).
		SubscribeHandler: func(ctx context.Context, _ *sdk.SubscribeRequest) error {
			t.mu.Lock()
			t.subscriptions++
			t.mu.Unlock()
			t.changes(ctx, opt.User)
			return nil
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error {
			t.mu.Lock()
			t.subscriptions = max(t.subscriptions-1, 0)
			t.mu.Unlock()
			return nil
		},
	})
	s.AddReceivingMiddleware(nullsDropped)
	t.server = s
	t.addTools(s)
	t.addResources(s)
	return s
}

// handlers holds what the server's tools, resources and prompts share.
type handlers struct {
	svc    agentmem.Service
	opt    Options
	server *sdk.Server // nil when a tool runs outside MCP (Call)

	// seen are the versions of the resources last seen, while any
	// resource has a subscriber (see changes).
	mu            sync.Mutex
	seen          map[string]int64
	subscriptions int
}

// user returns the user the server acts for.
func (t *handlers) user() (string, error) {
	if t.opt.User == "" {
		return "", agentmem.Errorf(agentmem.EUNAUTHORIZED, "This MCP server has no user configured.")
	}
	return t.opt.User, nil
}

// toolError is the message a tool error carries: agentmem's message for
// the client, never internal text.
func toolError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s", agentmem.ErrorMessage(err))
}
