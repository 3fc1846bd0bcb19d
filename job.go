package agentmem

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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

// PickJob decides which of the alternatives that AppendOptions.Jobs
// returned an append stores, by the rule given there: active returns the
// status of the queued or running job of the appending user with an
// alternative's kind and key ("" when there is none). An alternative
// without a Key would be keyed by its new ID, so none is active for it.
// PickJob returns the index of the job to store, or -1 when a queued job
// already covers the batch, or every key has a running job. Only the job
// picked is checked, by PrepareJob.
func PickJob(alts []*Job, active func(j *Job) (string, error)) (int, error) {
	for i, j := range alts {
		if j == nil {
			return -1, Errorf(EINVALID, "jobs[%d] is missing.", i)
		}
		if j.Key == "" {
			return i, nil
		}
		status, err := active(j)
		switch {
		case err != nil:
			return -1, err
		case status == "":
			return i, nil
		case status == JobQueued:
			return -1, nil
		}
	}
	return -1, nil
}

// EnqueuePicked enqueues the job of alts that PickJob would pick, one
// EnqueueJob at a time, outside of an append: the first alternative whose
// key has no active job is stored, and one whose key has a queued job
// covers the request (that job starts after the caller's change, which
// it reads); a key whose job is running is passed over, as that job may
// have read what the caller changed before. It returns the job that
// covers the request, or nil when every key has a running job. Give the
// alternatives a Serial when their jobs must not run side by side.
func EnqueuePicked(ctx context.Context, jobs JobStore, alts []*Job) (*Job, error) {
	for _, alt := range alts {
		j, err := jobs.EnqueueJob(ctx, alt)
		if err != nil {
			return nil, err
		}
		if j.Status == JobQueued {
			return j, nil
		}
	}
	return nil, nil
}

// PrepareJob checks the job that PickJob picked for an append of userID
// and returns a copy of it prepared to be stored (see Prepare), so that
// the caller's job is filled in only once it is stored. A job is the
// appending user's: an empty UserID is taken as userID, another one is
// EINVALID.
func PrepareJob(userID string, j *Job, now time.Time) (*Job, error) {
	c := *j
	if c.UserID == "" {
		c.UserID = userID
	} else if c.UserID != userID {
		return nil, Errorf(EINVALID, "A job of an append must be the appending user's.")
	}
	if err := c.Prepare(now); err != nil {
		return nil, err
	}
	return &c, nil
}

// ValidateClaim checks the arguments of ClaimJobs: an owner (an ID), kinds
// that are IDs, 1 to MaxPageSize jobs and a positive lease.
func ValidateClaim(owner string, kinds []string, n int, lease time.Duration) error {
	if err := ValidateID("owner", owner); err != nil {
		return err
	}
	for _, k := range kinds {
		if err := ValidateID("kind", k); err != nil {
			return err
		}
	}
	if n < 1 || n > MaxPageSize {
		return Errorf(EINVALID, "n must be between 1 and %d.", MaxPageSize)
	}
	if lease <= 0 {
		return Errorf(EINVALID, "lease must be positive.")
	}
	return nil
}

// Claim leases j, which ClaimJobs found due at now (queued with RunAt
// come, or running with its lease expired), to owner until now+lease and
// counts the attempt. A running job whose lease expired on its last
// attempt is not claimed again: its worker died MaxAttempts times, so the
// job itself is the likely cause (a poison pill), and it becomes dead.
// Claim reports whether j was claimed.
func (j *Job) Claim(owner string, now time.Time, lease time.Duration) bool {
	j.UpdatedAt = now
	if j.exhausted() {
		j.Status, j.LeaseUntil = JobDead, nil
		j.LastError = fmt.Sprintf("the lease of %s expired on attempt %d of %d: the worker stopped before finishing", j.LeaseOwner, j.Attempts, j.MaxAttempts)
		return false
	}
	until := Timestamp(now.Add(lease))
	j.Status, j.LeaseOwner, j.LeaseUntil = JobRunning, owner, &until
	j.Attempts++
	return true
}

// exhausted reports whether j, found due, is running on its last attempt:
// its lease expired, and Claim makes it dead.
func (j *Job) exhausted() bool { return j.Status == JobRunning && j.Attempts >= j.MaxAttempts }

// ClaimScan is how many due jobs ClaimJobs reads to claim n: more than
// n, so that the jobs of a serial waiting behind the one PickDue takes do
// not hold up the jobs after them.
func ClaimScan(n int) int { return 4 * n }

// PickDue decides, for ClaimJobs, what to do with the due jobs it found
// (oldest RunAt first; those of a Serial with a job running under a
// lease already left out): pick holds the jobs to claim, at most n, every
// job without a Serial but only the first of each user and Serial; die
// holds the jobs whose lease expired on their last attempt, which Claim
// makes dead, and which take no place among the n. The other jobs stay
// as they are.
func PickDue(due []*Job, n int) (pick, die []*Job) {
	type serial struct{ user, serial string }
	taken := map[serial]bool{}
	for _, j := range due {
		switch {
		case j.exhausted():
			die = append(die, j)
		case len(pick) == n:
		case j.Serial == "":
			pick = append(pick, j)
		case !taken[serial{j.UserID, j.Serial}]:
			taken[serial{j.UserID, j.Serial}] = true
			pick = append(pick, j)
		}
	}
	return pick, die
}

// Complete marks j done at now. The lease owner stays recorded as the
// worker that finished it. Returns ECONFLICT unless j is running and owner
// holds its lease; a lease that expired without another worker taking the
// job still counts as held.
func (j *Job) Complete(owner string, now time.Time) error {
	if err := j.checkLease(owner); err != nil {
		return err
	}
	j.Status, j.LeaseUntil, j.UpdatedAt = JobDone, nil, now
	return nil
}

