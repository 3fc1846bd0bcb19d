package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
)

const jobColumns = `user_id, id, kind, key, serial, payload, status, attempts, max_attempts, run_at, lease_owner, lease_until, last_error, created_at, updated_at`

func scanJob(row interface{ Scan(...any) error }) (*agentmem.Job, error) {
	var (
		j                       agentmem.Job
		payload                 string
		runAt, created, updated int64
		leaseUntil              sql.NullInt64
	)
	if err := row.Scan(&j.UserID, &j.ID, &j.Kind, &j.Key, &j.Serial, &payload, &j.Status, &j.Attempts, &j.MaxAttempts, &runAt,
		&j.LeaseOwner, &leaseUntil, &j.LastError, &created, &updated); err != nil {
		return nil, err
	}
	j.Payload = json.RawMessage(payload)
	j.RunAt, j.LeaseUntil = fromMicros(runAt), fromNullMicros(leaseUntil)
	j.CreatedAt, j.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &j, nil
}

func scanJobs(rows *sql.Rows) ([]*agentmem.Job, error) {
	defer rows.Close()
	var jobs []*agentmem.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("scan job: %w", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

func notFoundJob(id string) error {
	return agentmem.Errorf(agentmem.ENOTFOUND, "Job %q not found.", id)
}

func findJob(ctx context.Context, tx *sql.Tx, userID, id string) (*agentmem.Job, error) {
	j, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE user_id = ? AND id = ?`, userID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFoundJob(id)
	} else if err != nil {
		return nil, fmt.Errorf("find job: %w", err)
	}
	return j, nil
}

// Statements of EnqueueJob and of the jobs of appends (hot writes, see
// writeStmt): the active job of a key is found in jobs_active_key.
const (
	findActiveJobQuery = `SELECT ` + jobColumns + ` FROM jobs
		WHERE user_id = ? AND kind = ? AND key = ? AND status IN ('queued', 'running')`
	findActiveJobStatusQuery = `SELECT status FROM jobs
		WHERE user_id = ? AND kind = ? AND key = ? AND status IN ('queued', 'running')`
	insertJobQuery = `INSERT INTO jobs (` + jobColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// EnqueueJob implements agentmem.JobStore. The write loop runs one write
// at a time, so no other enqueue comes between the lookup of the active
// job of the key and the insert; jobs_active_key only backs that up.
func (s *Store) EnqueueJob(ctx context.Context, j *agentmem.Job) (*agentmem.Job, error) {
	if err := j.Prepare(s.now()); err != nil {
		return nil, err
	}
	var out *agentmem.Job
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := checkEnqueuedUser(ctx, tx, j.UserID); err != nil {
			return err
		}
		st, err := s.writeStmt(ctx, tx, findActiveJobQuery)
		if err != nil {
			return fmt.Errorf("prepare find active job: %w", err)
		}
		active, err := scanJob(st.QueryRowContext(ctx, j.UserID, j.Kind, j.Key))
		if err == nil {
			out = active
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("find active job: %w", err)
		}
		if err := s.insertJob(ctx, tx, j); err != nil {
			return err
		}
		out = j
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkEnqueuedUser, in a job's enqueueing of a job of another user (the
// reembed-all job enqueues one per user it lists), returns ENOTFOUND if
// that user no longer exists: erased since it was listed (see
// agentmem.JobStore.EnqueueJob).
func checkEnqueuedUser(ctx context.Context, tx *sql.Tx, userID string) error {
	run, ok := agentmem.JobRunFromContext(ctx)
	if !ok || run.UserID == userID {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE user_id = ?`, userID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return agentmem.Errorf(agentmem.ENOTFOUND, "User %q not found.", userID)
	} else if err != nil {
		return fmt.Errorf("find user: %w", err)
	}
	return nil
}

func (s *Store) insertJob(ctx context.Context, tx *sql.Tx, j *agentmem.Job) error {
	_, err := s.writeExec(ctx, tx, insertJobQuery,
		j.UserID, j.ID, j.Kind, j.Key, j.Serial, string(j.Payload), j.Status, j.Attempts, j.MaxAttempts, micros(j.RunAt),
		j.LeaseOwner, nullMicros(j.LeaseUntil), j.LastError, micros(j.CreatedAt), micros(j.UpdatedAt))
	if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
		return agentmem.Errorf(agentmem.ECONFLICT, "Job %q already exists.", j.ID)
	} else if err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

// enqueueAlternatives stores in tx, the transaction of an append, the job
// that agentmem.PickJob picks of alts (see agentmem.AppendOptions.Jobs).
// The lookups and the insert run in the write loop, which claims jobs too,
// so no claim comes between them and the commit: a queued job found here
// is claimed, and reads the thread, after the batch is committed. Under
// steady appends to a thread, this is one lookup of its queued shared job
// and no write.
func (s *Store) enqueueAlternatives(ctx context.Context, tx *sql.Tx, userID string, alts []*agentmem.Job, now time.Time) error {
	if len(alts) == 0 {
		return nil
	}
	st, err := s.writeStmt(ctx, tx, findActiveJobStatusQuery)
	if err != nil {
		return fmt.Errorf("prepare find active job: %w", err)
	}
	i, err := agentmem.PickJob(alts, func(j *agentmem.Job) (string, error) {
		var status string
		err := st.QueryRowContext(ctx, userID, j.Kind, j.Key).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		} else if err != nil {
			return "", fmt.Errorf("find active job: %w", err)
		}
		return status, nil
	})
	if err != nil || i < 0 {
		return err
	}
	j, err := agentmem.PrepareJob(userID, alts[i], now)
	if err != nil {
		return err
	}
	if err := s.insertJob(ctx, tx, j); err != nil {
		return err
	}
	*alts[i] = *j
	return nil
}

// updateJob writes every mutable field of j.
func updateJob(ctx context.Context, tx *sql.Tx, j *agentmem.Job) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET status = ?, attempts = ?, run_at = ?, lease_owner = ?, lease_until = ?, last_error = ?, updated_at = ?
		WHERE user_id = ? AND id = ?`,
		j.Status, j.Attempts, micros(j.RunAt), j.LeaseOwner, nullMicros(j.LeaseUntil), j.LastError, micros(j.UpdatedAt), j.UserID, j.ID)
	if err != nil {
		return fmt.Errorf("update job: %w", err)
	}
	return nil
}

// ClaimJobs implements agentmem.JobStore.
//
//	SELECT … FROM jobs j WHERE ((status = 'queued' AND run_at <= now) OR (status = 'running' AND lease_until < now))
//	  [AND kind IN (…)]
//	  AND (serial = '' OR NOT EXISTS (a job of j's user and serial running with lease_until >= now))
//	ORDER BY run_at LIMIT claimScan(n)
//
// reads each branch from an index led by status (jobs_claim for the
// queued one), and the running jobs of a serial from jobs_running_serial;
// agentmem.PickDue then keeps one job per serial, and each job picked is
// updated. It runs in the write loop, one write at a time, so no two
// claims can see the same job due, nor two jobs of a serial free.
func (s *Store) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*agentmem.Job, error) {
	if err := agentmem.ValidateClaim(owner, kinds, n, lease); err != nil {
		return nil, err
	}
	var claimed []*agentmem.Job
	err := s.write(ctx, func(tx *sql.Tx) error {
		claimed = nil
		now := s.now()
		q := `SELECT ` + jobColumns + ` FROM jobs j WHERE ((status = 'queued' AND run_at <= ?1) OR (status = 'running' AND lease_until < ?1))`
		args := []any{micros(now)}
		if len(kinds) > 0 {
			q += ` AND kind IN (?` + strings.Repeat(", ?", len(kinds)-1) + `)`
			for _, k := range kinds {
				args = append(args, k)
			}
		}
		q += ` AND (serial = '' OR NOT EXISTS (SELECT 1 FROM jobs r
			WHERE r.user_id = j.user_id AND r.serial = j.serial AND r.status = 'running' AND r.serial <> '' AND r.lease_until >= ?1))`
		rows, err := tx.QueryContext(ctx, q+` ORDER BY run_at LIMIT ?`, append(args, agentmem.ClaimScan(n))...)
		if err != nil {
			return fmt.Errorf("find due jobs: %w", err)
		}
		due, err := scanJobs(rows)
		if err != nil {
			return err
		}
		pick, die := agentmem.PickDue(due, n)
		for _, j := range die {
			j.Claim(owner, now, lease)
			if err := updateJob(ctx, tx, j); err != nil {
				return err
			}
		}
		for _, j := range pick {
			j.Claim(owner, now, lease)
			if err := updateJob(ctx, tx, j); err != nil {
				return err
			}
			claimed = append(claimed, j)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if claimed == nil {
		claimed = []*agentmem.Job{}
	}
	return claimed, nil
}

// CompleteJob implements agentmem.JobStore.
func (s *Store) CompleteJob(ctx context.Context, userID, id, owner string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		j, err := findJob(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if err := j.Complete(owner, s.now()); err != nil {
			return err
		}
		return updateJob(ctx, tx, j)
	})
}

// ReleaseJob implements agentmem.JobStore.
func (s *Store) ReleaseJob(ctx context.Context, userID, id, owner string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		j, err := findJob(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if err := j.Release(owner, s.now()); err != nil {
			return err
		}
		return updateJob(ctx, tx, j)
	})
}

// FailJob implements agentmem.JobStore.
func (s *Store) FailJob(ctx context.Context, userID, id, owner, errMsg string, retryAt time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		j, err := findJob(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if err := j.Fail(owner, errMsg, retryAt, s.now()); err != nil {
			return err
		}
		return updateJob(ctx, tx, j)
	})
}

// RetryJob implements agentmem.JobStore. The write loop runs one write at
// a time, so no enqueue comes between the lookup of the active job of the
// key and the update; jobs_active_key only backs that up.
func (s *Store) RetryJob(ctx context.Context, userID, id string) (*agentmem.Job, error) {
	var j *agentmem.Job
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		if j, err = findJob(ctx, tx, userID, id); err != nil {
			return err
		}
		if err := j.Retry(s.now()); err != nil {
			return err
		}
		var status string
		err = tx.QueryRowContext(ctx, findActiveJobStatusQuery, j.UserID, j.Kind, j.Key).Scan(&status)
		if err == nil {
			return agentmem.JobKeyTaken(j.ID)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("find active job: %w", err)
		}
		return updateJob(ctx, tx, j)
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}

// FindJobs implements agentmem.JobStore.
//
//	SELECT … FROM jobs WHERE true [AND status = ?] [AND kind = ?] [AND user_id = ?]
//	  [AND (updated_at, user_id, id) < (cursor)]
//	ORDER BY updated_at DESC, user_id DESC, id DESC LIMIT n+1
//
// walks the ([status,] updated_at DESC, user_id DESC, id DESC) index from
// the cursor.
func (s *Store) FindJobs(ctx context.Context, f agentmem.JobFilter) ([]*agentmem.Job, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	where, args := []string{"true"}, []any{}
	if f.Status != nil {
		where, args = append(where, "status = ?"), append(args, *f.Status)
	}
	if f.Kind != nil {
		where, args = append(where, "kind = ?"), append(args, *f.Kind)
	}
	if f.UserID != nil {
		where, args = append(where, "user_id = ?"), append(args, *f.UserID)
	}
	if f.Cursor != "" {
		var c agentmem.JobCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListJobs), &c); err != nil {
			return nil, "", err
		}
		where, args = append(where, "(updated_at, user_id, id) < (?, ?, ?)"), append(args, c.UpdatedAt, c.UserID, c.ID)
	}
	var jobs []*agentmem.Job
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+strings.Join(where, " AND ")+
			` ORDER BY updated_at DESC, user_id DESC, id DESC LIMIT ?`, append(args, limit+1)...)
		if err != nil {
			return fmt.Errorf("find jobs: %w", err)
		}
		jobs, err = scanJobs(rows)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	jobs, next := agentmem.JobPage(jobs, limit, agentmem.ListOf(agentmem.ListJobs))
	return jobs, next, nil
}

// FindJobBacklog implements agentmem.JobStore: one pass over the active
// jobs (jobs_claim leads with the status).
func (s *Store) FindJobBacklog(ctx context.Context) ([]agentmem.JobBacklog, error) {
	out := []agentmem.JobBacklog{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT kind, count(*), min(created_at) FROM jobs
			WHERE status IN ('queued', 'running') GROUP BY kind ORDER BY kind`)
		if err != nil {
			return fmt.Errorf("find job backlog: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var b agentmem.JobBacklog
			var oldest int64
			if err := rows.Scan(&b.Kind, &b.Jobs, &oldest); err != nil {
				return fmt.Errorf("scan job backlog: %w", err)
			}
			b.Oldest = fromMicros(oldest)
			out = append(out, b)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindActiveJobs implements agentmem.JobStore: a range of jobs_active_key.
// Keys compare as bytes, and a UTF-8 key that begins with the prefix
// sorts below the prefix followed by the bytes F4 90, which no UTF-8
// character begins with.
func (s *Store) FindActiveJobs(ctx context.Context, userID, kind, keyPrefix string) ([]*agentmem.Job, error) {
	var jobs []*agentmem.Job
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs
			WHERE user_id = ?1 AND kind = ?2 AND status IN ('queued', 'running') AND key >= ?3 AND key < ?4
				AND substr(key, 1, length(?3)) = ?3
			ORDER BY created_at, id`, userID, kind, keyPrefix, keyPrefix+"\xf4\x90")
		if err != nil {
			return fmt.Errorf("find active jobs: %w", err)
		}
		jobs, err = scanJobs(rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	if jobs == nil {
		jobs = []*agentmem.Job{}
	}
	return jobs, nil
}

// DeleteDoneJobs implements agentmem.JobStore, through jobs_status_updated.
func (s *Store) DeleteDoneJobs(ctx context.Context, before time.Time, limit int) (int64, error) {
	if limit < 1 || limit > agentmem.MaxPageSize {
		return 0, agentmem.Errorf(agentmem.EINVALID, "limit must be between 1 and %d, not %d.", agentmem.MaxPageSize, limit)
	}
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE rowid IN (
			SELECT rowid FROM jobs WHERE status = 'done' AND updated_at < ? ORDER BY updated_at LIMIT ?)`, micros(before), limit)
		if err != nil {
			return fmt.Errorf("delete done jobs: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// checkJobRun returns nil if the job of run is still running under run's
// owner, as tx sees it (see agentmem.CheckJobRun). The write loop runs one
// transaction at a time, so an erasure (DeleteUser deletes the job) comes
// wholly before the write or wholly after it: a job whose user was erased
// while it ran stores nothing.
func checkJobRun(ctx context.Context, tx *sql.Tx, run agentmem.JobRun) error {
	var status, owner string
	err := tx.QueryRowContext(ctx, `SELECT status, lease_owner FROM jobs WHERE user_id = ? AND id = ?`, run.UserID, run.ID).Scan(&status, &owner)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check job: %w", err)
	}
	return agentmem.CheckJobRun(run, err == nil, status, owner)
}

// checkRequired returns ENOTFOUND unless what r requires exists, as tx
// sees it (see agentmem.Required).
func checkRequired(ctx context.Context, tx *sql.Tx, r agentmem.Required) error {
	for _, c := range []struct {
		id, query string
		thread    bool
	}{
		{r.ThreadID, `SELECT 1 FROM threads WHERE user_id = ? AND id = ?`, true},
		{r.MemoryID, `SELECT 1 FROM memories WHERE user_id = ? AND id = ?`, false},
	} {
		if c.id == "" {
			continue
		}
		var one int
		err := tx.QueryRowContext(ctx, c.query, r.UserID, c.id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return agentmem.MissingRequired(r, c.thread)
		} else if err != nil {
			return fmt.Errorf("check requirement: %w", err)
		}
	}
	return nil
}
