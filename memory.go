package agentmem

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Memory kinds.
const (
	MemoryFact    = "fact"    // a statement about the user: identity, preference, plan… (the default)
	MemoryInsight = "insight" // learned by reflecting on a thread
)

// Memory sources.
const (
	SourceAPI       = "api"       // written by a client
	SourceExtracted = "extracted" // proposed by extraction from a thread's turns
)

// Memory operations, as recorded in a memory's history.
const (
	OpAdd        = "add"
	OpUpdate     = "update"
	OpInvalidate = "invalidate"
)

// Limits on memories.
const (
	MaxMemoryBytes = 8 << 10
	MaxCategory    = 100
)

// Memory is one long-term statement about a user. It carries where it came
// from (a thread and the seqs of its turns), when it holds (ValidFrom until
// InvalidAt; a contradicted memory is invalidated and SupersededBy names
// the newer one), and every change in its history.
type Memory struct {
	ID         string  `json:"id"`
	UserID     string  `json:"user_id"`
	Kind       string  `json:"kind"`     // MemoryFact (default) or MemoryInsight
	Text       string  `json:"text"`     // one self-contained statement
	Category   string  `json:"category"` // e.g. identity, preference, plan, family ("" when unknown)
	Confidence float64 `json:"confidence"`
	Importance float64 `json:"importance"`
	AgentID    string  `json:"agent_id,omitempty"`
	// Provenance: the thread and seqs it was drawn from (empty for a
	// memory written through the API without them).
	ThreadID string          `json:"thread_id,omitempty"`
	SeqFrom  int64           `json:"seq_from,omitempty"`
	SeqTo    int64           `json:"seq_to,omitempty"`
	Source   string          `json:"source"` // SourceAPI or SourceExtracted
	Metadata json.RawMessage `json:"metadata"`
	Version  int             `json:"version"` // 1 when created, +1 per update

	ValidFrom    time.Time  `json:"valid_from"`
	InvalidAt    *time.Time `json:"invalid_at,omitempty"`
	SupersededBy string     `json:"superseded_by,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// Valid reports whether the memory holds (is not invalidated).
func (m *Memory) Valid() bool { return m.InvalidAt == nil }

// Validate checks a memory about to be created and fills in the defaults
// of Kind (fact), Source (api) and Metadata ({}). Text is required, at
// most MaxMemoryBytes of valid UTF-8; Confidence and Importance lie
// within [0, 1].
func (m *Memory) Validate() error {
	if err := ValidateUserID(m.UserID); err != nil {
		return err
	}
	if m.ID != "" {
		if err := ValidateID("id", m.ID); err != nil {
			return err
		}
	}
	switch m.Kind {
	case "":
		m.Kind = MemoryFact
	case MemoryFact, MemoryInsight:
	default:
		return Errorf(EINVALID, "kind must be %q or %q, not %q.", MemoryFact, MemoryInsight, m.Kind)
	}
	if m.Source == "" {
		m.Source = SourceAPI
	}
	if err := validateMemoryText(m.Text); err != nil {
		return err
	}
	if err := validateCategory(m.Category); err != nil {
		return err
	}
	if err := validateUnit("confidence", m.Confidence); err != nil {
		return err
	}
	if err := validateUnit("importance", m.Importance); err != nil {
		return err
	}
	if m.AgentID != "" {
		if err := ValidateID("agent_id", m.AgentID); err != nil {
			return err
		}
	}
	if m.ThreadID != "" {
		if err := ValidateID("thread_id", m.ThreadID); err != nil {
			return err
		}
	}
	if m.SeqFrom < 0 || m.SeqTo < m.SeqFrom {
		return Errorf(EINVALID, "seq_from and seq_to must make a range (0 ≤ seq_from ≤ seq_to).")
	}
	if err := ValidateTime("valid_from", m.ValidFrom); err != nil {
		return err
	}
	var err error
	m.Metadata, err = NormalizeMetadata("metadata", m.Metadata)
	return err
}

func validateMemoryText(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return Errorf(EINVALID, "text is required.")
	case len(s) > MaxMemoryBytes:
		return Errorf(ETOOLARGE, "text is %d bytes; the limit is %d bytes.", len(s), MaxMemoryBytes)
	}
	return ValidateText("text", s)
}

func validateCategory(s string) error {
	if utf8.RuneCountInString(s) > MaxCategory {
		return Errorf(EINVALID, "category is longer than %d characters.", MaxCategory)
	}
	return ValidateText("category", s)
}

func validateUnit(field string, v float64) error {
	if !(v >= 0 && v <= 1) { // also refuses NaN
		return Errorf(EINVALID, "%s must be between 0 and 1.", field)
	}
	return nil
}

// MemoryUpdate holds the fields of a memory that an update may change; nil
// fields stay as they are.
type MemoryUpdate struct {
	Text       *string          `json:"text"`
	Category   *string          `json:"category"`
	Confidence *float64         `json:"confidence"`
	Importance *float64         `json:"importance"`
	Metadata   *json.RawMessage `json:"metadata"`
	// Provenance of the change, when it came from a thread.
	ThreadID string `json:"-"`
	SeqFrom  int64  `json:"-"`
	SeqTo    int64  `json:"-"`
	// Reason is recorded in the history ("" for none).
	Reason string `json:"reason"`
}

// Validate checks the fields that are set.
func (u *MemoryUpdate) Validate() error {
	if u.Text != nil {
		if err := validateMemoryText(*u.Text); err != nil {
			return err
		}
	}
	if u.Category != nil {
		if err := validateCategory(*u.Category); err != nil {
			return err
		}
	}
	if u.Confidence != nil {
		if err := validateUnit("confidence", *u.Confidence); err != nil {
			return err
		}
	}
	if u.Importance != nil {
		if err := validateUnit("importance", *u.Importance); err != nil {
			return err
		}
	}
	if u.Metadata != nil {
		m, err := NormalizeMetadata("metadata", *u.Metadata)
		if err != nil {
			return err
		}
		u.Metadata = &m
	}
	return ValidateText("reason", u.Reason)
}

// MemoryChange is one entry of a memory's history: what the memory was
// after an operation, and why.
type MemoryChange struct {
	MemoryID   string    `json:"memory_id"`
	Version    int       `json:"version"`
	Op         string    `json:"op"` // OpAdd, OpUpdate or OpInvalidate
	Text       string    `json:"text"`
	Category   string    `json:"category"`
	Confidence float64   `json:"confidence"`
	Importance float64   `json:"importance"`
	ThreadID   string    `json:"thread_id,omitempty"`
	SeqFrom    int64     `json:"seq_from,omitempty"`
	SeqTo      int64     `json:"seq_to,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	At         time.Time `json:"at"`
}

