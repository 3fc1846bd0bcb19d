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

	"github.com/agentmem/agentmem"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a server.
type Options struct {
	// User returns the user a call acts for (required): the configured
	// user over stdio, the authenticated one over HTTP. An error fails the
	// call with its message.
	User func(ctx context.Context, req *sdk.CallToolRequest) (string, error)
	// Agent is the agent of the notes and of the session a call without a
	// thread uses (agentmem.DefaultAgent when "").
	Agent string
	// Version is reported to clients.
	Version string
	// Log receives the SDK's logs (nil discards).
	Log *slog.Logger
}

// NewServer returns the MCP server of svc's tools (see tools.go).
func NewServer(svc agentmem.Service, opt Options) *sdk.Server {
	opt.Agent = cmp.Or(opt.Agent, agentmem.DefaultAgent)
	s := sdk.NewServer(&sdk.Implementation{Name: "agentmem", Title: "agentmem memory", Version: cmp.Or(opt.Version, "dev")}, &sdk.ServerOptions{
		Instructions: "agentmem remembers this user across conversations. Call retrieve_user_facts or search_memory before answering " +
			"questions about the user; call remember when the user states a lasting fact or preference; keep your own working notes " +
			"about the user with manage_notes.",
		Logger: opt.Log,
	})
	t := &tools{svc: svc, opt: opt}
	for _, sp := range specs {
		sp.add(s, t)
	}
	return s
}

// tools holds what the tool handlers share.
type tools struct {
	svc agentmem.Service
	opt Options
}

// user returns the user of a call.
func (t *tools) user(ctx context.Context, req *sdk.CallToolRequest) (string, error) {
	if t.opt.User == nil {
		return "", agentmem.Errorf(agentmem.EUNAUTHORIZED, "This MCP server has no user configured.")
	}
	return t.opt.User(ctx, req)
}

// toolError is the message a tool error carries: agentmem's message for
// the client, never internal text.
func toolError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s", agentmem.ErrorMessage(err))
}
