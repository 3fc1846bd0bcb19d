package agentmem

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// ExportOptions tune a user's export.
type ExportOptions struct {
	// IncludeDeleted exports soft-deleted threads too (they are left out
	// by default).
	IncludeDeleted bool
	// Format is "json" (the default: what an import takes) or "markdown"
	// (to read).
	Format string
}

// What an import does with a record whose ID (or, for notes, agent; for
// profiles, the user's versions) the user already has.
const (
	OnConflictFail    = "fail"    // report the clashes and import nothing (the default)
	OnConflictSkip    = "skip"    // keep what is there, import the rest
	OnConflictReplace = "replace" // replace what is there with the export's
)

// ImportOptions tune an import.
type ImportOptions struct {
	OnConflict string // OnConflictFail when empty

	// Jobs, when not nil, returns the jobs that an import asks for (to
	// index the threads it imported, say), each as alternatives tried in
	// order (see PickJob). ImportUser calls it inside its transaction
	// with the result and enqueues the jobs in that same transaction, so
	// that what an import stores is never left without its indexing, even
	// if the process dies right after.
	Jobs func(res *ImportResult) [][]*Job `json:"-"`
}

// ImportResult says what an import did.
type ImportResult struct {
	Imported ImportCounts `json:"imported"`
	Skipped  ImportCounts `json:"skipped"`
	Replaced ImportCounts `json:"replaced"`
	// Duplicates counts the records that the export holds more than
	// once, identical: each is imported once, and its repeats are
	// counted here, not as imported.
	Duplicates ImportCounts `json:"duplicates"`
	// ThreadIDs and MemoryIDs are those imported: their indexing (vectors,
	// windows, chunks) is queued after the import.
	ThreadIDs []string `json:"thread_ids"`
	MemoryIDs []string `json:"memory_ids"`
}

// ImportCounts counts the records of an import by kind.
type ImportCounts struct {
	Threads     int `json:"threads"`
	Messages    int `json:"messages"`
	Sessions    int `json:"sessions"`
	Notes       int `json:"notes"` // versions
	Memories    int `json:"memories"`
	Profiles    int `json:"profiles"` // versions
	Entities    int `json:"entities"`
	Reflections int `json:"reflections"`
}

// Clash is a record of an import that the user already has.
type Clash struct {
	Kind string // thread, memory, entity, notes, profiles, session, reflection
	ID   string
}

// ClashError is the ECONFLICT of an import with OnConflictFail, naming the
// first clashes.
func ClashError(clashes []Clash) error {
	var names []string
	for _, c := range clashes[:min(len(clashes), 5)] {
		names = append(names, c.Kind+" "+strconv.Quote(c.ID))
	}
	more := ""
	if len(clashes) > 5 {
		more = fmt.Sprintf(" and %d more", len(clashes)-5)
	}
	return Errorf(ECONFLICT, "The user already has %s%s; nothing was imported. %s", strings.Join(names, ", "), more, ClashHint)
}

// ClashHint ends the message of ClashError: how to import anyway, in the
// API's words (the command line names its flag instead).
const ClashHint = "Import with on_conflict skip or replace."

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

