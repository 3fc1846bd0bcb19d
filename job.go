package agentmem

import (
	"context"
	"encoding/json"
	"time"
)

// Job statuses.
const (
	JobQueued  = "queued"  // waiting for RunAt
	JobRunning = "running" // leased by a worker until LeaseUntil
	JobDone    = "done"    // finished
	JobDead    = "dead"    // failed MaxAttempts times: a dead letter, kept for operators
)

// DefaultJobAttempts is how many times a job runs before it is dead.
const DefaultJobAttempts = 5

// Job is durable background work (summarise, chunk, extract, reflect,
// embed) of one user, stored in the database. Workers lease jobs: a job
// runs at least once, and a job whose worker died runs again when its
// lease expires, so every handler must be idempotent (a summary covers a
// seq range, so running it twice stores it once).
//
// Jobs are user data (DeleteUser erases them) but do not hang off a
// thread: permanently deleting a thread leaves its jobs, so a handler must
// treat a thread that no longer exists as work that is done, not as a
// failure to retry.
type Job struct {
	ID     string `json:"id"`
	UserID string `json:"user_id"`
	Kind   string `json:"kind"` // e.g. "summarize"
	// Key deduplicates: while a job of the same user, kind and key is
	// queued or running, enqueueing another returns that one. E.g. the
	// thread ID for a thread's summary. Empty at enqueue, it becomes the
	// job's ID: a job without a key is never deduplicated.
	Key string `json:"key"`
	// Serial, when set, serialises: two jobs of the same user and Serial
	// never run at once, whatever their kinds and keys, in one process or
	// many sharing the database (see ClaimJobs). E.g. "index" for the
	// jobs that consolidate a user's memories, which would otherwise add
	// one statement twice. Empty: the job runs beside any other.
	Serial      string          `json:"serial,omitempty"`
	Payload     json.RawMessage `json:"payload"`
	Status      string          `json:"status"`
	Attempts    int             `json:"attempts"`     // runs begun so far
	MaxAttempts int             `json:"max_attempts"` // DefaultJobAttempts when 0 at enqueue
	RunAt       time.Time       `json:"run_at"`       // not before
	LeaseOwner  string          `json:"lease_owner,omitempty"`
	LeaseUntil  *time.Time      `json:"lease_until,omitempty"`
	LastError   string          `json:"last_error,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// JobFilter selects jobs for FindJobs, newest updated first (ties by user
// and id, descending).
type JobFilter struct {
	Status *string // only jobs with this status (EINVALID for an unknown one)
	Kind   *string // only jobs of this kind
	UserID *string // only jobs of this user
	Limit  int     // page size; 0 means DefaultPageSize, capped at MaxPageSize
	Cursor string  // opaque, from a previous page's next cursor
}

// JobStore is the durable job queue.
type JobStore interface {
	// EnqueueJob stores j as queued (see Job.Prepare: ID, Key, times and
	// MaxAttempts filled in when empty; RunAt defaults to now) and returns
	// it; if a job of the same user, kind and key is already queued or
	// running, it returns that job instead and stores nothing, also when
	// several enqueue at once. Returns EINVALID for a missing user, kind or
	// a payload that is not a JSON object (see Job.Prepare), and ECONFLICT
	// if the user has another job with j's ID. Enqueued by a job of
	// another user (ctx of WithJob), it returns ENOTFOUND when j's user
	// does not exist (erased since the job listed it), and stores nothing.
	EnqueueJob(ctx context.Context, j *Job) (*Job, error)

	// ClaimJobs leases up to n jobs of the given kinds (all kinds when
	// empty) of any user to owner until now+lease, oldest RunAt first:
	// queued jobs whose RunAt has come, and running jobs whose lease
	// expired (their worker died). Each claim increments Attempts; a
	// running job whose lease expired on its last attempt becomes dead
	// instead (see Job.Claim), so fewer than n may come back while more
	// are due. Two concurrent callers, in one process or many sharing the
	// database, never claim the same job.
	//
	// A job with a Serial is due only while no other job of its user and
	// Serial is running under a lease that has not expired, and of the
	// due jobs of one user and Serial a claim takes the first alone, so
	// that they run one at a time (also between concurrent callers). A
	// job whose worker died frees its Serial when its lease expires.
	// Returns EINVALID for bad arguments (see ValidateClaim).
	ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*Job, error)

	// CompleteJob marks a job done. Returns ECONFLICT if owner no longer
	// holds its lease (it expired and another worker took the job) or the
	// job is not running, and ENOTFOUND if there is no such job. A lease
	// that expired while no other worker took the job still counts as
	// held (see Job.Complete).
	CompleteJob(ctx context.Context, userID, id, owner string) error

	// FailJob records a failed run with its error message (LastError): the
	// job is queued again to run at retryAt with its lease cleared, or dead
	// when it has used its MaxAttempts (see Job.Fail). Returns ECONFLICT
	// and ENOTFOUND as CompleteJob.
	FailJob(ctx context.Context, userID, id, owner, errMsg string, retryAt time.Time) error

	// ReleaseJob hands a running job back without a verdict (its worker is
	// stopping): the job is queued again, runnable at once, with its lease
	// cleared, and the attempt it was on is not counted (see Job.Release).
	// Returns ECONFLICT and ENOTFOUND as CompleteJob.
	ReleaseJob(ctx context.Context, userID, id, owner string) error

	// RetryJob queues a dead job of the user again, as an operator or the
	// user decides once its cause is fixed: runnable at once, with all its
	// MaxAttempts again and no lease, keeping its LastError (why it died,
	// until a new failure replaces it; see Job.Retry). Returns ENOTFOUND if there
	// is no such job, and ECONFLICT if it is not dead, or if a job of the
	// same user, kind and key is queued or running (only one may be: the
	// dead job stays dead, and that one does its work).
	RetryJob(ctx context.Context, userID, id string) (*Job, error)

	// FindJobs returns a page of jobs of every user (an operator's view),
	// newest updated first, and the next cursor ("" on the last page).
	// Returns EINVALID for a malformed cursor or an unknown status.
	FindJobs(ctx context.Context, filter JobFilter) ([]*Job, string, error)

	// FindJobBacklog returns, for each kind of job with work waiting, how
	// many of its jobs are queued or running and when the oldest of them
	// was enqueued, in kind order; an empty slice when there is none. It
	// reads every user's jobs (an operator's view, for /metrics).
	FindJobBacklog(ctx context.Context) ([]JobBacklog, error)

	// FindActiveJobs returns the user's queued and running jobs of kind
	// whose key begins with keyPrefix, oldest first; an empty slice when
	// there are none. It reads the user's active jobs of that kind only
	// (package index reads a thread's indexing lag from its index jobs).
	FindActiveJobs(ctx context.Context, userID, kind, keyPrefix string) ([]*Job, error)

	// DeleteDoneJobs deletes at most limit (1 to MaxPageSize) jobs of any
	// user that are done and were last updated before before, oldest
	// first, and returns how many it deleted. Queued, running and dead
	// jobs are kept. Returns EINVALID for a limit out of range.
	DeleteDoneJobs(ctx context.Context, before time.Time, limit int) (int64, error)
}

// JobBacklog is the work waiting of one kind of job: its jobs queued or
// running, and the enqueue time of the oldest.
type JobBacklog struct {
	Kind   string    `json:"kind"`
	Jobs   int64     `json:"jobs"`
	Oldest time.Time `json:"oldest"`
}

// Limits on job fields.
const (
	MaxJobKeyBytes   = 512     // Key, and Serial
	MaxJobErrorBytes = 4 << 10 // LastError keeps this much of a failure's message
)

// Prepare checks a job about to be enqueued and fills in what EnqueueJob
// fills in, for every backend: the ID when empty, the Key (the ID when
// empty, so a job without a key is never deduplicated), MaxAttempts
// (DefaultJobAttempts when 0), RunAt (now when zero), the queued status
// with no attempts, lease or error, and the times. Returns EINVALID for a
// missing user or kind, a bad ID, key, serial, time or MaxAttempts, or a payload
// that is not a JSON object (ETOOLARGE beyond MaxMetadataBytes).
func (j *Job) Prepare(now time.Time) error {
	if err := ValidateUserID(j.UserID); err != nil {
		return err
	}
	if err := ValidateID("kind", j.Kind); err != nil {
		return err
	}
	if j.ID != "" {
		if err := ValidateID("id", j.ID); err != nil {
			return err
		}
	}
	if err := ValidateText("key", j.Key); err != nil {
		return err
	} else if len(j.Key) > MaxJobKeyBytes {
		return Errorf(EINVALID, "key is longer than %d bytes.", MaxJobKeyBytes)
	}
	if err := ValidateText("serial", j.Serial); err != nil {
		return err
	} else if len(j.Serial) > MaxJobKeyBytes {
		return Errorf(EINVALID, "serial is longer than %d bytes.", MaxJobKeyBytes)
	}
	if j.MaxAttempts < 0 {
		return Errorf(EINVALID, "max_attempts must not be negative.")
	}
	if err := ValidateTime("run_at", j.RunAt); err != nil {
		return err
	}
	payload, err := NormalizeMetadata("payload", j.Payload)
	if err != nil {
		return err
	}
	if j.ID == "" {
		j.ID = NewID()
	}
	if j.Key == "" {
		j.Key = j.ID
	}
	if j.MaxAttempts == 0 {
		j.MaxAttempts = DefaultJobAttempts
	}
	if j.RunAt.IsZero() {
		j.RunAt = now
	} else {
		j.RunAt = Timestamp(j.RunAt)
	}
	j.Payload, j.Status, j.Attempts, j.LeaseOwner, j.LeaseUntil, j.LastError = payload, JobQueued, 0, "", nil, ""
	j.CreatedAt, j.UpdatedAt = now, now
	return nil
}

// Validate checks the filter's text (see validateTextFilters) and status.
func (f *JobFilter) Validate() error {
	if err := validateTextFilters(textFilter{"status", f.Status}, textFilter{"kind", f.Kind}, textFilter{"user_id", f.UserID}); err != nil {
		return err
	}
	if f.Status != nil {
		switch *f.Status {
		case JobQueued, JobRunning, JobDone, JobDead:
		default:
			return Errorf(EINVALID, "status must be %s, %s, %s or %s, not %q.", JobQueued, JobRunning, JobDone, JobDead, *f.Status)
		}
	}
	return nil
}

// JobCursor is the keyset position of FindJobs: the last job's updated_at
// in Unix microseconds, user and id (job IDs are unique per user only).
type JobCursor struct {
	UpdatedAt int64  `json:"u"`
	UserID    string `json:"s"`
	ID        string `json:"i"`
}

// JobPage cuts a result fetched with limit+1 rows to limit and returns the
// cursor in list of the next page ("" when there is none).
func JobPage(jobs []*Job, limit int, list CursorList) ([]*Job, string) {
	return CutPage(jobs, limit, list, func(last *Job) any {
		return JobCursor{UpdatedAt: last.UpdatedAt.UnixMicro(), UserID: last.UserID, ID: last.ID}
	})
}
