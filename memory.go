package agentmem

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
// from (a thread and the seqs of its turns; Sources: every turn that said
// it), when it holds (ValidFrom until InvalidAt; a contradicted memory is
// invalidated and SupersededBy names the newer one), and every change in
// its history.
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
	ThreadID string `json:"thread_id,omitempty"`
	SeqFrom  int64  `json:"seq_from,omitempty"`
	SeqTo    int64  `json:"seq_to,omitempty"`
	Source   string `json:"source"` // SourceAPI or SourceExtracted
	// Sources are every range of turns the memory was drawn from, in the
	// order they were added, each once: the first is where it was first
	// drawn from (the provenance above, until an update from a thread
	// moves it), then every turn that said it again (a repeat that
	// consolidation merged into it, see MemoryWrite.AddSource) or
	// refined it (an update from a thread). The provenance's range is
	// always among them while its thread exists: a thread's permanent
	// deletion removes its ranges (the provenance fields keep naming
	// it). Empty for a memory drawn from no thread.
	Sources  []ThreadRange   `json:"sources,omitempty"`
	Metadata json.RawMessage `json:"metadata"`
	// Version is 1 when created, +1 per change (an update or the
	// invalidation): the version of its newest history entry.
	Version int `json:"version"`

	ValidFrom    time.Time  `json:"valid_from"`
	InvalidAt    *time.Time `json:"invalid_at,omitempty"`
	SupersededBy string     `json:"superseded_by,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	// ProcessedAt is when an insight was built into the user's profile
	// (nil: not yet; see ProfileStore.PutProfile).
	ProcessedAt *time.Time `json:"processed_at,omitempty"`
}

// Valid reports whether the memory holds (is not invalidated).
func (m *Memory) Valid() bool { return m.InvalidAt == nil }

// Validate checks a memory about to be created and fills in the defaults
// of Kind (fact), Source (api) and Metadata ({}). Text is required, at
// most MaxMemoryBytes of valid UTF-8; Confidence and Importance lie
// within [0, 1]. Sources are checked and put in the form the stores keep
// (see normalizeSources).
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
	if err := m.normalizeSources(); err != nil {
		return err
	}
	if err := ValidateTime("valid_from", m.ValidFrom); err != nil {
		return err
	}
	var err error
	m.Metadata, err = NormalizeMetadata("metadata", m.Metadata)
	return err
}

// Provenance returns the range of turns the memory's provenance names
// (ThreadID, SeqFrom, SeqTo), and false when it names no thread.
func (m *Memory) Provenance() (ThreadRange, bool) {
	return ThreadRange{ThreadID: m.ThreadID, SeqFrom: m.SeqFrom, SeqTo: m.SeqTo}, m.ThreadID != ""
}

// AddSource appends r to the memory's Sources unless it is there already,
// and reports whether it did.
func (m *Memory) AddSource(r ThreadRange) bool {
	if slices.Contains(m.Sources, r) {
		return false
	}
	m.Sources = append(slices.Clip(m.Sources), r) // a copy of m shares none of it
	return true
}

// normalizeSources checks each of the memory's Sources (see
// ValidateSource) and puts them in the form the stores keep: each range
// once, in the order given, with the memory's provenance among them
// (first, when it was not).
func (m *Memory) normalizeSources() error {
	var out []ThreadRange
	if p, ok := m.Provenance(); ok && !slices.Contains(m.Sources, p) {
		out = append(out, p)
	}
	for i, r := range m.Sources {
		if err := ValidateSource(fmt.Sprintf("sources[%d]", i), r); err != nil {
			return err
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	m.Sources = out
	return nil
}

// ValidateSource checks a range of turns a memory was drawn from: a
// thread's ID and seqs that make a range (0 for both when the turns are
// not known). field names it in the error ("sources[2]").
func ValidateSource(field string, r ThreadRange) error {
	if err := ValidateID(field+".thread_id", r.ThreadID); err != nil {
		return err
	}
	if r.SeqFrom < 0 || r.SeqTo < r.SeqFrom {
		return Errorf(EINVALID, "%s.seq_from and seq_to must make a range (0 ≤ seq_from ≤ seq_to).", field)
	}
	return nil
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

// Prepare checks a memory about to be created (see Validate) and fills in
// what CreateMemory sets, for every backend: the ID when empty, Version 1,
// ValidFrom now when zero, CreatedAt and UpdatedAt now, and no
// invalidation (a new memory holds: InvalidAt and SupersededBy are
// cleared). Times are in the precision the stores keep.
func (m *Memory) Prepare(now time.Time) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if m.ID == "" {
		m.ID = NewID()
	}
	if m.ValidFrom.IsZero() {
		m.ValidFrom = now
	}
	m.ValidFrom = Timestamp(m.ValidFrom)
	m.Version, m.InvalidAt, m.SupersededBy, m.ProcessedAt = 1, nil, "", nil
	m.CreatedAt, m.UpdatedAt = now, now
	return nil
}

// ApplyUpdate applies upd, validated, to m as its next version at now.
// A change that came from a thread (upd.ThreadID set) also moves the
// memory's provenance to that thread and those seqs, and adds them to its
// Sources: the memory says what its current text was drawn from, the
// history keeps where each version came from, and the sources every turn
// that said it. The new version is not yet in the profile
// (ProcessedAt cleared). Returns ECONFLICT if m is invalidated.
func (m *Memory) ApplyUpdate(upd MemoryUpdate, now time.Time) error {
	if !m.Valid() {
		return Errorf(ECONFLICT, "Memory %q is invalidated; create a new memory instead.", m.ID)
	}
	if upd.Text != nil {
		m.Text = *upd.Text
	}
	if upd.Category != nil {
		m.Category = *upd.Category
	}
	if upd.Confidence != nil {
		m.Confidence = *upd.Confidence
	}
	if upd.Importance != nil {
		m.Importance = *upd.Importance
	}
	if upd.Metadata != nil {
		m.Metadata = *upd.Metadata
	}
	if upd.ThreadID != "" {
		m.ThreadID, m.SeqFrom, m.SeqTo = upd.ThreadID, upd.SeqFrom, upd.SeqTo
		m.AddSource(ThreadRange{ThreadID: upd.ThreadID, SeqFrom: upd.SeqFrom, SeqTo: upd.SeqTo})
	}
	m.Version++
	m.UpdatedAt = now
	m.ProcessedAt = nil // a new version is news to the profile
	return nil
}

// Invalidate marks m as no longer holding from now, superseded by the
// memory supersededBy ("" for none), as its next version. It reports
// false, changing nothing, if m is already invalidated.
func (m *Memory) Invalidate(supersededBy string, now time.Time) bool {
	if !m.Valid() {
		return false
	}
	m.InvalidAt, m.SupersededBy = &now, supersededBy
	m.Version++
	m.UpdatedAt = now
	return true
}

// ValidateInvalidation checks the arguments of InvalidateMemory: the
// superseding memory, when named, is an ID other than the memory's own;
// the reason is text. The superseding memory is not looked up: it may be
// created after, or deleted later.
func ValidateInvalidation(id, supersededBy, reason string) error {
	if supersededBy != "" {
		if err := ValidateID("superseded_by", supersededBy); err != nil {
			return err
		}
		if supersededBy == id {
			return Errorf(EINVALID, "A memory cannot supersede itself.")
		}
	}
	return ValidateText("reason", reason)
}

// Change returns the history entry that records m's current version,
// made by op (OpAdd, OpUpdate or OpInvalidate) for reason, at m.UpdatedAt,
// with m's provenance (after ApplyUpdate, the update's when it came from
// a thread).
func (m *Memory) Change(op, reason string) *MemoryChange {
	return &MemoryChange{
		MemoryID:   m.ID,
		Version:    m.Version,
		Op:         op,
		Text:       m.Text,
		Category:   m.Category,
		Confidence: m.Confidence,
		Importance: m.Importance,
		ThreadID:   m.ThreadID,
		SeqFrom:    m.SeqFrom,
		SeqTo:      m.SeqTo,
		Reason:     reason,
		At:         m.UpdatedAt,
	}
}

// MemoryUpdate holds the fields of a memory that an update may change; nil
// fields stay as they are.
type MemoryUpdate struct {
	Text       *string          `json:"text"`
	Category   *string          `json:"category"`
	Confidence *float64         `json:"confidence"`
	Importance *float64         `json:"importance"`
	Metadata   *json.RawMessage `json:"metadata"`
	// Provenance of the change, when it came from a thread: it becomes
	// the memory's provenance (see Memory.ApplyUpdate).
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
	if u.ThreadID != "" {
		if err := ValidateID("thread_id", u.ThreadID); err != nil {
			return err
		}
	}
	if u.SeqFrom < 0 || u.SeqTo < u.SeqFrom {
		return Errorf(EINVALID, "seq_from and seq_to must make a range (0 ≤ seq_from ≤ seq_to).")
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
// updated first (ties by ID, descending).
type MemoryFilter struct {
	Kind     *string // MemoryFact or MemoryInsight (EINVALID otherwise)
	Category *string
	AgentID  *string
	ThreadID *string // the memory's provenance (see Memory.ThreadID)
	// Processed, when set, returns only memories built into the profile
	// (true) or only those not yet (false; see Memory.ProcessedAt).
	Processed *bool
	// IncludeInvalid also returns invalidated memories.
	IncludeInvalid bool
	UpdatedAfter   *time.Time // only memories updated strictly after
	Limit          int        // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor         string     // opaque, from a previous page's next cursor
}

// Validate checks the filter's text (see validateTextFilters) and kind.
func (f *MemoryFilter) Validate() error {
	if err := validateTextFilters(textFilter{"kind", f.Kind}, textFilter{"category", f.Category},
		textFilter{"agent_id", f.AgentID}, textFilter{"thread_id", f.ThreadID}); err != nil {
		return err
	}
	if f.Kind != nil && *f.Kind != MemoryFact && *f.Kind != MemoryInsight {
		return Errorf(EINVALID, "kind must be %q or %q, not %q.", MemoryFact, MemoryInsight, *f.Kind)
	}
	return nil
}

// MemoryCursor is the keyset position of FindMemories: the last memory's
// updated_at in Unix microseconds and its id.
type MemoryCursor struct {
	UpdatedAt int64  `json:"u"`
	ID        string `json:"i"`
}

// MemoryPage cuts a result fetched with limit+1 rows to limit and returns
// the cursor in list of the next page ("" when there is none).
func MemoryPage(mems []*Memory, limit int, list CursorList) ([]*Memory, string) {
	return CutPage(mems, limit, list, func(last *Memory) any {
		return MemoryCursor{UpdatedAt: last.UpdatedAt.UnixMicro(), ID: last.ID}
	})
}

// MemoryWrite is one write of a batch (MemoryStore.WriteMemories):
// Create, a new memory of the batch's user; or the update (Update), the
// invalidation (Invalidate) or a new source (AddSource) of the memory ID.
//
// AddSource appends a range of turns to the memory's Sources (nothing
// when it is there already), valid or invalidated: turns that said it
// again. It is no change of what the memory says: its version, history
// and UpdatedAt stay as they are.
type MemoryWrite struct {
	Create     *Memory
	ID         string
	Update     *MemoryUpdate
	Invalidate *MemoryInvalidation
	AddSource  *ThreadRange
}

// MemoryInvalidation is what InvalidateMemory takes besides the memory:
// the memory that supersedes it ("" for none) and why ("" for no reason
// given).
type MemoryInvalidation struct {
	SupersededBy string `json:"superseded_by"`
	Reason       string `json:"reason"`
}

// Validate checks a write of userID's batch, as the single calls do, and
// prepares a memory to create (Memory.Prepare, at now).
func (w *MemoryWrite) Validate(userID string, now time.Time) error {
	n := 0
	for _, set := range []bool{w.Create != nil, w.Update != nil, w.Invalidate != nil, w.AddSource != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return Errorf(EINVALID, "A memory write is one of create, update, invalidate or add source.")
	case w.Create != nil:
		if w.Create.UserID != userID {
			return Errorf(EINVALID, "A memory of user %q written in a batch of user %q.", w.Create.UserID, userID)
		}
		return w.Create.Prepare(now)
	case w.Update != nil:
		return w.Update.Validate()
	case w.AddSource != nil:
		return ValidateSource("source", *w.AddSource)
	default:
		return ValidateInvalidation(w.ID, w.Invalidate.SupersededBy, w.Invalidate.Reason)
	}
}

// MemoryStore stores memories, their sources and their history. Memories
// are the user's knowledge, not part of a thread: deleting the thread they
// were drawn from, even permanently, leaves them (their ThreadID then
// names a thread that is gone; a permanent deletion removes the thread's
// ranges from their Sources); DeleteUser erases them with their sources,
// history and vectors. Every memory a method returns carries its Sources.
type MemoryStore interface {
	// CreateMemory stores a new memory (see Memory.Prepare: ID assigned
	// when empty; Version 1; ValidFrom defaults to now; Sources its
	// provenance and those given) and its history entry "add", and
	// records the user (see UserStore.FindUserIDs). The threads it names
	// are not looked up. Returns EINVALID for bad fields
	// and ECONFLICT if the user has a memory with that ID.
	CreateMemory(ctx context.Context, m *Memory) error

	// FindMemoryByID returns a memory of the user, invalidated or not.
	// Returns ENOTFOUND if there is none.
	FindMemoryByID(ctx context.Context, userID, id string) (*Memory, error)

	// FindMemories returns a page of the user's memories, newest updated
	// first, and the next cursor.
	FindMemories(ctx context.Context, userID string, f MemoryFilter) ([]*Memory, string, error)

	// UpdateMemory applies upd as the memory's next version (see
	// Memory.ApplyUpdate) and records it in the history ("update").
	// Returns EINVALID for bad fields, ENOTFOUND if there is no such
	// memory and ECONFLICT if it is invalidated.
	UpdateMemory(ctx context.Context, userID, id string, upd MemoryUpdate) (*Memory, error)

	// InvalidateMemory marks a memory as no longer holding from now, names
	// the memory that supersedes it ("" for none; not looked up), and
	// records it as the next version in the history ("invalidate").
	// Invalidating an invalidated memory changes nothing and returns it as
	// it is. Returns EINVALID for bad arguments (see ValidateInvalidation)
	// and ENOTFOUND if there is no such memory.
	InvalidateMemory(ctx context.Context, userID, id, supersededBy, reason string) (*Memory, error)

	// WriteMemories applies writes of the user's memories in order, in
	// one transaction: all of them, or none when one fails (with that
	// write's error, as CreateMemory, UpdateMemory or InvalidateMemory
	// would return it; an AddSource of a memory that does not exist
	// returns ENOTFOUND). It returns the memories as each write left them.
	// A write may name a memory an earlier write of the batch creates
	// (give that one its ID, or Prepare it, beforehand).
	WriteMemories(ctx context.Context, userID string, ws []MemoryWrite) ([]*Memory, error)

	// DeleteMemory removes a memory, its history and its vectors (scope
	// ScopeMemories, every space). Returns ENOTFOUND if there is none.
	DeleteMemory(ctx context.Context, userID, id string) error

	// FindMemoryHistory returns a memory's history, oldest first. Returns
	// ENOTFOUND if there is no such memory.
	FindMemoryHistory(ctx context.Context, userID, id string) ([]*MemoryChange, error)

	// FindMemorySources returns the sources (Memory.Sources) of the
	// user's memories, valid or not, drawn from the turns of ranges that
	// an invalidated memory was drawn from too: for each range that a
	// source of an invalidated memory overlaps (same thread, seqs in
	// common), every memory with a source that overlaps it, with that
	// source. Each memory and source once, in no particular order (a
	// memory twice when two of its sources overlap ranges); an empty
	// slice when no invalidated memory's source overlaps any range (the
	// common case, which costs an index probe of the invalidated
	// memories' sources per range). Search reads it to tell the turns
	// from which only outdated memories were drawn (a turn that repeated
	// an outdated fact too). Returns
	// EINVALID for more than MaxPageSize ranges, or a range without a
	// thread or whose seqs are not a range.
	FindMemorySources(ctx context.Context, userID string, ranges []ThreadRange) ([]MemorySource, error)
}

// MemorySource is a range a memory was drawn from (one of its Sources)
// and whether it still holds (see MemoryStore.FindMemorySources).
type MemorySource struct {
	ID             string
	ThreadID       string
	SeqFrom, SeqTo int64
	InvalidAt      *time.Time // nil: the memory holds
	SupersededBy   string     // the memory that superseded it ("" for none)
	SupersededText string     // that memory's text ("" for none, or if it was deleted)
	Text           string     // the memory's own text
}

// ThreadRange is the turns SeqFrom..SeqTo (inclusive) of a thread; 0..0
// when they are not known (a memory's source given without them).
type ThreadRange struct {
	ThreadID string `json:"thread_id"`
	SeqFrom  int64  `json:"seq_from,omitempty"`
	SeqTo    int64  `json:"seq_to,omitempty"`
}

// ValidateMemorySources checks the ranges of FindMemorySources, for every
// backend.
func ValidateMemorySources(ranges []ThreadRange) error {
	if len(ranges) > MaxPageSize {
		return Errorf(EINVALID, "At most %d ranges may be asked for, not %d.", MaxPageSize, len(ranges))
	}
	for _, r := range ranges {
		if r.ThreadID == "" || r.SeqFrom < 0 || r.SeqTo < r.SeqFrom {
			return Errorf(EINVALID, "A range needs a thread and seqs 0 ≤ seq_from ≤ seq_to, not %q %d–%d.", r.ThreadID, r.SeqFrom, r.SeqTo)
		}
	}
	return nil
}

// SaidPrefix opens a memory kept in the user's own words (the built-in
// extractor's, when a message states facts its rules cannot rewrite):
// "User said: moved. new flat in leeds, 2 bed.". Such a memory stands
// for its one message: search returns the better ranked of the two.
const SaidPrefix = "User said: "