// ImportStore imports exports.
type ImportStore interface {
	// ImportThread stores x as a new thread of the user, atomically: the
	// thread keeps its ID (a new one is assigned when empty), fields and
	// times; its messages are renumbered 1..n in the given order keeping
	// their IDs, content and times; elements keep their message links.
	// Returns EINVALID for a bad export (see ThreadExport.Validate) and
	// ECONFLICT if the user already has a thread with that ID or a message
	// or element ID is taken.
	ImportThread(ctx context.Context, userID string, x *ThreadExport) (*Thread, error)

	// ImportUser stores x as userID's in one transaction, all of it or
	// none: it prepares x (PrepareUserImport), finds what the user already
	// has of it (ImportExisting) and writes what PlanImport decides —
	// clashes are reported (ClashError) before anything is written,
	// skipped, or replaced per opt. Records keep their IDs, versions,
	// history and times. Returns EINVALID for a bad export, whatever the
	// user has (a field out of range, a record twice with other contents,
	// a record that points at nothing: see PrepareUserImport and
	// PlanImport), and ECONFLICT for a clash with OnConflictFail.
	ImportUser(ctx context.Context, userID string, x *UserExport, opt ImportOptions) (*ImportResult, error)

	// FindAgentIDs returns the agents the user has threads, sessions or
	// notes with, sorted, without "" (threads of no agent).
	FindAgentIDs(ctx context.Context, userID string) ([]string, error)

	// FindThreadReflections returns the reflections of the user's threads
	// threadIDs, of soft-deleted threads too (FindReflection leaves them
	// out), for exports: in no particular order, without the threads that
	// have none. Returns EINVALID for more than MaxPageSize IDs.
	FindThreadReflections(ctx context.Context, userID string, threadIDs []string) ([]*Reflection, error)
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
// every backend: it validates x (no message from the future of now, see
// ValidateNotFuture), moves it to userID, fills in IDs and times that are
// missing (now), renumbers the messages 1..n, recounts their tokens with
// tc, and returns the thread to insert. The thread is live (not deleted)
// whatever the export said.
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
	if err := validatePast(now, x.threadTimes()...); err != nil {
		return nil, err
	}
	if err := validateCreatedAt("messages", x.Messages, now); err != nil {
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

// MaxVersion is the highest version an import takes, of notes, memories
// and profiles. Writes make versions one at a time, so no record comes
// near it; a version far past it would wrap at the next write, or
// overflow the 32-bit columns in which PostgreSQL keeps the versions of
// memories and profiles.
const MaxVersion = 1 << 30

// PrepareUserImport does the work of ImportUser that needs no database,
// for every backend: it checks all of x before anything is written and
// moves it to userID: every record becomes the user's, IDs that are
// missing are assigned, times are normalised, each thread is prepared as
// PrepareImport does (a soft-deleted thread stays deleted), memories
// without history get their "add", and references name their entity.
//
// Every field is checked (errors name the record and the field:
// "memories[3].version must be …"): IDs, texts and kinds as the API
// checks them; versions within 1 and MaxVersion, a memory's the newest of
// its history, whose versions increase; seqs and counts not negative;
// times within the years 1 to 9999, and those of when something happened
// not in the future. A record that the export holds twice (by ID; notes
// by agent and version, profiles by version, sessions by agent,
// reflections by thread) must be the same twice: PlanImport imports it
// once and counts the repeat as a duplicate. Whether a record points at
// something (a session's thread, a memory's superseded_by…) depends on
// what the user has too: PlanImport checks that.
func PrepareUserImport(userID string, x *UserExport, opt ImportOptions, now time.Time, tc TokenCounter) error {
	if x == nil {
		return Errorf(EINVALID, "The export is empty.")
	}
	if x.Version < 0 || x.Version > ExportVersion {
		return Errorf(EINVALID, "version %d is not supported; the newest is %d.", x.Version, ExportVersion)
	}
	switch opt.OnConflict {
	case "", OnConflictFail, OnConflictSkip, OnConflictReplace:
	default:
		return Errorf(EINVALID, "on_conflict must be fail, skip or replace, not %q.", opt.OnConflict)
	}
	now = Timestamp(now)
	for _, prepare := range []func(string, *UserExport, time.Time, TokenCounter) error{
		prepareThreads, prepareSessions, prepareNotes, prepareMemories, prepareProfiles, prepareEntities, prepareReflections,
	} {
		if err := prepare(userID, x, now, tc); err != nil {
			return err
		}
	}
	return nil
}

// firsts tells apart the records of an import that share a key (an ID):
// the first is imported; a repeat identical to it (the same JSON, before
// preparation) is a duplicate; a different one is an error.
type firsts map[string]first

type first struct {
	i   int // index of the first
	sum [sha256.Size]byte
}

// fingerprint returns the hash of v's JSON, to compare records.
func fingerprint(v any) [sha256.Size]byte {
	b, err := json.Marshal(v)
	if err != nil { // a record that cannot be written; its checks will say why
		b = []byte(err.Error())
	}
	return sha256.Sum256(b)
}

// check records the record at index i of the list named list, whose key
// is named field, and returns an error if a record of that key came
// before it with other contents.
func (f firsts) check(list string, i int, field, key string, sum [sha256.Size]byte) error {
	prev, ok := f[key]
	switch {
	case !ok:
		f[key] = first{i, sum}
	case prev.sum != sum:
		return Errorf(EINVALID, "%s[%d].%s %q is also that of %s[%d], with other contents; an export holds each record once.", list, i, field, key, list, prev.i)
	}
	return nil
}

// The prepare… functions each prepare the records of one kind for
// PrepareUserImport.

func prepareThreads(userID string, x *UserExport, now time.Time, tc TokenCounter) error {
	seen := firsts{}
	messages := map[string]int{} // message ID → the thread that has it
	elements := map[string]int{}
	for i, t := range x.Threads {
		if t == nil || t.Thread == nil {
			return Errorf(EINVALID, "threads[%d] has no thread.", i)
		}
		sum := fingerprint(t)
		deleted := t.Thread.DeletedAt
		th, err := PrepareImport(userID, t, now, tc)
		if err != nil {
			return Errorf(ErrorCode(err), "threads[%d]: %s", i, ErrorMessage(err))
		}
		th.DeletedAt = timestampPtr(deleted) // PrepareImport makes a live thread
		t.Thread = th
		if prev, dup := seen[th.ID]; dup && prev.sum == sum {
			continue // a duplicate: its messages are those of the first
		}
		if err := seen.check("threads", i, "thread.id", th.ID, sum); err != nil {
			return err
		}
		for j, m := range t.Messages {
			if other, ok := messages[m.ID]; ok {
				return Errorf(EINVALID, "threads[%d].messages[%d].id %q is also the ID of a message of threads[%d].", i, j, m.ID, other)
			}
			messages[m.ID] = i
		}
		for j, e := range t.Elements {
			if other, ok := elements[e.ID]; ok {
				return Errorf(EINVALID, "threads[%d].elements[%d].id %q is also the ID of an element of threads[%d].", i, j, e.ID, other)
			}
			elements[e.ID] = i
		}
	}
	return nil
}

func prepareSessions(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	seen := firsts{}
	for i, s := range x.Sessions {
		if s == nil {
			return Errorf(EINVALID, "sessions[%d] is null.", i)
		}
		sum := fingerprint(s)
		if err := ValidateID(fmt.Sprintf("sessions[%d].agent_id", i), s.AgentID); err != nil {
			return err
		}
		if err := ValidateID(fmt.Sprintf("sessions[%d].thread_id", i), s.ThreadID); err != nil {
			return err
		}
		if err := validatePast(now, namedTime{fmt.Sprintf("sessions[%d].updated_at", i), s.UpdatedAt}); err != nil {
			return err
		}
		if err := seen.check("sessions", i, "agent_id", s.AgentID, sum); err != nil {
			return err
		}
		s.UserID, s.UpdatedAt = userID, stamp(s.UpdatedAt, now)
	}
	return nil
}

// validateVersion checks the version of a record of an import.
func validateVersion(field string, v int64) error {
	if v < 1 || v > MaxVersion {
		return Errorf(EINVALID, "%s must be between 1 and %d, not %d.", field, MaxVersion, v)
	}
	return nil
}

func prepareNotes(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	seen := firsts{}
	for i, n := range x.Notes {
		if n == nil {
			return Errorf(EINVALID, "notes[%d] is null.", i)
		}
		sum := fingerprint(n)
		if err := ValidateID(fmt.Sprintf("notes[%d].agent_id", i), n.AgentID); err != nil {
			return err
		}
		if err := validateVersion(fmt.Sprintf("notes[%d].version", i), n.Version); err != nil {
			return err
		}
		if len(n.Content) > MaxNotesBytes {
			return Errorf(ETOOLARGE, "notes[%d].content is %d bytes; the limit is %d.", i, len(n.Content), MaxNotesBytes)
		}
		if err := ValidateText(fmt.Sprintf("notes[%d].content", i), n.Content); err != nil {
			return err
		}
		n.Operation = cmp.Or(n.Operation, NotesOverwrite)
		if n.Operation == NotesRead || !slices.Contains(notesOps, n.Operation) {
			return Errorf(EINVALID, "notes[%d].operation must be the write that made the version (%s), not %q.",
				i, strings.Join(notesOps[1:], ", "), n.Operation)
		}
		if err := validatePast(now, namedTime{fmt.Sprintf("notes[%d].updated_at", i), n.UpdatedAt}); err != nil {
			return err
		}
		if err := seen.check("notes", i, "version", fmt.Sprintf("%s version %d", n.AgentID, n.Version), sum); err != nil {
			return err
		}
		n.UserID, n.UpdatedAt = userID, stamp(n.UpdatedAt, now)
	}
	return nil
}

func prepareMemories(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	seen := firsts{}
	for i, m := range x.Memories {
		if m == nil || m.Memory == nil {
			return Errorf(EINVALID, "memories[%d] is null.", i)
		}
		sum := fingerprint(m)
		field := func(name string) string { return fmt.Sprintf("memories[%d].%s", i, name) }
		m.UserID = userID
		if m.ID == "" {
			m.ID = NewID()
		}
		if err := m.Validate(); err != nil {
			return Errorf(ErrorCode(err), "memories[%d]: %s", i, ErrorMessage(err))
		}
		if m.Source != SourceAPI && m.Source != SourceExtracted {
			return Errorf(EINVALID, "%s must be %q or %q, not %q.", field("source"), SourceAPI, SourceExtracted, m.Source)
		}
		if m.ThreadID == "" && (m.SeqFrom != 0 || m.SeqTo != 0) {
			return Errorf(EINVALID, "%s and seq_to name turns of a thread, but thread_id is empty.", field("seq_from"))
		}
		if err := validatePast(now, namedTime{field("created_at"), m.CreatedAt}, namedTime{field("updated_at"), m.UpdatedAt},
			pastPtr(field("invalid_at"), m.InvalidAt), pastPtr(field("processed_at"), m.ProcessedAt)); err != nil {
			return err
		}
		if m.SupersededBy != "" {
			if err := ValidateInvalidation(m.ID, m.SupersededBy, ""); err != nil {
				return Errorf(ErrorCode(err), "memories[%d]: %s", i, ErrorMessage(err))
			}
			if m.InvalidAt == nil {
				return Errorf(EINVALID, "%s names the memory that superseded this one, but invalid_at is not set; a superseded memory is invalidated.", field("superseded_by"))
			}
		}
		newest, err := prepareHistory(i, m, now)
		if err != nil {
			return err
		}
		if m.Version == 0 { // not given: that of the newest change, or the first
			m.Version = max(newest, 1)
		}
		if err := validateVersion(field("version"), int64(m.Version)); err != nil {
			return err
		}
		if newest != 0 && m.Version != newest {
			return Errorf(EINVALID, "%s %d is not that of the newest entry of its history (%d).", field("version"), m.Version, newest)
		}
		if err := seen.check("memories", i, "id", m.ID, sum); err != nil {
			return err
		}
		m.CreatedAt, m.UpdatedAt, m.ValidFrom = stamp(m.CreatedAt, now), stamp(m.UpdatedAt, now), stamp(m.ValidFrom, now)
		m.InvalidAt, m.ProcessedAt = timestampPtr(m.InvalidAt), timestampPtr(m.ProcessedAt)
		if len(m.History) == 0 {
			m.History = []*MemoryChange{m.Change(OpAdd, "")}
		}
	}
	return nil
}

// prepareHistory checks the history of x.Memories[i], m, and returns the
// version of its newest entry (0 when it has none).
func prepareHistory(i int, m *MemoryExport, now time.Time) (int, error) {
	newest := 0
	for j, c := range m.History {
		if c == nil {
			return 0, Errorf(EINVALID, "memories[%d].history[%d] is null.", i, j)
		}
		field := func(name string) string { return fmt.Sprintf("memories[%d].history[%d].%s", i, j, name) }
		switch c.Op {
		case OpAdd, OpUpdate, OpInvalidate:
		default:
			return 0, Errorf(EINVALID, "%s must be %q, %q or %q, not %q.", field("op"), OpAdd, OpUpdate, OpInvalidate, c.Op)
		}
		if err := validateVersion(field("version"), int64(c.Version)); err != nil {
			return 0, err
		}
		if c.Version <= newest {
			return 0, Errorf(EINVALID, "%s %d is not after that of the entry before it (%d); a history is oldest first.", field("version"), c.Version, newest)
		}
		newest = c.Version
		if err := validateMemoryText(c.Text); err != nil {
			return 0, Errorf(ErrorCode(err), "memories[%d].history[%d]: %s", i, j, ErrorMessage(err))
		}
		if err := validateCategory(c.Category); err != nil {
			return 0, Errorf(ErrorCode(err), "memories[%d].history[%d]: %s", i, j, ErrorMessage(err))
		}
		if err := validateUnit(field("confidence"), c.Confidence); err != nil {
			return 0, err
		}
		if err := validateUnit(field("importance"), c.Importance); err != nil {
			return 0, err
		}
		if c.ThreadID != "" {
			if err := ValidateID(field("thread_id"), c.ThreadID); err != nil {
				return 0, err
			}
		}
		if c.SeqFrom < 0 || c.SeqTo < c.SeqFrom {
			return 0, Errorf(EINVALID, "%s and seq_to must make a range (0 ≤ seq_from ≤ seq_to).", field("seq_from"))
		}
		if err := ValidateText(field("reason"), c.Reason); err != nil {
			return 0, err
		}
		if err := validatePast(now, namedTime{field("at"), c.At}); err != nil {
			return 0, err
		}
		c.MemoryID, c.At = m.ID, stamp(c.At, now)
	}
	return newest, nil
}

func prepareProfiles(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	seen := firsts{}
	for i, p := range x.Profiles {
		if p == nil {
			return Errorf(EINVALID, "profiles[%d] is null.", i)
		}
		sum := fingerprint(p)
		p.UserID = userID
		if err := validateVersion(fmt.Sprintf("profiles[%d].version", i), int64(p.Version)); err != nil {
			return err
		}
		if err := p.Validate(); err != nil {
			return Errorf(ErrorCode(err), "profiles[%d]: %s", i, ErrorMessage(err))
		}
		if err := validatePast(now, namedTime{fmt.Sprintf("profiles[%d].created_at", i), p.CreatedAt}); err != nil {
			return err
		}
		if err := seen.check("profiles", i, "version", strconv.Itoa(p.Version), sum); err != nil {
			return err
		}
		p.CreatedAt = stamp(p.CreatedAt, now)
	}
	return nil
}

func prepareEntities(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	seen := firsts{}
	names := map[string]int{} // name key → the entity that has it
	for i, e := range x.Entities {
		if e == nil || e.Entity == nil {
			return Errorf(EINVALID, "entities[%d] is null.", i)
		}
		sum := fingerprint(e)
		e.UserID = userID
		if e.ID == "" {
			e.ID = NewID()
		}
		if err := e.Validate(); err != nil {
			return Errorf(ErrorCode(err), "entities[%d]: %s", i, ErrorMessage(err))
		}
		if err := validatePast(now, namedTime{fmt.Sprintf("entities[%d].created_at", i), e.CreatedAt},
			namedTime{fmt.Sprintf("entities[%d].updated_at", i), e.UpdatedAt}); err != nil {
			return err
		}
		if prev, dup := seen[e.ID]; dup && prev.sum == sum {
			continue // a duplicate: PlanImport leaves it out
		}
		if err := seen.check("entities", i, "id", e.ID, sum); err != nil {
			return err
		}
		key, _ := e.Keys()
		if other, ok := names[key]; ok {
			return Errorf(EINVALID, "entities[%d].name %q names the entity of entities[%d] (%q); a user has one entity by a name.",
				i, e.Name, other, x.Entities[other].Name)
		}
		names[key] = i
		e.CreatedAt, e.UpdatedAt = stamp(e.CreatedAt, now), stamp(e.UpdatedAt, now)
		refs := firsts{}
		kept := e.References[:0]
		for j, r := range e.References {
			if r == nil {
				return Errorf(EINVALID, "entities[%d].references[%d] is null.", i, j)
			}
			rsum := fingerprint(r)
			r.EntityID, r.Entity = e.ID, nil
			if err := r.Validate(now); err != nil {
				return Errorf(ErrorCode(err), "entities[%d].references[%d]: %s", i, j, ErrorMessage(err))
			}
			key := r.ThreadID + " " + r.Action
			if prev, dup := refs[key]; dup && prev.sum == rsum {
				continue // the same reference twice: kept once
			}
			if err := refs.check(fmt.Sprintf("entities[%d].references", i), j, "thread_id and action", key, rsum); err != nil {
				return err
			}
			kept = append(kept, r)
		}
		e.References = kept
	}
	return nil
}

func prepareReflections(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	seen := firsts{}
	for i, r := range x.Reflections {
		if r == nil {
			return Errorf(EINVALID, "reflections[%d] is null.", i)
		}
		sum := fingerprint(r)
		r.UserID = userID
		if err := r.Validate(); err != nil {
			return Errorf(ErrorCode(err), "reflections[%d]: %s", i, ErrorMessage(err))
		}
		if err := validatePast(now, namedTime{fmt.Sprintf("reflections[%d].updated_at", i), r.UpdatedAt}); err != nil {
			return err
		}
		if err := seen.check("reflections", i, "thread_id", r.ThreadID, sum); err != nil {
			return err
		}
		r.UpdatedAt = stamp(r.UpdatedAt, now)
	}
	return nil
}

// stamp returns t as the stores keep it, or now when t is zero.
func stamp(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return Timestamp(t)
}

// ImportExisting is what a user already has of an import's records, as a
// backend finds it in the import's transaction (see PlanImport): of the
// IDs in ImportKeys.
type ImportExisting struct {
	Threads     map[string]bool   // thread IDs
	LastSeqs    map[string]int64  // thread ID → its last seq
	Messages    map[string]string // message ID → the thread that has it
	Elements    map[string]string // element ID → the thread that has it
	Sessions    map[string]bool   // agent IDs
	NotesAgents map[string]bool   // agents with notes
	Profiles    bool              // any profile version
	Memories    map[string]bool   // memory IDs
	Entities    map[string]bool   // entity IDs
	EntityNames map[string]string // name key → entity ID
	Reflections map[string]bool   // thread IDs
}

// NewImportExisting returns an ImportExisting with empty maps, for a
// backend to fill in.
func NewImportExisting() ImportExisting {
	return ImportExisting{Threads: map[string]bool{}, LastSeqs: map[string]int64{}, Messages: map[string]string{},
		Elements: map[string]string{}, Sessions: map[string]bool{}, NotesAgents: map[string]bool{}, Memories: map[string]bool{},
		Entities: map[string]bool{}, EntityNames: map[string]string{}, Reflections: map[string]bool{}}
}

// ImportPlan is what an import writes, in order: the deletions (with
// OnConflictReplace), then the records.
type ImportPlan struct {
	DeleteThreads  []string
	DeleteMemories []string
	DeleteEntities []string
	DeleteNotes    []string // agents whose notes go
	DeleteProfiles bool

	Threads     []*ThreadExport
	Sessions    []*Session
	Notes       []*Notes
	Profiles    []*Profile
	Memories    []*MemoryExport
	Entities    []*EntityExport
	Reflections []*Reflection // upserted
	Result      *ImportResult
}

// PlanImport decides what an import of x (prepared by PrepareUserImport)
// writes, given what the user has: with OnConflictFail any clash is a
// ClashError; with OnConflictSkip a clashing record is left out (a thread
// with its messages, elements, reflection and session); with
// OnConflictReplace the user's clashing record is deleted first. A
// record that x holds twice is imported once (PrepareUserImport made sure
// that the repeats are the same) and its repeats are counted in
// ImportResult.Duplicates.
//
// Before any clash, it returns EINVALID for a record that would point at
// nothing once imported: a session, reflection or entity reference of a
// thread, or a memory drawn from a thread, that neither x nor the user
// has (or that the import replaces by deleting it); a memory superseded
// by a memory that neither has; a reflection past the end of its thread.
// A memory's history, a profile's sources and a reflection's insights
// are records of the past and may name what is gone. Seqs that the API
// does not check against the thread either (a memory's, a reference's)
// are not checked here.
func PlanImport(x *UserExport, have ImportExisting, opt ImportOptions) (*ImportPlan, error) {
	pl := &planner{x: x, have: have, onConflict: cmp.Or(opt.OnConflict, OnConflictFail),
		p:       &ImportPlan{Result: &ImportResult{ThreadIDs: []string{}, MemoryIDs: []string{}}},
		deleted: map[string]bool{}, skippedThreads: map[string]bool{}, fileThreads: map[string]*Thread{}, fileMemories: map[string]bool{}}
	pl.threads() // first: the others leave out what belongs to a skipped thread
	if err := pl.references(); err != nil {
		return nil, err
	}
	pl.sessions()
	pl.notes()
	pl.profiles()
	pl.memories()
	pl.entities()
	pl.reflections()
	if len(pl.clashes) > 0 {
		return nil, ClashError(pl.clashes)
	}
	return pl.p, nil
}

// planner holds the state of PlanImport.
type planner struct {
	x              *UserExport
	have           ImportExisting
	onConflict     string
	p              *ImportPlan
	clashes        []Clash
	deleted        map[string]bool // threads deleted by the plan
	skippedThreads map[string]bool
	fileThreads    map[string]*Thread // the threads of x, by ID
	fileMemories   map[string]bool
}

// What becomes of a record of an import.
type verdict int

const (
	importNew     verdict = iota // the user does not have it: imported
	importReplace                // the user's is deleted, the export's imported
	importSkip                   // the user's is kept, the export's left out
	importClash                  // a clash: the import fails
)

// decide says what becomes of a record, recording a clash.
func (pl *planner) decide(clash bool, kind, id string) verdict {
	switch {
	case !clash:
		return importNew
	case pl.onConflict == OnConflictReplace:
		return importReplace
	case pl.onConflict == OnConflictSkip:
		return importSkip
	}
	pl.clashes = append(pl.clashes, Clash{kind, id})
	return importClash
}

func (pl *planner) threads() {
	r := pl.p.Result
	for _, t := range pl.x.Threads {
		id := t.Thread.ID
		if pl.fileThreads[id] != nil { // a duplicate
			r.Duplicates.Threads++
			r.Duplicates.Messages += len(t.Messages)
			continue
		}
		pl.fileThreads[id] = t.Thread
		// A thread clashes by its ID or by a message or element ID that
		// the user has, in this thread or in another (owners).
		clash := pl.have.Threads[id]
		var owners []string
		for _, owner := range pl.owners(t) {
			clash = true
			if owner != id {
				owners = append(owners, owner)
			}
		}
		switch pl.decide(clash, "thread", id) {
		case importReplace:
			for _, d := range append([]string{id}, owners...) {
				if (d != id || pl.have.Threads[id]) && !pl.deleted[d] {
					pl.deleted[d] = true
					pl.p.DeleteThreads = append(pl.p.DeleteThreads, d)
				}
			}
			r.Replaced.Threads++
		case importSkip:
			pl.skippedThreads[id] = true
			r.Skipped.Threads++
			r.Skipped.Messages += len(t.Messages)
			continue
		case importClash:
			continue
		}
		pl.p.Threads = append(pl.p.Threads, t)
		r.Imported.Threads++
		r.Imported.Messages += len(t.Messages)
		r.ThreadIDs = append(r.ThreadIDs, id)
	}
}

// owners returns the threads of the user that have a message or an
// element of t (t's own among them).
func (pl *planner) owners(t *ThreadExport) []string {
	var out []string
	for _, m := range t.Messages {
		if owner, ok := pl.have.Messages[m.ID]; ok {
			out = append(out, owner)
		}
	}
	for _, e := range t.Elements {
		if owner, ok := pl.have.Elements[e.ID]; ok {
			out = append(out, owner)
		}
	}
	return out
}

// thread reports whether the thread id exists once the import is done,
// and its last seq then: the export's, or the user's if the user's is
// kept (skipped, or not in the export and not deleted by the plan).
func (pl *planner) thread(id string) (lastSeq int64, ok bool) {
	if t := pl.fileThreads[id]; t != nil && !pl.skippedThreads[id] {
		return t.LastSeq, true
	}
	if pl.have.Threads[id] && !pl.deleted[id] {
		return pl.have.LastSeqs[id], true
	}
	return 0, false
}

// references checks that the records of x point at something (see
// PlanImport), after threads.
func (pl *planner) references() error {
	x := pl.x
	for _, m := range x.Memories {
		pl.fileMemories[m.ID] = true
	}
	noThread := func(field, id string) error {
		return Errorf(EINVALID, "%s %q names no thread of the export or of the user.", field, id)
	}
	pastEnd := func(field string, seq int64, thread string, last int64) error {
		return Errorf(EINVALID, "%s %d is past the end of thread %q, whose last seq is %d.", field, seq, thread, last)
	}
	for i, s := range x.Sessions {
		if _, ok := pl.thread(s.ThreadID); !ok && !pl.skippedThreads[s.ThreadID] {
			return noThread(fmt.Sprintf("sessions[%d].thread_id", i), s.ThreadID)
		}
	}
	for i, m := range x.Memories {
		if m.ThreadID != "" {
			if _, ok := pl.thread(m.ThreadID); !ok && pl.fileThreads[m.ThreadID] == nil {
				return noThread(fmt.Sprintf("memories[%d].thread_id", i), m.ThreadID)
			}
		}
		for j, r := range m.Sources {
			if _, ok := pl.thread(r.ThreadID); !ok && pl.fileThreads[r.ThreadID] == nil {
				return noThread(fmt.Sprintf("memories[%d].sources[%d].thread_id", i, j), r.ThreadID)
			}
		}
		if m.SupersededBy != "" && !pl.fileMemories[m.SupersededBy] && !pl.have.Memories[m.SupersededBy] {
			return Errorf(EINVALID, "memories[%d].superseded_by %q names no memory of the export or of the user.", i, m.SupersededBy)
		}
	}
	for i, e := range x.Entities {
		for j, ref := range e.References {
			if pl.skippedThreads[ref.ThreadID] {
				continue // left out with the thread
			}
			if _, ok := pl.thread(ref.ThreadID); !ok {
				return noThread(fmt.Sprintf("entities[%d].references[%d].thread_id", i, j), ref.ThreadID)
			}
		}
	}
	for i, rf := range x.Reflections {
		if pl.skippedThreads[rf.ThreadID] {
			continue // left out with the thread
		}
		last, ok := pl.thread(rf.ThreadID)
		switch {
		case !ok:
			return noThread(fmt.Sprintf("reflections[%d].thread_id", i), rf.ThreadID)
		case rf.ThroughSeq > last:
			return pastEnd(fmt.Sprintf("reflections[%d].through_seq", i), rf.ThroughSeq, rf.ThreadID, last)
		}
	}
	return nil
}

func (pl *planner) sessions() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, s := range pl.x.Sessions {
		if seen[s.AgentID] {
			r.Duplicates.Sessions++
			continue
		}
		seen[s.AgentID] = true
		if pl.skippedThreads[s.ThreadID] {
			r.Skipped.Sessions++
			continue
		}
		switch pl.decide(pl.have.Sessions[s.AgentID], "session", s.AgentID) {
		case importReplace:
			r.Replaced.Sessions++ // the session is set again
		case importSkip:
			r.Skipped.Sessions++
			continue
		case importClash:
			continue
		}
		pl.p.Sessions = append(pl.p.Sessions, s)
		r.Imported.Sessions++
	}
}

// notes decides by agent: an agent's versions are all imported or none.
func (pl *planner) notes() {
	r := pl.p.Result
	imported := map[string]bool{} // agent → imported
	seen := map[string]bool{}     // agent and version
	for _, n := range pl.x.Notes {
		key := n.AgentID + " " + strconv.FormatInt(n.Version, 10)
		if seen[key] {
			r.Duplicates.Notes++
			continue
		}
		seen[key] = true
		take, decided := imported[n.AgentID]
		if !decided {
			switch pl.decide(pl.have.NotesAgents[n.AgentID], "notes", n.AgentID) {
			case importNew:
				take = true
			case importReplace:
				pl.p.DeleteNotes = append(pl.p.DeleteNotes, n.AgentID)
				take = true
			}
			imported[n.AgentID] = take
		}
		if !take {
			r.Skipped.Notes++
			continue
		}
		if pl.have.NotesAgents[n.AgentID] {
			r.Replaced.Notes++
		}
		pl.p.Notes = append(pl.p.Notes, n)
		r.Imported.Notes++
	}
}

// profiles decides for every version at once.
func (pl *planner) profiles() {
	r := pl.p.Result
	var versions []*Profile
	seen := map[int]bool{}
	for _, p := range pl.x.Profiles {
		if seen[p.Version] {
			r.Duplicates.Profiles++
			continue
		}
		seen[p.Version] = true
		versions = append(versions, p)
	}
	if len(versions) == 0 {
		return
	}
	switch pl.decide(pl.have.Profiles, "profiles", "versions") {
	case importNew:
		pl.p.Profiles = versions
	case importReplace:
		pl.p.DeleteProfiles, pl.p.Profiles = true, versions
		r.Replaced.Profiles = len(versions)
	case importSkip:
		r.Skipped.Profiles = len(versions)
	}
	r.Imported.Profiles = len(pl.p.Profiles)
}

func (pl *planner) memories() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, m := range pl.x.Memories {
		if seen[m.ID] {
			r.Duplicates.Memories++
			continue
		}
		seen[m.ID] = true
		switch pl.decide(pl.have.Memories[m.ID], "memory", m.ID) {
		case importReplace:
			pl.p.DeleteMemories = append(pl.p.DeleteMemories, m.ID)
			r.Replaced.Memories++
		case importSkip:
			r.Skipped.Memories++
			continue
		case importClash:
			continue
		}
		pl.p.Memories = append(pl.p.Memories, m)
		r.Imported.Memories++
		r.MemoryIDs = append(r.MemoryIDs, m.ID)
	}
}

