package agentmem

import (
	"context"
	"time"
	"unicode/utf8"
)

// Reflection statuses of a thread (seed 001's reflection_status).
const (
	ReflectionPending   = "pending"    // ended, awaiting reflection
	ReflectionProcessed = "processed"  // reflected: insights drawn (or aggregated with other threads)
	ReflectionNoInsight = "no-insight" // reflected, nothing significant: kept for aggregation
	// ReflectionFailed: its job failed on every attempt (a model down, a
	// malformed answer) and is a dead letter; Reason says why. Retrying it,
	// or the thread's next end, queues it again.
	ReflectionFailed = "failed"
)

// SessionTimeLayout is how a thread's time is written for people and
// models: in the context's initialisation block and in reflection prompts
// (seed 001: "12:00 PM, Dec 04, 2024").
const SessionTimeLayout = "03:04 PM, Jan 02, 2006"

// MinNoInsightThreads is how many no-insight threads accumulate before
// they are reflected on together (seed 001's MIN_SESSIONS_FOR_AGGREGATION).
const MinNoInsightThreads = 3

// Reflection is where a thread stands in reflection: after it ends, a job
// summarises it, notes its key topics and reflects on it, drawing
// insights (memories of kind insight) or none. Appending to an ended
// thread reopens it, and its next end reflects again on all of it
// (ThroughSeq moves forward).
type Reflection struct {
	UserID     string    `json:"user_id"`
	ThreadID   string    `json:"thread_id"`
	Status     string    `json:"status"`      // ReflectionPending, ReflectionProcessed, ReflectionNoInsight or ReflectionFailed
	ThroughSeq int64     `json:"through_seq"` // the last seq reflected on
	Topics     []string  `json:"topics"`      // the thread's key topics
	Insights   []string  `json:"insights"`    // IDs of the insight memories drawn from it
	Reason     string    `json:"reason"`      // why no insight, what aggregated it, or why it failed
	UpdatedAt  time.Time `json:"updated_at"`
}

// Validate checks a reflection about to be put and fills in empty lists.
func (r *Reflection) Validate() error {
	if err := ValidateUserID(r.UserID); err != nil {
		return err
	}
	if err := ValidateID("thread_id", r.ThreadID); err != nil {
		return err
	}
	if err := ValidateReflectionStatus(r.Status); err != nil {
		return err
	}
	if r.ThroughSeq < 0 {
		return Errorf(EINVALID, "through_seq must not be negative.")
	}
	if r.Topics == nil {
		r.Topics = []string{}
	}
	if r.Insights == nil {
		r.Insights = []string{}
	}
	if len(r.Topics) > MaxChunkLabels || len(r.Insights) > MaxPageSize {
		return Errorf(EINVALID, "A reflection has at most %d topics and %d insights.", MaxChunkLabels, MaxPageSize)
	}
	for _, t := range r.Topics {
		if err := ValidateText("topics", t); err != nil {
			return err
		}
	}
	for _, id := range r.Insights {
		if err := ValidateID("insights", id); err != nil {
			return err
		}
	}
	if len(r.Reason) > 4<<10 {
		return Errorf(EINVALID, "reason is longer than 4 KiB.")
	}
	return ValidateText("reason", r.Reason)
}

// ValidateReflectionStatus checks a reflection status (what
// FindReflections filters by).
func ValidateReflectionStatus(status string) error {
	switch status {
	case ReflectionPending, ReflectionProcessed, ReflectionNoInsight, ReflectionFailed:
		return nil
	}
	return Errorf(EINVALID, "status must be %q, %q, %q or %q, not %q.", ReflectionPending, ReflectionProcessed, ReflectionNoInsight, ReflectionFailed, status)
}

// PrepareReflections checks a PutReflections batch of the user's, for
// every backend: each reflection (see Reflection.Validate) and each
// insight, which must be of kind MemoryInsight and is prepared as
// CreateMemory prepares a memory at now.
func PrepareReflections(userID string, rs []*Reflection, insights []*Memory, now time.Time) error {
	if err := ValidateUserID(userID); err != nil {
		return err
	}
	for _, r := range rs {
		r.UserID = userID
		if err := r.Validate(); err != nil {
			return err
		}
	}
	for _, m := range insights {
		if m.Kind != MemoryInsight {
			return Errorf(EINVALID, "An insight's kind must be %q, not %q.", MemoryInsight, m.Kind)
		}
		m.UserID = userID
		if err := m.Prepare(now); err != nil {
			return err
		}
	}
	return nil
}

