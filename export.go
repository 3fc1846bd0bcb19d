package agentmem

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ExportVersion is the version of the JSON export format written by
// ExportThread. Import accepts this version and older ones.
const ExportVersion = 1

// ThreadExport is a thread with all its messages and elements: the JSON
// export format, and what ImportThread takes. Importing an export
// reproduces the thread's fields, its messages (ids, order, roles, content,
// tool calls, metadata, times) and its elements.
type ThreadExport struct {
	Version  int        `json:"version"`
	Thread   *Thread    `json:"thread"`
	Messages []*Message `json:"messages"`
	Elements []*Element `json:"elements"`
}

// UserExport is everything stored for one user.
type UserExport struct {
	Version    int             `json:"version"`
	UserID     string          `json:"user_id"`
	ExportedAt time.Time       `json:"exported_at"`
	Threads    []*ThreadExport `json:"threads"`
	// Sessions and Notes are those of the agents of the user's threads.
	Sessions []*Session `json:"sessions"`
	Notes    []*Notes   `json:"notes"`
	// Memories holds every memory, invalidated ones too; Profiles every
	// version, newest first; Entities every entity.
	Memories []*Memory  `json:"memories"`
	Profiles []*Profile `json:"profiles"`
	Entities []*Entity  `json:"entities"`
}

