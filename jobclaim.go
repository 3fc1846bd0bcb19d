package agentmem

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

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
