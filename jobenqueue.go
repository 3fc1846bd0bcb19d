package agentmem

import (
	"context"
	"time"
)

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