// Validate checks an export about to be imported: the version is known,
// the thread is valid, and the messages are valid and in strictly
// increasing seq order.
func (x *ThreadExport) Validate() error {
	if x.Version < 0 || x.Version > ExportVersion {
		return Errorf(EINVALID, "version %d is not supported; the newest is %d.", x.Version, ExportVersion)
	}
	if x.Thread == nil {
		return Errorf(EINVALID, "thread is required.")
	}
	if err := x.Thread.Validate(); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"thread.created_at", x.Thread.CreatedAt}, {"thread.updated_at", x.Thread.UpdatedAt}} {
		if err := ValidateTime(f.name, f.t); err != nil {
			return err
		}
	}
	if x.Thread.EndedAt != nil {
		if err := ValidateTime("thread.ended_at", *x.Thread.EndedAt); err != nil {
			return err
		}
	}
	if len(x.Messages) > 0 {
		if err := ValidateMessages(x.Messages, 0); err != nil {
			return err
		}
	}
	for i, m := range x.Messages {
		if m.Seq != 0 && i > 0 && m.Seq <= x.Messages[i-1].Seq {
			return Errorf(EINVALID, "messages[%d].seq %d is not after the previous seq.", i, m.Seq)
		}
	}
	for i, e := range x.Elements {
		if e == nil {
			return Errorf(EINVALID, "elements[%d] is null.", i)
		}
		if err := e.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// ImportStore imports exports.
type ImportStore interface {
	// ImportThread stores x as a new thread of the user, atomically: the
	// thread keeps its ID (a new one is assigned when empty), fields and
	// times; its messages are renumbered 1..n in the given order keeping
	// their IDs, content and times; elements keep their message links.
	// Returns EINVALID for a bad export and ECONFLICT if the user already has
	// a thread with that ID or a message ID is taken.
	ImportThread(ctx context.Context, userID string, x *ThreadExport) (*Thread, error)
}

// ExportThread reads a whole thread, its messages in seq order and its
// elements, from s. Returns ENOTFOUND if the thread does not exist.
func ExportThread(ctx context.Context, s interface {
	ThreadStore
	MessageStore
	ElementStore
}, userID, threadID string) (*ThreadExport, error) {
	t, err := s.FindThreadByID(ctx, userID, threadID)
	if err != nil {
		return nil, err
	}
	return exportThread(ctx, s, t)
}

func exportThread(ctx context.Context, s interface {
	MessageStore
	ElementStore
}, t *Thread) (*ThreadExport, error) {
	x := &ThreadExport{Version: ExportVersion, Thread: t, Messages: []*Message{}, Elements: []*Element{}}
	for cursor := ""; ; {
		page, next, err := s.FindMessages(ctx, t.UserID, t.ID, MessageFilter{Limit: MaxPageSize, Cursor: cursor, BeforeSeq: t.LastSeq + 1, IncludeDeleted: t.DeletedAt != nil})
		if err != nil {
			return nil, err
		}
		x.Messages = append(x.Messages, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	for cursor := ""; ; {
		page, next, err := s.FindElements(ctx, t.UserID, t.ID, ElementFilter{Limit: MaxPageSize, Cursor: cursor, IncludeDeleted: t.DeletedAt != nil})
		if err != nil {
			return nil, err
		}
		x.Elements = append(x.Elements, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	return x, nil
}

// ExportUser reads everything stored for a user, soft-deleted threads
// included, and calls fn with each thread in turn (newest updated first)
// so that a caller can stream a large export. It returns the user's active
// sessions.
func ExportUser(ctx context.Context, s interface {
	ThreadStore
	MessageStore
	ElementStore
}, userID string, fn func(*ThreadExport) error) error {
	for cursor := ""; ; {
		threads, next, err := s.FindThreads(ctx, userID, ThreadFilter{IncludeDeleted: true, Limit: 100, Cursor: cursor})
		if err != nil {
			return err
		}
		for _, t := range threads {
			x, err := exportThread(ctx, s, t)
			if err != nil {
				return err
			}
			if err := fn(x); err != nil {
				return err
			}
		}
		if cursor = next; cursor == "" {
			return nil
		}
	}
}

var roleIcons = map[string]string{RoleUser: "👤", RoleAssistant: "🤖", RoleSystem: "⚙️", RoleTool: "🔧"}

// Markdown renders the export in seed 002's layout: a title, the thread's
// facts, then one section per message separated by rules.
func (x *ThreadExport) Markdown() string {
	var b strings.Builder
	t := x.Thread
	title := t.Title
	if title == "" {
		title = "Untitled conversation"
	}
	fmt.Fprintf(&b, "# %s\n**Thread ID**: %s\n**Created**: %s\n**Updated**: %s\n**Messages**: %d\n",
		title, t.ID, t.CreatedAt.Format(time.RFC3339), t.UpdatedAt.Format(time.RFC3339), len(x.Messages))
	if t.AgentID != "" {
		fmt.Fprintf(&b, "**Agent**: %s\n", t.AgentID)
	}
	b.WriteString("\n---\n\n")
	for _, m := range x.Messages {
		role := strings.ToUpper(m.Role[:1]) + m.Role[1:]
		fmt.Fprintf(&b, "## %s %s", roleIcons[m.Role], role)
		if m.Name != "" {
			fmt.Fprintf(&b, " (%s)", m.Name)
		}
		b.WriteString("\n\n")
		if m.Content != "" {
			b.WriteString(m.Content)
			b.WriteString("\n\n")
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "Tool call `%s`: `%s`\n\n", c.Function.Name, c.Function.Arguments)
		}
		b.WriteString("---\n\n")
	}
	return b.String()
}

// PrepareImport does the work of ImportThread that needs no database, for
// every backend: it validates x, moves it to userID, fills in IDs and
// times that are missing (now), renumbers the messages 1..n, recounts their
// tokens with tc, and returns the thread to insert. The thread is live
// (not deleted) whatever the export said.
func PrepareImport(userID string, x *ThreadExport, now time.Time, tc TokenCounter) (*Thread, error) {
	if x == nil || x.Thread == nil {
		return nil, Errorf(EINVALID, "thread is required.")
	}
	t := *x.Thread
	t.UserID = userID
	x.Thread = &t
	if err := x.Validate(); err != nil {
		return nil, err
	}
	if t.ID == "" {
		t.ID = NewID()
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	t.CreatedAt, t.UpdatedAt = Timestamp(t.CreatedAt), Timestamp(t.UpdatedAt)
	t.DeletedAt = nil
	if t.Status == ThreadEnded {
		if t.EndedAt == nil {
			t.EndedAt = &t.UpdatedAt
		}
		ended := Timestamp(*t.EndedAt)
		t.EndedAt = &ended
	} else {
		t.EndedAt = nil
	}
	for i, m := range x.Messages {
		m.ThreadID, m.Seq = t.ID, int64(i+1)
		if m.ID == "" {
			m.ID = NewID()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = t.CreatedAt
		}
		m.CreatedAt = Timestamp(m.CreatedAt)
		m.TokenCount = tc.CountTokens(m.TokenText())
	}
	t.MessageCount, t.LastSeq = int64(len(x.Messages)), int64(len(x.Messages))
	for _, e := range x.Elements {
		e.ThreadID = t.ID
		if e.ID == "" {
			e.ID = NewID()
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		e.CreatedAt = Timestamp(e.CreatedAt)
	}
	return &t, nil
}