// entities clash by ID or by name (an entity of the user with the same
// name key); references to skipped threads are left out.
func (pl *planner) entities() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, e := range pl.x.Entities {
		if seen[e.ID] {
			r.Duplicates.Entities++
			continue
		}
		seen[e.ID] = true
		key, _ := e.Keys()
		other, named := pl.have.EntityNames[key]
		switch pl.decide(pl.have.Entities[e.ID] || named, "entity", e.ID) {
		case importReplace:
			if pl.have.Entities[e.ID] {
				pl.p.DeleteEntities = append(pl.p.DeleteEntities, e.ID)
			}
			if named && other != e.ID {
				pl.p.DeleteEntities = append(pl.p.DeleteEntities, other)
			}
			r.Replaced.Entities++
		case importSkip:
			r.Skipped.Entities++
			continue
		case importClash:
			continue
		}
		var refs []*EntityRef
		for _, ref := range e.References {
			if !pl.skippedThreads[ref.ThreadID] {
				refs = append(refs, ref)
			}
		}
		e.References = refs
		pl.p.Entities = append(pl.p.Entities, e)
		r.Imported.Entities++
	}
}

func (pl *planner) reflections() {
	r := pl.p.Result
	seen := map[string]bool{}
	for _, rf := range pl.x.Reflections {
		if seen[rf.ThreadID] {
			r.Duplicates.Reflections++
			continue
		}
		seen[rf.ThreadID] = true
		if pl.skippedThreads[rf.ThreadID] {
			r.Skipped.Reflections++
			continue
		}
		switch pl.decide(pl.have.Reflections[rf.ThreadID], "reflection", rf.ThreadID) {
		case importReplace:
			r.Replaced.Reflections++
		case importSkip:
			r.Skipped.Reflections++
			continue
		case importClash:
			continue
		}
		pl.p.Reflections = append(pl.p.Reflections, rf)
		r.Imported.Reflections++
	}
}