// ValidateProfileAfter checks PutProfile's after: -1, or a version (0 for
// none).
func ValidateProfileAfter(after int) error {
	if after < -1 {
		return Errorf(EINVALID, "after must be -1 (any) or the newest version (0 for none), not %d.", after)
	}
	return nil
}

// ReflectionStore stores the reflection state of threads.
type ReflectionStore interface {
	// PutReflections stores reflections of the user's threads and creates
	// the insight memories drawn from them (as CreateMemory does: IDs,
	// versions and times filled in, history written), all in one
	// transaction: either all of it is stored or none. Each reflection
	// replaces the thread's previous one. Returns ENOTFOUND if a thread
	// does not exist, EINVALID as Reflection.Validate and Memory.Validate
	// (an insight must be of kind MemoryInsight), ECONFLICT if a memory ID
	// is taken.
	PutReflections(ctx context.Context, userID string, rs []*Reflection, insights []*Memory) error

	// FindReflection returns a thread's reflection. Returns ENOTFOUND if
	// the thread has none (it never ended) or does not exist.
	FindReflection(ctx context.Context, userID, threadID string) (*Reflection, error)

	// FindReflections returns the user's reflections of a status, oldest
	// updated first, at most limit (DefaultPageSize when 0, at most
	// MaxPageSize). Soft-deleted threads' are left out. Returns EINVALID
	// for an unknown status.
	FindReflections(ctx context.Context, userID, status string, limit int) ([]*Reflection, error)
}

// Profile methods.
const (
	ProfileLLM       = "llm"       // synthesised by a model
	ProfileAssembled = "assembled" // the active memories grouped by category, no model needed
)

// MaxProfileBytes bounds a profile's text.
const MaxProfileBytes = 64 << 10

// Profile is what agentmem has learned about a user, in one text (seed
// 001's long-term insight). Each refresh stores a new version, listing
// the memories it was built from.
type Profile struct {
	UserID    string    `json:"user_id"`
	Version   int       `json:"version"` // 1, 2, 3…
	Text      string    `json:"text"`
	Method    string    `json:"method"` // ProfileLLM or ProfileAssembled
	Model     string    `json:"model,omitempty"`
	Sources   []string  `json:"sources"` // IDs of the memories it was built from
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks a profile about to be put.
func (p *Profile) Validate() error {
	if err := ValidateUserID(p.UserID); err != nil {
		return err
	}
	if p.Method != ProfileLLM && p.Method != ProfileAssembled {
		return Errorf(EINVALID, "method must be %q or %q, not %q.", ProfileLLM, ProfileAssembled, p.Method)
	}
	switch {
	case !utf8.ValidString(p.Text):
		return Errorf(EINVALID, "text is not valid UTF-8.")
	case len(p.Text) > MaxProfileBytes:
		return Errorf(ETOOLARGE, "A profile is at most %d bytes, not %d.", MaxProfileBytes, len(p.Text))
	}
	if err := ValidateText("model", p.Model); err != nil {
		return err
	}
	if p.Sources == nil {
		p.Sources = []string{}
	}
	for _, id := range p.Sources {
		if err := ValidateID("sources", id); err != nil {
			return err
		}
	}
	return nil
}

// ProfileStore stores users' profiles.
type ProfileStore interface {
	// PutProfile stores p as the user's next version (filling in Version
	// and CreatedAt) and marks the memories among processed (insights and
	// facts alike: what the profile was built from) as processed
	// (Memory.ProcessedAt), in one transaction. When after is not -1 it
	// must be the newest version's number (0: none yet), or nothing is
	// stored and ECONFLICT returned: two refreshes of one profile cannot
	// both build on the same version. Returns EINVALID as
	// Profile.Validate.
	PutProfile(ctx context.Context, p *Profile, after int, processed []string) error

	// FindProfile returns the user's newest profile. Returns ENOTFOUND if
	// there is none.
	FindProfile(ctx context.Context, userID string) (*Profile, error)

	// FindProfiles returns the user's profile versions, newest first, and
	// the next cursor ("" on the last page).
	FindProfiles(ctx context.Context, userID string, limit int, cursor string) ([]*Profile, string, error)
}
