package mcp

import (
	"context"
	"strings"

	"github.com/agentmem/agentmem"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources: the user's profile and the agent's notes about them,
// both Markdown. A client may subscribe to them; the notes tell their
// subscribers when this server's manage_notes changed them.
const (
	profileURI = "agentmem://profile"
	notesURI   = "agentmem://notes"
)

// sessionStartPrompt is seed 001's session start: the initialisation
// block (what reflection learnt, the agent's notes, the recent sessions'
// summaries) that opens a conversation.
const sessionStartPrompt = "session_start"

func (t *handlers) addResources(s *sdk.Server) {
	s.AddResource(&sdk.Resource{URI: profileURI, Name: "profile", Title: "What is known about the user", MIMEType: "text/markdown",
		Description: "The user's profile: what reflection on their conversations has learnt (empty until a conversation has ended)."},
		t.readProfile)
	s.AddResource(&sdk.Resource{URI: notesURI, Name: "notes", Title: "Your notes about the user", MIMEType: "text/markdown",
		Description: "Your own Markdown notes about the user, as manage_notes keeps them."},
		t.readNotes)
	s.AddPrompt(&sdk.Prompt{Name: sessionStartPrompt, Title: "Start a session with what is remembered",
		Description: "Opens a conversation with what is remembered of the user: key insights, your notes, and the summaries of the recent sessions."},
		t.sessionStart)
}

func (t *handlers) readProfile(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	user, err := t.user()
	if err != nil {
		return nil, toolError(err)
	}
	text := ""
	p, err := t.svc.FindProfile(ctx, user)
	switch {
	case err == nil:
		text = p.Text
	case agentmem.ErrorCode(err) != agentmem.ENOTFOUND:
		return nil, toolError(err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: profileURI, MIMEType: "text/markdown", Text: text}}}, nil
}

func (t *handlers) readNotes(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	user, err := t.user()
	if err != nil {
		return nil, toolError(err)
	}
	n, err := t.svc.FindNotes(ctx, user, t.opt.Agent)
	if err != nil {
		return nil, toolError(err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: notesURI, MIMEType: "text/markdown", Text: n.Content}}}, nil
}

// changes tells the subscribers of the profile and the notes when either
// changed since the server last looked, by its own tools or elsewhere
// (reflection rewrites the profile in the background; another client may
// edit the notes). It looks after every tool call while a resource has a
// subscriber: a subscriber learns of a change at its next call at the
// latest.
func (t *handlers) changes(ctx context.Context, user string) {
	t.mu.Lock()
	watched := t.subscriptions > 0
	t.mu.Unlock()
	if t.server == nil || !watched {
		return // nobody to tell: no reads added to the call
	}
	versions := map[string]int64{}
	p, err := t.svc.FindProfile(ctx, user)
	switch {
	case err == nil:
		versions[profileURI] = int64(p.Version)
	case agentmem.ErrorCode(err) == agentmem.ENOTFOUND:
		versions[profileURI] = 0
	}
	if n, err := t.svc.FindNotes(ctx, user, t.opt.Agent); err == nil {
		versions[notesURI] = n.Version
	}
	t.mu.Lock()
	first := t.seen == nil
	if first {
		t.seen = map[string]int64{}
	}
	var changed []string
	for uri, v := range versions { // a read that failed changes nothing
		if !first && v != t.seen[uri] {
			changed = append(changed, uri)
		}
		t.seen[uri] = v
	}
	t.mu.Unlock()
	for _, uri := range changed {
		t.updated(ctx, uri)
	}
}

// wrote tells the subscribers of a resource this server has just changed
// to version that it changed, and notes the version, so that changes
// does not tell them again.
func (t *handlers) wrote(ctx context.Context, uri string, version int64) {
	t.mu.Lock()
	if t.seen != nil {
		t.seen[uri] = version
	}
	t.mu.Unlock()
	t.updated(ctx, uri)
}

// updated tells the subscribers of a resource that it changed (with none,
// it does nothing).
func (t *handlers) updated(ctx context.Context, uri string) {
	t.mu.Lock()
	watched := t.subscriptions > 0
	t.mu.Unlock()
	if t.server == nil || !watched {
		return
	}
	if err := t.server.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil && t.opt.Log != nil {
		t.opt.Log.WarnContext(ctx, "mcp: resource update not sent", "uri", uri, agentmem.LogErr, err)
	}
}

// sessionStart answers the session-start prompt: the initialisation
// block of the agent's active session (opened when there is none).
func (t *handlers) sessionStart(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	user, err := t.user()
	if err != nil {
		return nil, toolError(err)
	}
	thread, err := agentmem.ThreadOrSession(ctx, t.svc, user, t.opt.Agent, "")
	if err != nil {
		return nil, toolError(err)
	}
	off, on := false, true
	c, err := t.svc.BuildContext(ctx, user, thread, agentmem.ContextRequest{Format: agentmem.FormatText,
		Include: &agentmem.ContextInclude{System: &off, Init: &on, Summary: &off, Memories: &off, Messages: &off}})
	if err != nil {
		return nil, toolError(err)
	}
	block := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c.Text), "### Active Conversation"))
	text := "This conversation continues your relationship with the user. Nothing is remembered of them yet: learn who they are, and use remember for what lasts."
	if block != "" {
		text = "This conversation continues your relationship with the user. What you remember of them:\n\n" + block +
			"\n\nUse it without reciting it; call retrieve_user_facts for anything more specific."
	}
	return &sdk.GetPromptResult{Description: "What is remembered of the user, for the start of a session.",
		Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
}