// ImportKeys are the IDs that a backend looks up for ImportExisting: the
// threads of an import and those its records refer to, its messages and
// elements, its memories and those they refer to, its entities and their
// name keys.
type ImportKeys struct {
	Threads, Messages, Elements, Memories, Entities, NameKeys []string
}

// ImportKeys returns the IDs an import of x (prepared) asks about.
func (x *UserExport) ImportKeys() ImportKeys {
	var k ImportKeys
	for _, t := range x.Threads {
		k.Threads = append(k.Threads, t.Thread.ID)
		for _, m := range t.Messages {
			k.Messages = append(k.Messages, m.ID)
		}
		for _, e := range t.Elements {
			k.Elements = append(k.Elements, e.ID)
		}
	}
	for _, s := range x.Sessions {
		k.Threads = append(k.Threads, s.ThreadID)
	}
	for _, m := range x.Memories {
		k.Memories = append(k.Memories, m.ID)
		if m.SupersededBy != "" {
			k.Memories = append(k.Memories, m.SupersededBy)
		}
		if m.ThreadID != "" {
			k.Threads = append(k.Threads, m.ThreadID)
		}
		for _, r := range m.Sources {
			k.Threads = append(k.Threads, r.ThreadID)
		}
	}
	for _, e := range x.Entities {
		k.Entities = append(k.Entities, e.ID)
		key, _ := e.Keys()
		k.NameKeys = append(k.NameKeys, key)
		for _, r := range e.References {
			k.Threads = append(k.Threads, r.ThreadID)
		}
	}
	for _, r := range x.Reflections {
		k.Threads = append(k.Threads, r.ThreadID)
	}
	for _, l := range []*[]string{&k.Threads, &k.Messages, &k.Elements, &k.Memories, &k.Entities, &k.NameKeys} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return k
}

