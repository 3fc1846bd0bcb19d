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