// MemoryFilter selects one user's memories for FindMemories, newest
// updated first.
type MemoryFilter struct {
	Kind     *string
	Category *string
	AgentID  *string
	ThreadID *string
	// IncludeInvalid also returns invalidated memories.
	IncludeInvalid bool
	UpdatedAfter   *time.Time
	Limit          int
	Cursor         string
}

// MemoryStore stores memories and their history.
type MemoryStore interface {
	// CreateMemory stores a new memory (ID assigned when empty; Version 1;
	// ValidFrom defaults to now) and its history entry "add". Returns
	// EINVALID for bad fields and ECONFLICT if the ID is taken.
	CreateMemory(ctx context.Context, m *Memory) error

	// FindMemoryByID returns a memory of the user, invalidated or not.
	// Returns ENOTFOUND if there is none.
	FindMemoryByID(ctx context.Context, userID, id string) (*Memory, error)

	// FindMemories returns a page of the user's memories, newest updated
	// first, and the next cursor.
	FindMemories(ctx context.Context, userID string, f MemoryFilter) ([]*Memory, string, error)

	// UpdateMemory applies upd as the memory's next version and records it
	// in the history ("update"). Returns ENOTFOUND if there is no such
	// memory and ECONFLICT if it is invalidated.
	UpdateMemory(ctx context.Context, userID, id string, upd MemoryUpdate) (*Memory, error)

	// InvalidateMemory marks a memory as no longer holding from now, names
	// the memory that supersedes it ("" for none), and records it in the
	// history ("invalidate"). Invalidating an invalidated memory changes
	// nothing. Returns ENOTFOUND if there is no such memory.
	InvalidateMemory(ctx context.Context, userID, id, supersededBy, reason string) (*Memory, error)

	// DeleteMemory removes a memory, its history and its vectors. Returns
	// ENOTFOUND if there is none.
	DeleteMemory(ctx context.Context, userID, id string) error

	// FindMemoryHistory returns a memory's history, oldest first. Returns
	// ENOTFOUND if there is no such memory.
	FindMemoryHistory(ctx context.Context, userID, id string) ([]*MemoryChange, error)
}
