package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"

	"github.com/agentmem/agentmem"
)

// The ThreadService over REST: threads, messages, elements, sessions,
// contexts, reflections, and thread exports and imports.

func threadPath(userID string, rest ...string) []string {
	return append([]string{"v1", "users", userID, "threads"}, rest...)
}

// CreateThread implements agentmem.ThreadService: POST …/threads.
func (c *Client) CreateThread(ctx context.Context, userID string, t *agentmem.Thread) error {
	in := struct {
		ID       string          `json:"id,omitempty"`
		AgentID  string          `json:"agent_id,omitempty"`
		Title    string          `json:"title,omitempty"`
		Metadata json.RawMessage `json:"metadata,omitempty"`
		Tags     []string        `json:"tags,omitempty"`
	}{t.ID, t.AgentID, t.Title, t.Metadata, t.Tags}
	var out agentmem.Thread
	if err := c.do(ctx, call{method: http.MethodPost, path: threadPath(userID), in: in, out: &out}); err != nil {
		return err
	}
	*t = out
	return nil
}

// FindThreadByID implements agentmem.ThreadService: GET …/threads/{thread}.
func (c *Client) FindThreadByID(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodGet, path: threadPath(userID, threadID), out: &out})
}

// FindThreads implements agentmem.ThreadService: GET …/threads with
// agent_id (sent also when empty: threads without an agent), status,
// deleted, tag (once per tag), q (Title), since (UpdatedSince), until
// (UpdatedBefore), limit and cursor. IncludeDeleted has no parameter
// (EINVALID).
func (c *Client) FindThreads(ctx context.Context, userID string, f agentmem.ThreadFilter) ([]*agentmem.Thread, string, error) {
	if f.IncludeDeleted {
		return nil, "", notInAPI("ThreadFilter.IncludeDeleted")
	}
	q := url.Values{}
	setPtr(q, "agent_id", f.AgentID)
	setPtr(q, "status", f.Status)
	if f.Deleted {
		q.Set("deleted", "true")
	}
	for _, tag := range f.Tags {
		q.Add("tag", tag)
	}
	setPtr(q, "q", f.Title)
	setTime(q, "since", f.UpdatedSince)
	setTime(q, "until", f.UpdatedBefore)
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Thread](ctx, c, threadPath(userID), q)
}

// AllThreads iterates over the user's threads that f selects, from
// f.Cursor on, fetching page after page.
func (c *Client) AllThreads(ctx context.Context, userID string, f agentmem.ThreadFilter) iter.Seq2[*agentmem.Thread, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Thread, string, error) {
		f.Cursor = cursor
		return c.FindThreads(ctx, userID, f)
	})
}

// UpdateThread implements agentmem.ThreadService: PATCH
// …/threads/{thread}.
func (c *Client) UpdateThread(ctx context.Context, userID, threadID string, upd agentmem.ThreadUpdate) (*agentmem.Thread, error) {
	// Unset fields are absent rather than null: the same to the server,
	// and the request says only what changes.
	in := struct {
		Title    *string          `json:"title,omitempty"`
		Metadata *json.RawMessage `json:"metadata,omitempty"`
		Tags     *[]string        `json:"tags,omitempty"`
		AgentID  *string          `json:"agent_id,omitempty"`
		Status   *string          `json:"status,omitempty"`
	}{upd.Title, upd.Metadata, upd.Tags, upd.AgentID, upd.Status}
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPatch, path: threadPath(userID, threadID), in: in, out: &out})
}

// DeleteThread implements agentmem.ThreadService: DELETE
// …/threads/{thread}, with permanent=true when permanent.
func (c *Client) DeleteThread(ctx context.Context, userID, threadID string, permanent bool) error {
	q := url.Values{}
	if permanent {
		q.Set("permanent", "true")
	}
	return c.do(ctx, call{method: http.MethodDelete, path: threadPath(userID, threadID), query: q})
}

// RestoreThread implements agentmem.ThreadService: POST
// …/threads/{thread}/restore. It is idempotent, so it is retried.
func (c *Client) RestoreThread(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPost, path: threadPath(userID, threadID, "restore"), idempotent: true, out: &out})
}

