package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const jobColumns = `user_id, id, kind, key, serial, payload, status, attempts, max_attempts, run_at, lease_owner, lease_until, last_error, created_at, updated_at`

func scanJob(row interface{ Scan(...any) error }) (*agentmem.Job, error) {
	var (
		j          agentmem.Job
		payload    []byte
		leaseUntil *time.Time
	)
	if err := row.Scan(&j.UserID, &j.ID, &j.Kind, &j.Key, &j.Serial, &payload, &j.Status, &j.Attempts, &j.MaxAttempts, &j.RunAt,
		&j.LeaseOwner, &leaseUntil, &j.LastError, &j.CreatedAt, &j.UpdatedAt); err != nil {
		return nil, err
	}
	j.Payload = jsonValue(payload)
	j.RunAt, j.LeaseUntil = j.RunAt.UTC(), utc(leaseUntil)
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	return &j, nil
}

func scanJobs(rows pgx.Rows) ([]*agentmem.Job, error) {
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

// findJobForUpdate returns a job of the user with its row locked until the
// transaction ends.
func findJobForUpdate(ctx context.Context, tx pgx.Tx, userID, id string) (*agentmem.Job, error) {
	j, err := scanJob(tx.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE user_id = $1 AND id = $2 FOR UPDATE`, userID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFoundJob(id)
	} else if err != nil {
		return nil, fmt.Errorf("find job: %w", err)
	}
	return j, nil
}

// maxEnqueueTries bounds EnqueueJob's loop (see there). Each extra round
// needs the active job of the key to finish within a few milliseconds, so
// running out means a storm of enqueues and completions of one key.
const maxEnqueueTries = 10

// EnqueueJob implements agentmem.JobStore.
//
// The insert's ON CONFLICT names jobs_active_key, the unique index of the
// queued and running jobs of a (user, kind, key): of concurrent enqueues
// of a key, one inserts and the others wait for it to commit, then insert
// nothing, and read the job that won (at READ COMMITTED each statement
// sees what committed before it). If that job finished in between, there
// is no active job left and the loop inserts again.
func (s *Store) EnqueueJob(ctx context.Context, j *agentmem.Job) (*agentmem.Job, error) {
	if err := j.Prepare(s.now()); err != nil {
		return nil, err
	}
	var out *agentmem.Job
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := checkEnqueuedUser(ctx, tx, j.UserID); err != nil {
			return err
		}
		for range maxEnqueueTries {
			tag, err := tx.Exec(ctx, insertJobSQL, insertJobArgs(j)...)
			if err = insertJobError(j, err); err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				out = j
				return nil
			}
			active, err := scanJob(tx.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs
				WHERE user_id = $1 AND kind = $2 AND key = $3 AND status IN ('queued', 'running')`, j.UserID, j.Kind, j.Key))
			if err == nil {
				out = active
				return nil
			} else if !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("find active job: %w", err)
			}
		}
		return agentmem.Errorf(agentmem.EUNAVAILABLE, "The job queue is busy; retry.")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// insertJobSQL inserts a job unless its key has an active job: its ON
