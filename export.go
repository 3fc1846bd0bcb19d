package agentmem

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ExportVersion is the version of the JSON export format written by
// ExportThread and a user's export. Import accepts this version and older
// ones: version 1 user exports have memories without history, the notes'
// current versions only, and entities without references.
const ExportVersion = 2

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
	return Errorf(ECONFLICT, "The user already has %s%s; nothing was imported. Import with on_conflict skip or replace.", strings.Join(names, ", "), more)
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

	// ImportUser stores x as userID's in one transaction, all of it or
	// none: it prepares x (PrepareUserImport), finds what the user already
	// has of it (ImportExisting) and writes what PlanImport decides —
	// clashes are reported (ClashError) before anything is written,
	// skipped, or replaced per opt. Records keep their IDs, versions,
	// history and times. Returns EINVALID for a bad export and ECONFLICT.
	ImportUser(ctx context.Context, userID string, x *UserExport, opt ImportOptions) (*ImportResult, error)

	// FindAgentIDs returns the agents the user has threads, sessions or
	// notes with, sorted, without "" (threads of no agent).
	FindAgentIDs(ctx context.Context, userID string) ([]string, error)
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

// PrepareUserImport does the work of ImportUser that needs no database,
// for every backend: it checks all of x before anything is written
// (errors name the record: "memories[3].text is required.") and moves it
// to userID: every record becomes the user's, IDs that are missing are
// assigned, times are normalised, each thread is prepared as
// PrepareImport does (a soft-deleted thread stays deleted), memories
// without history get their "add", and references name their entity.
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

// The prepare… functions each prepare the records of one kind for
// PrepareUserImport.

func prepareThreads(userID string, x *UserExport, now time.Time, tc TokenCounter) error {
	seen := map[string]bool{}
	for i, t := range x.Threads {
		if t == nil || t.Thread == nil {
			return Errorf(EINVALID, "threads[%d] has no thread.", i)
		}
		deleted := t.Thread.DeletedAt
		th, err := PrepareImport(userID, t, now, tc)
		if err != nil {
			return Errorf(EINVALID, "threads[%d]: %s", i, ErrorMessage(err))
		}
		th.DeletedAt = timestampPtr(deleted) // PrepareImport makes a live thread
		t.Thread = th
		if seen[th.ID] {
			return Errorf(EINVALID, "threads[%d].thread.id %q appears twice.", i, th.ID)
		}
		seen[th.ID] = true
	}
	return nil
}

func prepareSessions(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	for i, s := range x.Sessions {
		if s == nil {
			return Errorf(EINVALID, "sessions[%d] is null.", i)
		}
		if err := ValidateID(fmt.Sprintf("sessions[%d].agent_id", i), s.AgentID); err != nil {
			return err
		}
		if err := ValidateID(fmt.Sprintf("sessions[%d].thread_id", i), s.ThreadID); err != nil {
			return err
		}
		s.UserID, s.UpdatedAt = userID, stamp(s.UpdatedAt, now)
	}
	return nil
}

func prepareNotes(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	for i, n := range x.Notes {
		if n == nil {
			return Errorf(EINVALID, "notes[%d] is null.", i)
		}
		if err := ValidateID(fmt.Sprintf("notes[%d].agent_id", i), n.AgentID); err != nil {
			return err
		}
		if n.Version < 1 {
			return Errorf(EINVALID, "notes[%d].version must be 1 or more, not %d.", i, n.Version)
		}
		if len(n.Content) > MaxNotesBytes {
			return Errorf(ETOOLARGE, "notes[%d].content is %d bytes; the limit is %d.", i, len(n.Content), MaxNotesBytes)
		}
		if err := ValidateText(fmt.Sprintf("notes[%d].content", i), n.Content); err != nil {
			return err
		}
		n.UserID, n.UpdatedAt = userID, stamp(n.UpdatedAt, now)
		n.Operation = cmp.Or(n.Operation, NotesOverwrite)
	}
	return nil
}

func prepareMemories(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	for i, m := range x.Memories {
		if m == nil || m.Memory == nil {
			return Errorf(EINVALID, "memories[%d] is null.", i)
		}
		m.UserID = userID
		if m.ID == "" {
			m.ID = NewID()
		}
		if err := m.Validate(); err != nil {
			return Errorf(EINVALID, "memories[%d]: %s", i, ErrorMessage(err))
		}
		if m.Version < 1 {
			m.Version = 1
		}
		m.CreatedAt, m.UpdatedAt, m.ValidFrom = stamp(m.CreatedAt, now), stamp(m.UpdatedAt, now), stamp(m.ValidFrom, now)
		m.InvalidAt, m.ProcessedAt = timestampPtr(m.InvalidAt), timestampPtr(m.ProcessedAt)
		if len(m.History) == 0 {
			m.History = []*MemoryChange{m.Change(OpAdd, "")}
		}
		for j, c := range m.History {
			if c == nil {
				return Errorf(EINVALID, "memories[%d].history[%d] is null.", i, j)
			}
			c.MemoryID, c.At = m.ID, stamp(c.At, now)
		}
	}
	return nil
}

