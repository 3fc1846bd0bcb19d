package agentmem

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Thread statuses.
const (
	ThreadActive = "active" // messages may arrive; the default
	ThreadEnded  = "ended"  // closed by POST …/end; appending reopens it
)

// Limits on thread fields.
const (
	MaxTitleRunes    = 500
	MaxTags          = 64
	MaxTagBytes      = 100
	MaxMetadataBytes = 64 << 10
	AutoTitleRunes   = 80 // seed 000: the first 80 characters of the first user message
)

// Thread is one conversation of a user, optionally scoped to an agent.
type Thread struct {
	ID           string          `json:"id"`
	UserID       string          `json:"user_id"`
	AgentID      string          `json:"agent_id"`
	Title        string          `json:"title"`
	Status       string          `json:"status"`
	Metadata     json.RawMessage `json:"metadata"`
	Tags         []string        `json:"tags"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	EndedAt      *time.Time      `json:"ended_at,omitempty"`
	DeletedAt    *time.Time      `json:"deleted_at,omitempty"`
	MessageCount int64           `json:"message_count"`
	// LastSeq is the seq of the newest message (0 when empty). Equal to
	// MessageCount while messages are never deleted one by one.
	LastSeq int64 `json:"last_seq"`

	// JustEnded is set on the thread that an update returns
	// (UpdateThread, EndThread) when that update ended it: ApplyUpdate
	// moved it from active to ended. The stores apply an update to the
	// thread as their transaction has it locked, so of two calls that end
	// a thread at once (through two replicas, say) exactly one gets
	// JustEnded: the one that queues what an end queues. Never stored;
	// false on a thread read otherwise.
	JustEnded bool `json:"-"`
}

// Validate checks the client-settable fields of a thread about to be
// created and normalises empty metadata and tags. The ID may be empty (the
// store assigns one).
func (t *Thread) Validate() error {
	if err := ValidateUserID(t.UserID); err != nil {
		return err
	}
	if t.ID != "" {
		if err := ValidateID("id", t.ID); err != nil {
			return err
		}
	}
	if t.AgentID != "" {
		if err := ValidateID("agent_id", t.AgentID); err != nil {
			return err
		}
	}
	switch t.Status {
	case "":
		t.Status = ThreadActive
	case ThreadActive, ThreadEnded:
	default:
		return Errorf(EINVALID, "status must be %q or %q, not %q.", ThreadActive, ThreadEnded, t.Status)
	}
	if err := validateTitle(t.Title); err != nil {
		return err
	}
	var err error
	if t.Metadata, err = NormalizeMetadata("metadata", t.Metadata); err != nil {
		return err
	}
	if t.Tags, err = normalizeTags(t.Tags); err != nil {
		return err
	}
	return nil
}

func validateTitle(title string) error {
	if err := ValidateText("title", title); err != nil {
		return err
	} else if utf8.RuneCountInString(title) > MaxTitleRunes {
		return Errorf(EINVALID, "title is longer than %d characters.", MaxTitleRunes)
	}
	return nil
}

// NormalizeMetadata checks that raw is a JSON object (or empty, which
// becomes {}) of at most MaxMetadataBytes and returns it compacted.
func NormalizeMetadata(field string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if len(raw) > MaxMetadataBytes {
		return nil, Errorf(ETOOLARGE, "%s is larger than the limit of %d bytes.", field, MaxMetadataBytes)
	}
	if bytes.Contains(raw, []byte(`\u0000`)) {
		return nil, Errorf(EINVALID, "%s may not contain NUL characters.", field)
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, Errorf(EINVALID, "%s must be a JSON object.", field)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, Errorf(EINVALID, "%s must be a JSON object.", field)
	}
	return buf.Bytes(), nil
}

func normalizeTags(tags []string) ([]string, error) {
	if len(tags) > MaxTags {
		return nil, Errorf(EINVALID, "tags has %d entries; the limit is %d.", len(tags), MaxTags)
	}
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, tag := range tags {
		tag = strings.TrimSpace(tag)
		switch {
		case tag == "":
			return nil, Errorf(EINVALID, "tags may not contain an empty tag.")
		case ValidateText("tags", tag) != nil:
			return nil, ValidateText("tags", tag)
		case len(tag) > MaxTagBytes:
			return nil, Errorf(EINVALID, "tag %q is longer than %d bytes.", tag, MaxTagBytes)
		}
		if !seen[tag] {
			seen[tag] = true
			out = append(out, tag)
		}
	}
	return out, nil
}

// AutoTitle returns the title for a thread whose first user message is
// content: its first AutoTitleRunes characters with runs of whitespace
// folded into one space. Empty content gives "New conversation".
func AutoTitle(content string) string {
	title := strings.Join(strings.Fields(content), " ")
	if title == "" {
		return "New conversation"
	}
	if utf8.RuneCountInString(title) > AutoTitleRunes {
		title = strings.TrimSpace(string([]rune(title)[:AutoTitleRunes]))
	}
	return title
}

// ThreadFilter selects one user's threads for FindThreads. Results are
// ordered newest updated_at first (ties by id, descending).
type ThreadFilter struct {
	AgentID *string // only threads of this agent ("" means threads without an agent)
	Status  *string // only threads with this status
	// Tags selects the threads that have every one of these tags (the
	// REST API's repeatable ?tag=).
	Tags []string
	// UpdatedSince selects threads last updated at or after this time
	// (?since=), UpdatedBefore those last updated strictly before it
	// (?until=): together, a half-open interval of updated_at, the time
	// the list is ordered by.
	UpdatedSince  *time.Time
	UpdatedBefore *time.Time
	// Title selects the threads whose title contains it, ignoring the
	// case of ASCII letters at least (the REST API's ?q=); "" selects
	// every thread. Its characters are literal: % and _ are no wildcards.
	Title *string
	// IncludeDeleted also returns soft-deleted threads.
	IncludeDeleted bool
	// Deleted returns soft-deleted threads only (the threads a restore can
	// bring back); IncludeDeleted is then moot.
	Deleted bool

	Limit  int    // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor string // opaque, from a previous page's next cursor
}

// Validate checks the filter and normalises its tags as stored tags are
// (trimmed). Errors name the REST API's parameters.
func (f *ThreadFilter) Validate() error {
	if f.AgentID != nil && *f.AgentID != "" {
		if err := ValidateID("agent_id", *f.AgentID); err != nil {
			return err
		}
	}
	if f.Status != nil && *f.Status != ThreadActive && *f.Status != ThreadEnded {
		return Errorf(EINVALID, "status must be %q or %q, not %q.", ThreadActive, ThreadEnded, *f.Status)
	}
	if f.Title != nil {
		if err := ValidateText("q", *f.Title); err != nil {
			return err
		} else if utf8.RuneCountInString(*f.Title) > MaxTitleRunes {
			return Errorf(EINVALID, "q is longer than %d characters, which no title is.", MaxTitleRunes)
		}
	}
	if len(f.Tags) > MaxTags {
		return Errorf(EINVALID, "tag is given %d times; the limit is %d.", len(f.Tags), MaxTags)
	}
	tags := make([]string, len(f.Tags))
	for i, tag := range f.Tags {
		tags[i] = strings.TrimSpace(tag)
		switch {
		case tags[i] == "":
			return Errorf(EINVALID, "tag must not be empty.")
		case ValidateText("tag", tag) != nil:
			return ValidateText("tag", tag)
		case len(tags[i]) > MaxTagBytes:
			return Errorf(EINVALID, "tag %q is longer than %d bytes.", tags[i], MaxTagBytes)
		}
	}
	if f.Tags != nil {
		f.Tags = tags
	}
	for _, t := range []struct {
		field string
		t     **time.Time
	}{{"since", &f.UpdatedSince}, {"until", &f.UpdatedBefore}} {
		if *t.t == nil {
			continue
		}
		if err := ValidateTime(t.field, **t.t); err != nil {
			return err
		}
		// Stored times are whole microseconds: for them, >= t and < t
		// are >= and < t rounded up to the next microsecond.
		up := Timestamp(**t.t)
		if up.Before(**t.t) {
			up = up.Add(time.Microsecond)
		}
		*t.t = &up
	}
	return nil
}

// LikeContains returns the LIKE pattern, with \ as its escape character
// (ESCAPE '\'), that matches text containing s literally: the %, _ and \
// of s are escaped.
func LikeContains(s string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s) + "%"
}

// ThreadList is the list FindThreads pages through: the user's threads.
// The filters narrow it but keep its order, so a cursor stays good under
// another filter.
func ThreadList(userID string) CursorList { return ListOf(ListThreads, userID) }

// ThreadUpdate holds the fields of a thread that a patch may change; nil
// fields stay as they are.
type ThreadUpdate struct {
	Title    *string          `json:"title"`
	Metadata *json.RawMessage `json:"metadata"`
	Tags     *[]string        `json:"tags"`
	AgentID  *string          `json:"agent_id"`
	Status   *string          `json:"status"`

	// EndJobs, when the update ends the thread (it sets JustEnded), gives
	// the jobs its end queues, each as a list of alternatives (see
	// EnqueuePicked), and the store enqueues them in the update's own
	// transaction: a process that dies right after cannot leave the thread
	// ended with its end's work (its last chunk, its reflection) never
	// queued. Not part of the API.
	EndJobs func(t *Thread) [][]*Job `json:"-"`
}

// Validate checks and normalises the fields that are set.
func (u *ThreadUpdate) Validate() error {
	if u.Title != nil {
		if err := validateTitle(*u.Title); err != nil {
			return err
		}
	}
	if u.AgentID != nil && *u.AgentID != "" {
		if err := ValidateID("agent_id", *u.AgentID); err != nil {
			return err
		}
	}
	if u.Status != nil && *u.Status != ThreadActive && *u.Status != ThreadEnded {
		return Errorf(EINVALID, "status must be %q or %q, not %q.", ThreadActive, ThreadEnded, *u.Status)
	}
	if u.Metadata != nil {
		m, err := NormalizeMetadata("metadata", *u.Metadata)
		if err != nil {
			return err
		}
		u.Metadata = &m
	}
	if u.Tags != nil {
		tags, err := normalizeTags(*u.Tags)
		if err != nil {
			return err
		}
		u.Tags = &tags
	}
	return nil
}

// Page sizes for every list call.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// PageSize returns limit bounded to [1, MaxPageSize], DefaultPageSize for 0,
// or an EINVALID error for a negative or too large limit.
func PageSize(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultPageSize, nil
	case limit < 0:
		return 0, Errorf(EINVALID, "limit must be positive.")
	case limit > MaxPageSize:
		return 0, Errorf(EINVALID, "limit must be at most %d.", MaxPageSize)
	}
	return limit, nil
}

// ThreadStore stores threads. Every method is scoped to one user; a thread
// of another user is never found.
type ThreadStore interface {
	// FindIdleThreads returns up to limit active threads of any user (an
	// operator's sweep, as ClaimJobs is) that hold messages and were last
	// updated before idleSince, least recently updated first; soft-deleted
	// threads are left out. Ending them is the caller's.
	FindIdleThreads(ctx context.Context, idleSince time.Time, limit int) ([]*Thread, error)

	// CreateThread stores a new thread, assigning ID when empty and setting
	// the timestamps. Returns EINVALID for bad fields and ECONFLICT if the
	// user already has a thread (deleted or not) with that ID: see
	// ThreadIDTaken, whose message says when a soft-deleted thread holds
	// it.
	CreateThread(ctx context.Context, t *Thread) error

	// FindThreadByID returns a thread of the user. Returns ENOTFOUND if
	// there is none, or if it is soft-deleted.
	FindThreadByID(ctx context.Context, userID, id string) (*Thread, error)

	// FindThreads returns a page of the user's threads, newest updated
	// first, and the cursor of the next page ("" on the last page). Deep
	// pages cost what the first does (keyset pagination). Returns EINVALID
	// for a bad filter (see ThreadFilter.Validate) and for a cursor that is
	// malformed or of another list (see CursorList).
	FindThreads(ctx context.Context, userID string, filter ThreadFilter) ([]*Thread, string, error)

	// UpdateThread applies upd and returns the updated thread. Returns
	// ENOTFOUND if the thread does not exist or is soft-deleted.
	UpdateThread(ctx context.Context, userID, id string, upd ThreadUpdate) (*Thread, error)

	// EndThread sets the thread's status to ended (idempotent). Returns
	// ENOTFOUND if the thread does not exist.
	EndThread(ctx context.Context, userID, id string) (*Thread, error)

	// RestoreThread brings back a soft-deleted thread with its messages,
	// elements, summaries and reflection, and returns it; its sessions,
	// which the deletion ended, stay ended. Restoring a thread that is not
	// deleted returns it as it is. Returns ENOTFOUND if the user has no
	// thread with that ID, EINVALID for a malformed ID.
	RestoreThread(ctx context.Context, userID, id string) (*Thread, error)

	// DeleteThread soft-deletes a thread, or with permanent removes it with
	// its messages, elements, idempotency records and summaries (its jobs
	// stay; see Job). Permanent deletion also removes a soft-deleted
	// thread. Returns ENOTFOUND if there is nothing to delete.
	DeleteThread(ctx context.Context, userID, id string, permanent bool) error
}

// ThreadIDTaken is the ECONFLICT of CreateThread (and of an import) when
// the user's thread id exists already; deleted says that it is
// soft-deleted, which the message says, with the two ways to free the ID.
func ThreadIDTaken(id string, deleted bool) error {
	if deleted {
		return Errorf(ECONFLICT, "Thread %q exists but is deleted, and holds its ID until it is restored (POST …/threads/%s/restore) or deleted permanently (DELETE …/threads/%s?permanent=true).", id, id, id)
	}
	return Errorf(ECONFLICT, "Thread %q already exists.", id)
}

// ApplyUpdate applies a validated update to t at time now: set fields
// change, the status change sets or clears EndedAt (an end sets
// JustEnded), and UpdatedAt moves to now.
func (t *Thread) ApplyUpdate(upd ThreadUpdate, now time.Time) {
	if upd.Title != nil {
		t.Title = *upd.Title
	}
	if upd.Metadata != nil {
		t.Metadata = *upd.Metadata
	}
	if upd.Tags != nil {
		t.Tags = *upd.Tags
	}
	if upd.AgentID != nil {
		t.AgentID = *upd.AgentID
	}
	t.JustEnded = false
	if upd.Status != nil && *upd.Status != t.Status {
		t.Status = *upd.Status
		if t.Status == ThreadEnded {
			t.EndedAt = &now
			t.JustEnded = true
		} else {
			t.EndedAt = nil
		}
	}
	t.UpdatedAt = now
}
