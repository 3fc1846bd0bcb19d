package agentmem

import (
	"context"
	"time"
)

// ExportVersion is the version of the JSON export format of a user's
// export. Import accepts this version and older ones: version 1 user
// exports have memories without history, the notes' current versions
// only, and entities without references; version 2 exports have memories
// without sources (an import gives each its provenance as its one
// source).
const ExportVersion = 3

// ThreadExportVersion is the version ExportThread writes: a thread's
// export has not changed since version 2 (version 3 changed memories
// alone), and an older agentmem imports it. A thread's import accepts any
// version up to ExportVersion.
const ThreadExportVersion = 2

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

// UserExport is everything stored for one user: what an import restores.
// Vectors, windows, chunks and summaries are not in it: they are derived,
// and an import queues their indexing again.
type UserExport struct {
	Version    int             `json:"version"`
	UserID     string          `json:"user_id"`
	ExportedAt time.Time       `json:"exported_at"`
	Threads    []*ThreadExport `json:"threads"`
	// Sessions are the active sessions of the user's agents.
	Sessions []*Session `json:"sessions"`
	// Notes holds every version of every agent's notes, by agent, oldest
	// version first.
	Notes []*Notes `json:"notes"`
	// Memories holds every memory, invalidated ones too, each with its
	// history; Profiles every version, newest first; Entities every
	// entity with the threads that refer to it; Reflections what
	// reflection found in each thread.
	Memories    []*MemoryExport `json:"memories"`
	Profiles    []*Profile      `json:"profiles"`
	Entities    []*EntityExport `json:"entities"`
	Reflections []*Reflection   `json:"reflections"`
}

// MemoryExport is a memory with its history, oldest change first.
type MemoryExport struct {
	*Memory
	History []*MemoryChange `json:"history,omitempty"`
}

// EntityExport is an entity with the references of threads to it.
type EntityExport struct {
	*Entity
	References []*EntityRef `json:"references,omitempty"`
}

// The formats of an export (ExportOptions.Format; the REST API's
// ?format=, the command line's --format).
const (
	ExportJSON     = "json"     // what an import takes (the default)
	ExportMarkdown = "markdown" // to read
)

// CheckExportFormat returns EINVALID unless format is ExportJSON,
// ExportMarkdown or "" (ExportJSON).
func CheckExportFormat(format string) error {
	switch format {
	case "", ExportJSON, ExportMarkdown:
		return nil
	}
	return Errorf(EINVALID, "format must be %s or %s, not %q.", ExportJSON, ExportMarkdown, format)
}

// ExportOptions tune a user's export.
type ExportOptions struct {
	// IncludeDeleted exports soft-deleted threads too (they are left out
	// by default).
	IncludeDeleted bool
	// Format is "json" (the default: what an import takes) or "markdown"
	// (to read).
	Format string
}

// Validate checks an export about to be imported: the version is known,
// the thread is valid, its times are within the years 1 to 9999, its
// counts are not negative, the messages are valid (however many: an
// export holds a whole thread) and in strictly increasing seq order, and
// the elements are valid, each with an ID of its own and attached to a
// message of the thread (or to none). Errors name the field:
// "messages[3].seq …", "elements[0].message_id …".
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
	for _, f := range x.threadTimes() {
		if err := ValidateTime(f.name, f.t); err != nil {
			return err
		}
	}
	if x.Thread.MessageCount < 0 || x.Thread.LastSeq < 0 {
		return Errorf(EINVALID, "thread.message_count and thread.last_seq must not be negative.")
	}
	if err := validateMessages(x.Messages, 0); err != nil {
		return err
	}
	messages := make(map[string]bool, len(x.Messages))
	for i, m := range x.Messages {
		switch {
		case m.Seq < 0:
			return Errorf(EINVALID, "messages[%d].seq must not be negative, not %d.", i, m.Seq)
		case m.Seq != 0 && i > 0 && m.Seq <= x.Messages[i-1].Seq:
			return Errorf(EINVALID, "messages[%d].seq %d is not after the previous seq.", i, m.Seq)
		case m.TokenCount < 0:
			return Errorf(EINVALID, "messages[%d].token_count must not be negative, not %d.", i, m.TokenCount)
		}
		if m.ID != "" {
			messages[m.ID] = true
		}
	}
	elements := make(map[string]int, len(x.Elements))
	for i, e := range x.Elements {
		if e == nil {
			return Errorf(EINVALID, "elements[%d] is null.", i)
		}
		if err := e.Validate(); err != nil {
			return Errorf(ErrorCode(err), "elements[%d]: %s", i, ErrorMessage(err))
		}
		if e.MessageID != "" && !messages[e.MessageID] {
			return Errorf(EINVALID, "elements[%d].message_id %q names no message of the thread.", i, e.MessageID)
		}
		if e.ID == "" {
			continue
		}
		if first, ok := elements[e.ID]; ok {
			return Errorf(EINVALID, "elements[%d].id %q is also the ID of elements[%d].", i, e.ID, first)
		}
		elements[e.ID] = i
	}
	return nil
}

// namedTime is a time of a record and the name of its field.
type namedTime struct {
	name string
	t    time.Time
}

// threadTimes returns the times of x's thread that are set.
func (x *ThreadExport) threadTimes() []namedTime {
	t := x.Thread
	out := []namedTime{{"thread.created_at", t.CreatedAt}, {"thread.updated_at", t.UpdatedAt}}
	if t.EndedAt != nil {
		out = append(out, namedTime{"thread.ended_at", *t.EndedAt})
	}
	if t.DeletedAt != nil {
		out = append(out, namedTime{"thread.deleted_at", *t.DeletedAt})
	}
	return out
}

// validatePast checks times of when something happened, given by a
// client: each is zero (unset) or within the years 1 to 9999 (see
// ValidateTime) and not in the future of now (see ValidateNotFuture).
func validatePast(now time.Time, times ...namedTime) error {
	for _, f := range times {
		if err := ValidateTime(f.name, f.t); err != nil {
			return err
		}
		if err := ValidateNotFuture(f.name, f.t, now); err != nil {
			return err
		}
	}
	return nil
}

// pastPtr is the namedTime of a time that may be unset (nil).
func pastPtr(name string, t *time.Time) namedTime {
	if t == nil {
		return namedTime{name, time.Time{}}
	}
	return namedTime{name, *t}
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
	x := &ThreadExport{Version: ThreadExportVersion, Thread: t, Messages: []*Message{}, Elements: []*Element{}}
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

// ExportUser reads the threads of a user (soft-deleted ones with
// opt.IncludeDeleted), and calls fn with each in turn, with its messages
// and elements (newest updated first), so that a caller can stream a
// large export.
func ExportUser(ctx context.Context, s interface {
	ThreadStore
	MessageStore
	ElementStore
}, userID string, opt ExportOptions, fn func(*ThreadExport) error) error {
	for cursor := ""; ; {
		threads, next, err := s.FindThreads(ctx, userID, ThreadFilter{IncludeDeleted: opt.IncludeDeleted, Limit: 100, Cursor: cursor})
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