// CONFLICT names jobs_active_key, so that a conflict on it inserts nothing
// (0 rows) while one on the primary key fails (see insertJobError).
const insertJobSQL = `INSERT INTO jobs (` + jobColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
	ON CONFLICT (user_id, kind, key) WHERE status IN ('queued', 'running') DO NOTHING`

func insertJobArgs(j *agentmem.Job) []any {
	return []any{j.UserID, j.ID, j.Kind, j.Key, j.Serial, string(j.Payload), j.Status, j.Attempts, j.MaxAttempts, j.RunAt,
		j.LeaseOwner, j.LeaseUntil, j.LastError, j.CreatedAt, j.UpdatedAt}
}

// insertJobError returns the error of insertJobSQL for j: a unique
// violation can only be of the primary key (jobs_active_key is the
// arbiter), so j's ID is taken.
func insertJobError(j *agentmem.Job, err error) error {
	if isUniqueViolation(err) {
		return agentmem.Errorf(agentmem.ECONFLICT, "Job %q already exists.", j.ID)
	} else if err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

// pickJob looks up, in one round trip, the active jobs of the user with
// the kinds and keys of alts, the alternatives of an append, and returns
// the index of the one to store (see agentmem.PickJob), or -1. It locks
// the jobs it finds FOR KEY SHARE until tx ends: ClaimJobs (FOR UPDATE
// SKIP LOCKED) then skips a queued job that an append counts on until the
// append has committed, so the job cannot read the thread before the
// batch it covers is there. The lock does not hold up CompleteJob or
// FailJob of a running job for longer than the append takes, nor other
// appends (shared locks).
func pickJob(ctx context.Context, tx pgx.Tx, userID string, alts []*agentmem.Job) (int, error) {
	var kinds, keys []string
	for _, j := range alts {
		if j != nil && j.Key != "" {
			kinds, keys = append(kinds, j.Kind), append(keys, j.Key)
		}
	}
	active := map[[2]string]string{}
	if len(keys) > 0 {
		rows, err := tx.Query(ctx, `SELECT kind, key, status FROM jobs
			WHERE user_id = $1 AND kind = ANY($2) AND key = ANY($3) AND status IN ('queued', 'running') FOR KEY SHARE`, userID, kinds, keys)
		if err != nil {
			return -1, fmt.Errorf("find active jobs: %w", err)
		}
		var kind, key, status string
		_, err = pgx.ForEachRow(rows, []any{&kind, &key, &status}, func() error {
			active[[2]string{kind, key}] = status
			return nil
		})
		if err != nil {
			return -1, fmt.Errorf("find active jobs: %w", err)
		}
	}
	return agentmem.PickJob(alts, func(j *agentmem.Job) (string, error) { return active[[2]string{j.Kind, j.Key}], nil })
}

// enqueuePicked stores in tx the job that pickJob picks of alts, looking
// again when a transaction of another enqueue stored a job of the key
// picked meanwhile, and returns its index and the job stored, or -1.
func enqueuePicked(ctx context.Context, tx pgx.Tx, userID string, alts []*agentmem.Job, now time.Time) (int, *agentmem.Job, error) {
	for range maxEnqueueTries {
		i, err := pickJob(ctx, tx, userID, alts)
		if err != nil || i < 0 {
			return i, nil, err
		}
		j, err := agentmem.PrepareJob(userID, alts[i], now)
		if err != nil {
			return -1, nil, err
		}
		tag, err := tx.Exec(ctx, insertJobSQL, insertJobArgs(j)...)
		if err = insertJobError(j, err); err != nil {
			return -1, nil, err
		}
		if tag.RowsAffected() == 1 {
			return i, j, nil
		}
	}
	return -1, nil, agentmem.Errorf(agentmem.EUNAVAILABLE, "The job queue is busy; retry.")
}

const updateJobSQL = `UPDATE jobs SET status = $1, attempts = $2, run_at = $3, lease_owner = $4, lease_until = $5, last_error = $6, updated_at = $7
	WHERE user_id = $8 AND id = $9`

// updateJobArgs returns the arguments of updateJobSQL: every mutable field
// of j, then its key.
func updateJobArgs(j *agentmem.Job) []any {
	return []any{j.Status, j.Attempts, j.RunAt, j.LeaseOwner, j.LeaseUntil, j.LastError, j.UpdatedAt, j.UserID, j.ID}
}

// ClaimJobs implements agentmem.JobStore.
//
//	SELECT … FROM jobs j WHERE ((status = 'queued' AND run_at <= now) OR (status = 'running' AND lease_until < now))
//	  [AND kind = ANY($k)]
//	  AND (serial = '' OR NOT EXISTS (a job of j's user and serial running with lease_until >= now))
//	ORDER BY run_at LIMIT claimScan(n) FOR UPDATE SKIP LOCKED
//
// reads both branches from jobs_claim, the running jobs of a serial from
// jobs_running_serial, and locks the rows it returns; rows that a
// concurrent claimer has locked are skipped, and a row that one claimed
// and committed meanwhile is re-checked and no longer due.
// agentmem.PickDue then keeps one job per serial; the serials of those
// are locked (lockSerials), so that two claimers never take two jobs of
// one serial, and a serial found busy gives its place to the next due
// jobs. The claims are then written in one round trip, and commit
// releases the locks.
func (s *Store) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*agentmem.Job, error) {
	if err := agentmem.ValidateClaim(owner, kinds, n, lease); err != nil {
		return nil, err
	}
	claimed := []*agentmem.Job{}
	err := s.write(ctx, func(tx pgx.Tx) error {
		claimed = claimed[:0]
		now := s.now()
		q := `SELECT ` + jobColumns + ` FROM jobs j WHERE ((status = 'queued' AND run_at <= $1) OR (status = 'running' AND lease_until < $1))`
		args := []any{now, agentmem.ClaimScan(n)}
		if len(kinds) > 0 {
			q += ` AND kind = ANY($3)`
			args = append(args, kinds)
		}
		q += ` AND (serial = '' OR NOT EXISTS (SELECT 1 FROM jobs r
			WHERE r.user_id = j.user_id AND r.serial = j.serial AND r.status = 'running' AND r.serial <> '' AND r.lease_until >= $1))`
		rows, err := tx.Query(ctx, q+` ORDER BY run_at LIMIT $2 FOR UPDATE SKIP LOCKED`, args...)
		if err != nil {
			return fmt.Errorf("find due jobs: %w", err)
		}
		due, err := scanJobs(rows)
		if err != nil || len(due) == 0 {
			return err
		}
		pick, die := agentmem.PickDue(due, n)
		// A serial found busy leaves its place to the next due jobs.
		locked, busy := map[jobSerial]bool{}, map[jobSerial]bool{}
		for {
			more, err := lockSerials(ctx, tx, pick, locked, now)
			if err != nil {
				return err
			}
			if len(more) == 0 {
				break
			}
			for k := range more {
				busy[k] = true
			}
			pick, _ = agentmem.PickDue(slices.DeleteFunc(slices.Clone(due), func(j *agentmem.Job) bool {
				return busy[jobSerial{j.UserID, j.Serial}]
			}), n)
		}
		b := &pgx.Batch{}
		for _, j := range die {
			j.Claim(owner, now, lease)
			b.Queue(updateJobSQL, updateJobArgs(j)...)
		}
		for _, j := range pick {
			j.Claim(owner, now, lease)
			b.Queue(updateJobSQL, updateJobArgs(j)...)
			claimed = append(claimed, j)
		}
		if b.Len() == 0 {
			return nil
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("update jobs: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claimed, nil
}

// jobSerial is a user and a serial (see agentmem.Job.Serial).
type jobSerial struct{ user, serial string }

// lockSerials locks the serials of the jobs of pick that are not locked
// yet, adds them to locked, and returns those of them that are busy: tx
// may claim a job of pick only if its serial is not busy.
//
// A claim's query cannot see what a concurrent claim has not committed:
// two claims could each find a different job of one serial due, and both
// claim it. So each claim takes a transaction-level advisory lock on the
// serial of each job it picked (pg_try_advisory_xact_lock of the schema,
// user and serial, hashed: advisory locks are the database's, and the
// stores of two schemas must not take each other's), without waiting: a serial locked by another claim
// being decided is busy. Then, in a second statement, whose snapshot is
// taken after the lock (READ COMMITTED), it looks again for a job of the
// serial running under a lease: one that a claim committed before the
// lock was free; that serial is busy too. A claim that comes after finds
// the lock taken until this one commits, and then this one's job running.
// Two serials whose hashes collide only wait for each other.
func lockSerials(ctx context.Context, tx pgx.Tx, pick []*agentmem.Job, locked map[jobSerial]bool, now time.Time) (map[jobSerial]bool, error) {
	var users, serials []string
	for _, j := range pick {
		if k := (jobSerial{j.UserID, j.Serial}); j.Serial != "" && !locked[k] {
			locked[k] = true
			users, serials = append(users, j.UserID), append(serials, j.Serial)
		}
	}
	busy := map[jobSerial]bool{}
	if len(users) == 0 {
		return busy, nil
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT u, s FROM (SELECT u, s, pg_try_advisory_xact_lock(hashtextextended(COALESCE(current_schema(), '') || chr(31) || u || chr(31) || s, 0)) AS locked
		FROM unnest($1::text[], $2::text[]) AS k(u, s)) l WHERE NOT locked`, users, serials)
	b.Queue(`SELECT user_id, serial FROM jobs WHERE status = 'running' AND serial <> '' AND lease_until >= $3
		AND (user_id, serial) IN (SELECT * FROM unnest($1::text[], $2::text[]))`, users, serials, now)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	for range 2 {
		rows, err := br.Query()
		if err != nil {
			return nil, fmt.Errorf("lock serials: %w", err)
		}
		var k jobSerial
		if _, err := pgx.ForEachRow(rows, []any{&k.user, &k.serial}, func() error {
			busy[k] = true
			return nil
		}); err != nil {
			return nil, fmt.Errorf("lock serials: %w", err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("lock serials: %w", err)
	}
	return busy, nil
}

// CompleteJob implements agentmem.JobStore.
func (s *Store) CompleteJob(ctx context.Context, userID, id, owner string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		j, err := findJobForUpdate(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if err := j.Complete(owner, s.now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, updateJobSQL, updateJobArgs(j)...); err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		return nil
	})
}