// EndThread implements agentmem.ThreadService: POST
// …/threads/{thread}/end. It is idempotent, so it is retried.
func (c *Client) EndThread(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPost, path: threadPath(userID, threadID, "end"), idempotent: true, out: &out})
}

// AppendMessages implements agentmem.ThreadService: POST
// …/threads/{thread}/messages, with the Idempotency-Key header when
// idempotencyKey is set; only then is the append retried.
func (c *Client) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, idempotencyKey string) ([]*agentmem.Message, error) {
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	in := struct {
		Messages []*agentmem.Message `json:"messages"`
	}{msgs}
	var out struct {
		Messages []*agentmem.Message `json:"messages"`
	}
	err := c.do(ctx, call{method: http.MethodPost, path: threadPath(userID, threadID, "messages"), header: h,
		idempotent: idempotencyKey != "", in: in, out: &out})
	return out.Messages, err
}

// FindMessages implements agentmem.ThreadService: GET
// …/threads/{thread}/messages with after_seq, before_seq, order=desc,
// limit and cursor. IncludeDeleted has no parameter (EINVALID).
func (c *Client) FindMessages(ctx context.Context, userID, threadID string, f agentmem.MessageFilter) ([]*agentmem.Message, string, error) {
	if f.IncludeDeleted {
		return nil, "", notInAPI("MessageFilter.IncludeDeleted")
	}
	q := url.Values{}
	setNonZero(q, "after_seq", itoa(f.AfterSeq))
	setNonZero(q, "before_seq", itoa(f.BeforeSeq))
	if f.Desc {
		q.Set("order", "desc")
	}
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Message](ctx, c, threadPath(userID, threadID, "messages"), q)
}

// AllMessages iterates over a thread's messages that f selects, in f's
// order, from f.Cursor on.
func (c *Client) AllMessages(ctx context.Context, userID, threadID string, f agentmem.MessageFilter) iter.Seq2[*agentmem.Message, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Message, string, error) {
		f.Cursor = cursor
		return c.FindMessages(ctx, userID, threadID, f)
	})
}

// CreateElement implements agentmem.ThreadService: POST
// …/threads/{thread}/elements; e is filled in as stored.
func (c *Client) CreateElement(ctx context.Context, userID, threadID string, e *agentmem.Element) error {
	var out agentmem.Element
	if err := c.do(ctx, call{method: http.MethodPost, path: threadPath(userID, threadID, "elements"), in: e, out: &out}); err != nil {
		return err
	}
	*e = out
	return nil
}

// FindElements implements agentmem.ThreadService: GET
// …/threads/{thread}/elements with message_id, limit and cursor. The
// API cannot select the elements of no message (MessageID pointing to
// "") nor read a deleted thread (IncludeDeleted): EINVALID.
func (c *Client) FindElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) ([]*agentmem.Element, string, error) {
	switch {
	case f.MessageID != nil && *f.MessageID == "":
		return nil, "", notInAPI(`ElementFilter.MessageID ""`)
	case f.IncludeDeleted:
		return nil, "", notInAPI("ElementFilter.IncludeDeleted")
	}
	q := url.Values{}
	setPtr(q, "message_id", f.MessageID)
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Element](ctx, c, threadPath(userID, threadID, "elements"), q)
}

// AllElements iterates over a thread's elements that f selects.
func (c *Client) AllElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) iter.Seq2[*agentmem.Element, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Element, string, error) {
		f.Cursor = cursor
		return c.FindElements(ctx, userID, threadID, f)
	})
}

func sessionPath(userID, agentID string) []string {
	return []string{"v1", "users", userID, "agents", agentID, "session"}
}

// FindSession implements agentmem.ThreadService: GET
// …/agents/{agent}/session.
func (c *Client) FindSession(ctx context.Context, userID, agentID string) (*agentmem.Session, error) {
	var out agentmem.Session
	return &out, c.do(ctx, call{method: http.MethodGet, path: sessionPath(userID, agentID), out: &out})
}