func prepareProfiles(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	for i, p := range x.Profiles {
		if p == nil {
			return Errorf(EINVALID, "profiles[%d] is null.", i)
		}
		p.UserID = userID
		if p.Version < 1 {
			return Errorf(EINVALID, "profiles[%d].version must be 1 or more, not %d.", i, p.Version)
		}
		if err := p.Validate(); err != nil {
			return Errorf(EINVALID, "profiles[%d]: %s", i, ErrorMessage(err))
		}
		p.CreatedAt = stamp(p.CreatedAt, now)
	}
	return nil
}

func prepareEntities(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	for i, e := range x.Entities {
		if e == nil || e.Entity == nil {
			return Errorf(EINVALID, "entities[%d] is null.", i)
		}
		e.UserID = userID
		if e.ID == "" {
			e.ID = NewID()
		}
		if err := e.Validate(); err != nil {
			return Errorf(EINVALID, "entities[%d]: %s", i, ErrorMessage(err))
		}
		e.CreatedAt, e.UpdatedAt = stamp(e.CreatedAt, now), stamp(e.UpdatedAt, now)
		for j, r := range e.References {
			if r == nil {
				return Errorf(EINVALID, "entities[%d].references[%d] is null.", i, j)
			}
			r.EntityID, r.Entity = e.ID, nil
			if err := r.Validate(now); err != nil {
				return Errorf(EINVALID, "entities[%d].references[%d]: %s", i, j, ErrorMessage(err))
			}
			r.At = Timestamp(r.At)
		}
	}
	return nil
}

func prepareReflections(userID string, x *UserExport, now time.Time, _ TokenCounter) error {
	for i, r := range x.Reflections {
		if r == nil {
			return Errorf(EINVALID, "reflections[%d] is null.", i)
		}
		r.UserID = userID
		if err := r.Validate(); err != nil {
			return Errorf(EINVALID, "reflections[%d]: %s", i, ErrorMessage(err))
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
// backend finds it in the import's transaction (see PlanImport).
type ImportExisting struct {
	Threads     map[string]bool   // thread IDs
	Messages    map[string]string // message ID → the thread that has it
	Sessions    map[string]bool   // agent IDs
	NotesAgents map[string]bool   // agents with notes
	Profiles    bool              // any profile version
	Memories    map[string]bool   // memory IDs
	Entities    map[string]bool   // entity IDs
	EntityNames map[string]string // name key → entity ID
	Reflections map[string]bool   // thread IDs
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
// OnConflictReplace the user's clashing record is deleted first.
func PlanImport(x *UserExport, have ImportExisting, opt ImportOptions) (*ImportPlan, error) {
	pl := &planner{x: x, have: have, onConflict: cmp.Or(opt.OnConflict, OnConflictFail),
		p:       &ImportPlan{Result: &ImportResult{ThreadIDs: []string{}, MemoryIDs: []string{}}},
		deleted: map[string]bool{}, skippedThreads: map[string]bool{}}
	pl.threads() // first: the others leave out what belongs to a skipped thread
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
		// A thread clashes by its ID or by a message ID that the user
		// has, in this thread or in another (owners).
		clash := pl.have.Threads[id]
		var owners []string
		for _, m := range t.Messages {
			if owner, ok := pl.have.Messages[m.ID]; ok {
				clash = true
				if owner != id {
					owners = append(owners, owner)
				}
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

func (pl *planner) sessions() {
	r := pl.p.Result
	for _, s := range pl.x.Sessions {
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
	for _, n := range pl.x.Notes {
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
	r, x := pl.p.Result, pl.x
	if len(x.Profiles) == 0 {
		return
	}
	switch pl.decide(pl.have.Profiles, "profiles", "versions") {
	case importNew:
		pl.p.Profiles = x.Profiles
	case importReplace:
		pl.p.DeleteProfiles, pl.p.Profiles = true, x.Profiles
		r.Replaced.Profiles = len(x.Profiles)
	case importSkip:
		r.Skipped.Profiles = len(x.Profiles)
	}
	r.Imported.Profiles = len(pl.p.Profiles)
}

func (pl *planner) memories() {
	r := pl.p.Result
	for _, m := range pl.x.Memories {
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
	for _, e := range pl.x.Entities {
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
	for _, rf := range pl.x.Reflections {
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

// ImportIDs returns the IDs an import of x asks about, for a backend's
// lookup of what the user has (ImportExisting): threads, messages,
// memories, entities and their name keys.
func (x *UserExport) ImportIDs() (threads, messages, memories, entities, nameKeys []string) {
	for _, t := range x.Threads {
		threads = append(threads, t.Thread.ID)
		for _, m := range t.Messages {
			messages = append(messages, m.ID)
		}
	}
	for _, m := range x.Memories {
		memories = append(memories, m.ID)
	}
	for _, e := range x.Entities {
		entities = append(entities, e.ID)
		key, _ := e.Keys()
		nameKeys = append(nameKeys, key)
	}
	return threads, messages, memories, entities, nameKeys
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