// ReleaseJob implements agentmem.JobStore.
func (s *Store) ReleaseJob(ctx context.Context, userID, id, owner string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		j, err := findJobForUpdate(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if err := j.Release(owner, s.now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, updateJobSQL, updateJobArgs(j)...); err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		return nil
	})
}

// FailJob implements agentmem.JobStore.
func (s *Store) FailJob(ctx context.Context, userID, id, owner, errMsg string, retryAt time.Time) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		j, err := findJobForUpdate(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if err := j.Fail(owner, errMsg, retryAt, s.now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, updateJobSQL, updateJobArgs(j)...); err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		return nil
	})
}

// RetryJob implements agentmem.JobStore. jobs_active_key decides between
// the retry and a concurrent enqueue of the key: the update of the one
// that commits second violates it, which for the retry is ECONFLICT.
func (s *Store) RetryJob(ctx context.Context, userID, id string) (*agentmem.Job, error) {
	var j *agentmem.Job
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		if j, err = findJobForUpdate(ctx, tx, userID, id); err != nil {
			return err
		}
		if err := j.Retry(s.now()); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, updateJobSQL, updateJobArgs(j)...)
		if isUniqueViolation(err) {
			return agentmem.JobKeyTaken(j.ID)
		} else if err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}

// FindJobs implements agentmem.JobStore.
//
//	SELECT … FROM jobs WHERE true [AND status = $n] [AND kind = $n] [AND user_id = $n]
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
	var args []any
	// arg adds a parameter and returns its placeholder.
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"true"}
	if f.Status != nil {
		where = append(where, "status = "+arg(*f.Status))
	}
	if f.Kind != nil {
		where = append(where, "kind = "+arg(*f.Kind))
	}
	if f.UserID != nil {
		where = append(where, "user_id = "+arg(*f.UserID))
	}
	if f.Cursor != "" {
		var c agentmem.JobCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListJobs), &c); err != nil {
			return nil, "", err
		}
		where = append(where, "(updated_at, user_id, id) < ("+arg(time.UnixMicro(c.UpdatedAt).UTC())+", "+arg(c.UserID)+", "+arg(c.ID)+")")
	}
	q := `SELECT ` + jobColumns + ` FROM jobs WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY updated_at DESC, user_id DESC, id DESC LIMIT ` + arg(limit+1)
	var jobs []*agentmem.Job
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
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
// jobs.
func (s *Store) FindJobBacklog(ctx context.Context) ([]agentmem.JobBacklog, error) {
	out := []agentmem.JobBacklog{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT kind, count(*), min(created_at) FROM jobs
			WHERE status IN ('queued', 'running') GROUP BY kind ORDER BY kind`)
		if err != nil {
			return fmt.Errorf("find job backlog: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var b agentmem.JobBacklog
			if err := rows.Scan(&b.Kind, &b.Jobs, &b.Oldest); err != nil {
				return fmt.Errorf("scan job backlog: %w", err)
			}
			b.Oldest = b.Oldest.UTC()
			out = append(out, b)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindActiveJobs implements agentmem.JobStore, through jobs_active_key.
func (s *Store) FindActiveJobs(ctx context.Context, userID, kind, keyPrefix string) ([]*agentmem.Job, error) {
	var jobs []*agentmem.Job
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+jobColumns+` FROM jobs
			WHERE user_id = $1 AND kind = $2 AND status IN ('queued', 'running') AND left(key, length($3)) = $3
			ORDER BY created_at, id`, userID, kind, keyPrefix)
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
	err := s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM jobs WHERE (user_id, id) IN (
			SELECT user_id, id FROM jobs WHERE status = 'done' AND updated_at < $1 ORDER BY updated_at LIMIT $2)`, before, limit)
		if err != nil {
			return fmt.Errorf("delete done jobs: %w", err)
		}
		n = tag.RowsAffected()
		return nil
	})
	return n, err
}