// OpenSession implements agentmem.ThreadService: GET
// …/agents/{agent}/session?create=true, which answers 201 when it
// created the session.
func (c *Client) OpenSession(ctx context.Context, userID, agentID string) (*agentmem.Session, bool, error) {
	var out agentmem.Session
	var status int
	err := c.do(ctx, call{method: http.MethodGet, path: sessionPath(userID, agentID), query: url.Values{"create": {"true"}}, out: &out, status: &status})
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// SetSession implements agentmem.ThreadService: PUT
// …/agents/{agent}/session.
func (c *Client) SetSession(ctx context.Context, userID, agentID, threadID string) (*agentmem.Session, error) {
	in := struct {
		ThreadID string `json:"thread_id"`
	}{threadID}
	var out agentmem.Session
	return &out, c.do(ctx, call{method: http.MethodPut, path: sessionPath(userID, agentID), in: in, out: &out})
}

// BuildContext implements agentmem.ThreadService: POST
// …/threads/{thread}/context. Building reads the thread (the summary job
// it may queue is queued once), so it is retried.
func (c *Client) BuildContext(ctx context.Context, userID, threadID string, req agentmem.ContextRequest) (*agentmem.Context, error) {
	var out agentmem.Context
	if err := c.do(ctx, call{method: http.MethodPost, path: threadPath(userID, threadID, "context"), idempotent: true, in: req, out: &out}); err != nil {
		return nil, err
	}
	out.Format = out.Telemetry.Format // not in the JSON but for the telemetry's copy
	return &out, nil
}

// BeginTurn implements agentmem.ThreadService: POST
// /v1/users/{user}/turns. It is not retried: the turn's messages may have
// been stored before an answer was lost (a second call with the same
// history stores nothing again, and builds the context anew).
func (c *Client) BeginTurn(ctx context.Context, userID string, req agentmem.TurnRequest) (*agentmem.Turn, error) {
	var out agentmem.Turn
	if err := c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "turns"}, in: req, out: &out}); err != nil {
		return nil, err
	}
	if out.Context != nil {
		out.Context.Format = out.Context.Telemetry.Format // not in the JSON but for the telemetry's copy
	}
	return &out, nil
}

// FindReflection implements agentmem.ThreadService: GET
// …/threads/{thread}/reflection.
func (c *Client) FindReflection(ctx context.Context, userID, threadID string) (*agentmem.Reflection, error) {
	var out agentmem.Reflection
	return &out, c.do(ctx, call{method: http.MethodGet, path: threadPath(userID, threadID, "reflection"), out: &out})
}

// RetryReflection implements agentmem.ThreadService: POST
// …/threads/{thread}/reflection/retry. It is not retried: a second call
// after a lost answer is a 409 (queued already), not a second job.
func (c *Client) RetryReflection(ctx context.Context, userID, threadID string) (*agentmem.Reflection, error) {
	var out agentmem.Reflection
	return &out, c.do(ctx, call{method: http.MethodPost, path: threadPath(userID, threadID, "reflection", "retry"), out: &out})
}

// ExportThread implements agentmem.ThreadService: GET
// …/threads/{thread}/export.
func (c *Client) ExportThread(ctx context.Context, userID, threadID string) (*agentmem.ThreadExport, error) {
	var out agentmem.ThreadExport
	return &out, c.do(ctx, call{method: http.MethodGet, path: threadPath(userID, threadID, "export"), out: &out})
}

// ExportThreadMarkdown returns a thread rendered as Markdown: GET
// …/threads/{thread}/export?format=markdown.
func (c *Client) ExportThreadMarkdown(ctx context.Context, userID, threadID string) (string, error) {
	var out string
	err := c.do(ctx, call{method: http.MethodGet, path: threadPath(userID, threadID, "export"),
		query: url.Values{"format": {"markdown"}}, accept: "text/markdown", out: &out})
	return out, err
}

// ImportThread implements agentmem.ThreadService: POST
// …/threads/import.
func (c *Client) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (*agentmem.Thread, error) {
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPost, path: threadPath(userID, "import"), in: x, out: &out})
}
