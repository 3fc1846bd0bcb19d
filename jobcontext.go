package agentmem

import "context"

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