// eraseLock is the first key of the transaction-level advisory locks that
// order an erasure and the writes of the user's jobs; the second is
// hashtext(user_id) (two users whose IDs hash alike only wait for each
// other). DeleteUser takes the user's exclusively, as its first
// statement; a job's write takes it shared, before it checks its job
// (checkJobRun).
const eraseLock int32 = 0x616d6572 // "amer"

// lockUserShared takes the user's erasure lock shared until tx ends: an
// erasure of the user waits for tx, and tx for an erasure in progress.
func lockUserShared(ctx context.Context, tx pgx.Tx, userID string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1, hashtext($2))`, eraseLock, userID); err != nil {
		return fmt.Errorf("lock user: %w", err)
	}
	return nil
}

// checkJobRun returns nil if the job of run is still running under run's
// owner (see agentmem.CheckJobRun), holding the user's erasure lock
// shared until tx ends. At READ COMMITTED a row lock would not do: an
// erasure that began first, deleting the user's tables one statement at
// a time, would miss the rows of a job's write that commits between two
// of them. With the lock, an erasure either waits for the write and then
// deletes what it stored, or runs first, and the write, reading the jobs
// after it has committed, finds its job gone and stores nothing. The lock
// and the read are two statements: at READ COMMITTED a statement reads
// the snapshot taken when it began, before its lock was granted.
func checkJobRun(ctx context.Context, tx pgx.Tx, run agentmem.JobRun) error {
	if err := lockUserShared(ctx, tx, run.UserID); err != nil {
		return err
	}
	var status, owner string
	err := tx.QueryRow(ctx, `SELECT status, lease_owner FROM jobs WHERE user_id = $1 AND id = $2`, run.UserID, run.ID).Scan(&status, &owner)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("check job: %w", err)
	}
	return agentmem.CheckJobRun(run, err == nil, status, owner)
}

// checkEnqueuedUser, in a job's enqueueing of a job of another user (the
// reembed-all job enqueues one per user it lists), returns ENOTFOUND if
// that user no longer exists: erased since it was listed (see
// agentmem.JobStore.EnqueueJob). It holds that user's erasure lock shared
// until tx ends, as checkJobRun holds its own user's.
func checkEnqueuedUser(ctx context.Context, tx pgx.Tx, userID string) error {
	run, ok := agentmem.JobRunFromContext(ctx)
	if !ok || run.UserID == userID {
		return nil
	}
	if err := lockUserShared(ctx, tx, userID); err != nil {
		return err
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM users WHERE user_id = $1`, userID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return agentmem.Errorf(agentmem.ENOTFOUND, "User %q not found.", userID)
	} else if err != nil {
		return fmt.Errorf("find user: %w", err)
	}
	return nil
}

// checkRequired returns ENOTFOUND unless what r requires exists (see
// agentmem.Required). As checkJobRun, it holds the user's erasure lock
// shared until tx ends, so that an erasure either waits for tx and
// deletes what it stored, or runs first and tx finds the item gone. The
// thread is kept FOR KEY SHARE too, which its permanent deletion waits
// for. (The memory is only read: its deletion locks the user's vector
// versions before it, which a write of vectors locks after this check.)
func checkRequired(ctx context.Context, tx pgx.Tx, r agentmem.Required) error {
	if err := lockUserShared(ctx, tx, r.UserID); err != nil {
		return err
	}
	for _, c := range []struct {
		id, query string
		thread    bool
	}{
		{r.ThreadID, `SELECT 1 FROM threads WHERE user_id = $1 AND id = $2 FOR KEY SHARE`, true},
		{r.MemoryID, `SELECT 1 FROM memories WHERE user_id = $1 AND id = $2`, false},
	} {
		if c.id == "" {
			continue
		}
		var one int
		err := tx.QueryRow(ctx, c.query, r.UserID, c.id).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return agentmem.MissingRequired(r, c.thread)
		} else if err != nil {
			return fmt.Errorf("check requirement: %w", err)
		}
	}
	return nil
}