// Markdown renders a user's export to read: the profile, the agents'
// notes, the memories (invalidated ones struck through), the entities,
// then each thread in seed 002's layout.
func (x *UserExport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n**Exported**: %s\n**Threads**: %d\n**Memories**: %d\n\n", x.UserID, x.ExportedAt.Format(time.RFC3339), len(x.Threads), len(x.Memories))
	if len(x.Profiles) > 0 {
		p := x.Profiles[0] // newest first
		fmt.Fprintf(&b, "## Profile (version %d)\n\n%s\n\n", p.Version, p.Text)
	}
	current := map[string]*Notes{}
	var agents []string
	for _, n := range x.Notes {
		if current[n.AgentID] == nil {
			agents = append(agents, n.AgentID)
		}
		if c := current[n.AgentID]; c == nil || n.Version > c.Version {
			current[n.AgentID] = n
		}
	}
	for _, a := range agents {
		n := current[a]
		fmt.Fprintf(&b, "## Notes of %s (version %d)\n\n%s\n\n", a, n.Version, strings.TrimSpace(n.Content))
	}
	if len(x.Memories) > 0 {
		b.WriteString("## Memories\n\n")
		for _, m := range x.Memories {
			text := m.Text
			if m.InvalidAt != nil {
				text = "~~" + text + "~~ (invalid since " + m.InvalidAt.Format(time.DateOnly) + ")"
			}
			if m.Category != "" {
				text += " _(" + m.Category + ")_"
			}
			fmt.Fprintf(&b, "- %s\n", text)
		}
		b.WriteString("\n")
	}
	if len(x.Entities) > 0 {
		b.WriteString("## Entities\n\n")
		for _, e := range x.Entities {
			line := "- " + e.Name
			if e.Type != "" {
				line += " (" + e.Type + ")"
			}
			if n := len(e.References); n == 1 {
				line += ": referred to once"
			} else if n > 1 {
				line += fmt.Sprintf(": referred to %d times", n)
			}
			b.WriteString(line + "\n")
		}
		b.WriteString("\n")
	}
	for _, t := range x.Threads {
		b.WriteString("---\n\n")
		b.WriteString(t.Markdown())
	}
	return b.String()
}