// Fail records a failed run of j at now with the error message errMsg
// (made valid UTF-8 without NUL and cut to MaxJobErrorBytes): j is dead
// when it has used its MaxAttempts, and otherwise queued again to run at
// retryAt (now when zero) with its lease cleared. Returns ECONFLICT as
// Complete does.
func (j *Job) Fail(owner, errMsg string, retryAt, now time.Time) error {
	if err := j.checkLease(owner); err != nil {
		return err
	}
	j.LastError, j.LeaseUntil, j.UpdatedAt = jobError(errMsg), nil, now
	if j.Attempts >= j.MaxAttempts {
		j.Status = JobDead
		return nil
	}
	if retryAt.IsZero() {
		retryAt = now
	}
	j.Status, j.RunAt, j.LeaseOwner = JobQueued, Timestamp(retryAt), ""
	return nil
}

// Release hands j back at now, as its worker stops before finishing it:
// j is queued again to run at once, its lease cleared, and the claim of
// this attempt undone (Attempts decremented), so that a graceful stop
// costs a job none of its MaxAttempts. Returns ECONFLICT as Complete does.
func (j *Job) Release(owner string, now time.Time) error {
	if err := j.checkLease(owner); err != nil {
		return err
	}
	j.Status, j.RunAt, j.LeaseOwner, j.LeaseUntil, j.UpdatedAt = JobQueued, now, "", nil, now
	j.Attempts = max(j.Attempts-1, 0)
	return nil
}

// Retry queues j, a dead job, again at now: runnable at once, its
// attempts back to 0 and its lease cleared. LastError stays, so that one
// sees why it died (until a new failure replaces it). Returns ECONFLICT
// unless j is dead.
func (j *Job) Retry(now time.Time) error {
	if j.Status != JobDead {
		return Errorf(ECONFLICT, "Job %q is %s; only a dead job can be retried.", j.ID, j.Status)
	}
	j.Status, j.Attempts, j.RunAt, j.LeaseOwner, j.LeaseUntil, j.UpdatedAt = JobQueued, 0, now, "", nil, now
	return nil
}

// JobKeyTaken is the ECONFLICT of RetryJob for the dead job id whose
// kind and key have another job queued or running.
func JobKeyTaken(id string) error {
	return Errorf(ECONFLICT, "Job %q cannot be retried: an equal job (same kind and key) is already queued or running.", id)
}

func (j *Job) checkLease(owner string) error {
	switch {
	case j.Status != JobRunning:
		return Errorf(ECONFLICT, "Job %q is %s, not running.", j.ID, j.Status)
	case j.LeaseOwner != owner:
		return Errorf(ECONFLICT, "Job %q is leased to another worker.", j.ID)
	}
	return nil
}

// jobError makes errMsg storable as LastError: valid UTF-8 without NUL
// characters (PostgreSQL text cannot hold them), at most MaxJobErrorBytes.
func jobError(errMsg string) string {
	msg := strings.ReplaceAll(strings.ToValidUTF8(errMsg, "\uFFFD"), "\x00", "")
	if msg == "" {
		return "failed without an error message"
	}
	if len(msg) > MaxJobErrorBytes {
		cut := MaxJobErrorBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	return msg
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

type backgroundKey struct{}

// WithBackground returns ctx marked as background work: a job's
// (indexing, summaries, reflection), which no request waits for. A store
// may let the request path's writes go first and write background work
// in slices of their own transactions: SQLite's single writer does, so
// that an append waits for at most one slice of an index job.
func WithBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx is marked as background work
// (WithBackground).
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// JobRun names a run of a job: the job, and the worker that holds its
// lease (Job.LeaseOwner).
type JobRun struct {
	UserID, ID, Owner string
}

type jobRunKey struct{}

// WithJob returns ctx as the context of a run of j, leased to j.LeaseOwner
// (worker.Pool gives it to each job's handler). A store makes the writes
// of such a ctx only while the job is still there and leased to that
// owner, checked in the write's own transaction (see CheckJobRun): a job
// that began before its user's erasure stores nothing after it, since
// DeleteUser deletes the user's jobs with the rest, and a run whose lease
// passed to another worker leaves the work to that one.
func WithJob(ctx context.Context, j *Job) context.Context {
	return context.WithValue(ctx, jobRunKey{}, JobRun{UserID: j.UserID, ID: j.ID, Owner: j.LeaseOwner})
}

// JobRunFromContext returns the run of WithJob, if ctx is a job's.
func JobRunFromContext(ctx context.Context) (JobRun, bool) {
	r, ok := ctx.Value(jobRunKey{}).(JobRun)
	return r, ok
}

// CheckJobRun tells whether a write of run may be made, given what the
// write's transaction found of its job: found, with status and owner.
// Returns ENOTFOUND when the job is gone (its user was erased: the write
// must store nothing, and the handler has nothing left to do) and
// ECONFLICT when it is no longer running under run's owner.
func CheckJobRun(run JobRun, found bool, status, owner string) error {
	if !found {
		return Errorf(ENOTFOUND, "Job %s of user %q no longer exists (its user was erased): its writes are not stored.", run.ID, run.UserID)
	}
	if status != JobRunning || owner != run.Owner {
		return Errorf(ECONFLICT, "Job %s of user %q is no longer leased to %s: its writes are not stored.", run.ID, run.UserID, run.Owner)
	}
	return nil
}
