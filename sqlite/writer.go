package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"time"

	"github.com/agentmem/agentmem"
)

// maxGroup bounds how many queued writes one transaction commits together.
const maxGroup = 256

// writeOp is one caller's write, run by the write loop in a transaction
// shared with other queued writes, inside a savepoint of its own.
type writeOp struct {
	ctx        context.Context
	fn         func(tx *sql.Tx) error
	done       chan error
	background bool // agentmem.IsBackground(ctx)
}

func (s *Store) writeLoop() {
	defer close(s.stopped)
	for {
		op, ok := s.next()
		if !ok {
			return
		}
		merge := op == nil
		if merge {
			op = s.mergeOp()
		}
		if !op.background {
			s.commitRequests(op)
			continue
		}
		// A background write is background CPU work: it runs as a unit
		// (agentmem.BackgroundCPU), and the request path's writes that
		// come while it waits for one go first. It waits for
		// backgroundWriteWait at most, and then runs without a unit, so
		// that a writer holding a unit is never stopped. The request
		// path's queued writes join its group; another background write
		// waits for the next. A merge step commits alone: where it fails
		// (the disk full), SQLite rolls back its whole transaction, and a
		// request's write in it would fail with it, not as its own.
		group := func() []*writeOp {
			if merge {
				return []*writeOp{op}
			}
			return s.drain([]*writeOp{op})
		}
		waited := time.NewTimer(backgroundWriteWait)
		for {
			done, changed := agentmem.TryBackgroundCPU()
			if done != nil {
				s.commitGroup(group())
				done()
				break
			}
			select {
			case <-changed:
			case <-waited.C:
				changed = nil
			case first, ok := <-s.writes:
				if ok {
					s.commitRequests(first)
				}
			}
			if changed == nil {
				s.commitGroup(group())
				break
			}
		}
		waited.Stop()
		if merge && <-op.done != nil {
			s.mergeDue = false // tried again after the next append, not at once
		}
	}
}

// commitRequests commits a group of the request path's writes, first and
// those queued behind it, then lets their writers run: each waits in this
// goroutine's core's queue, and the scheduler would otherwise run them
// only once the loop blocks (or after ten milliseconds), which it does not
// while background writes are queued.
func (s *Store) commitRequests(first *writeOp) {
	s.commitGroup(s.drain([]*writeOp{first}))
	runtime.Gosched()
}

// drain adds the request path's queued writes to group, up to maxGroup.
func (s *Store) drain(group []*writeOp) []*writeOp {
	for len(group) < maxGroup {
		select {
		case op, ok := <-s.writes:
			if !ok {
				return group
			}
			group = append(group, op)
		default:
			return group
		}
	}
	return group
}

// next returns the next write to run: the request path's first, then
// messages_fts's merge work when due (nil: see mergeOp), then background
// work's; false once both queues are closed and empty.
func (s *Store) next() (*writeOp, bool) {
	writes, background := s.writes, s.background
	for writes != nil || background != nil {
		select {
		case op, ok := <-writes:
			if ok {
				return op, true
			}
			writes = nil
			continue
		default:
		}
		if s.mergeDue {
			return nil, true // merge work before background writes
		}
		select {
		case op, ok := <-writes:
			if ok {
				return op, true
			}
			writes = nil
		case op, ok := <-background:
			if ok {
				return op, true
			}
			background = nil
		}
	}
	return nil, false
}

// backgroundWriteWait is how long the write loop waits at most for a unit
// of background CPU work for a background write (see writeLoop).
const backgroundWriteWait = 50 * time.Millisecond

// mergePages is how many pages of merge work a step of mergeOp does: a
// transaction of a few milliseconds.
const mergePages = 64

// mergeOp returns a background write that does a step of messages_fts's
// merge work (migration/0023_fts_merge.sql), and clears mergeDue once a
// step finds nothing to merge (FTS5's 'merge' command then changes fewer
// than two rows). The write loop runs it before background work.
func (s *Store) mergeOp() *writeOp {
	return &writeOp{
		ctx:        agentmem.WithBackground(context.Background()),
		done:       make(chan error, 1),
		background: true,
		fn: func(tx *sql.Tx) error {
			var before, after int64
			if err := tx.QueryRow(`SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)`, mergePages); err != nil {
				return err
			}
			if err := tx.QueryRow(`SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			s.mergeDue = after-before >= 2
			return nil
		},
	}
}

func (s *Store) commitGroup(group []*writeOp) {
	errs := make([]error, len(group))
	finish := func(commitErr error) {
		for i, op := range group {
			if errs[i] == nil {
				errs[i] = commitErr
			}
			op.done <- errs[i]
		}
	}
	if err := s.syncFor(group); err != nil {
		finish(err)
		return
	}
	tx, err := s.writer.BeginTx(context.Background(), nil)
	if err != nil {
		finish(formatError(fmt.Errorf("begin: %w", err)))
		return
	}
	defer tx.Rollback()
	single := len(group) == 1
	ok := 0
	for i, op := range group {
		if err := op.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if single {
			errs[i] = op.fn(tx)
		} else {
			errs[i] = s.inSavepoint(tx, op.fn)
		}
		if errs[i] == nil {
			ok++
		}
	}
	if ok == 0 {
		finish(nil)
		return
	}
	if err := s.indexQueued(tx); err != nil {
		finish(err) // nothing of the group is stored
		return
	}
	if err := tx.Commit(); err != nil {
		for i := range errs { // nothing of the group was stored
			if errs[i] == nil {
				errs[i] = formatError(fmt.Errorf("commit: %w", err))
			}
		}
	} else {
		select {
		case s.committed <- struct{}{}:
		default: // a checkpoint is due already
		}
	}
	finish(nil)
}

// lazyAfter is how many background groups in a row commit before they
// stop waiting for the disk (see syncFor).
const lazyAfter = 3

// syncFor sets the writer's synchronous level for a group's commit. With
// FULL (or EXTRA), a run of groups of background work alone (an index
// job's windows, say) commits without waiting for the disk, as with
// NORMAL, from its lazyAfter-th group on. In write-ahead-log mode the
// next commit of the request path syncs the log, every frame before its
// own with it, so what was acknowledged stays durable; a power cut may
// lose the background commits since the last sync (those before them
// are kept), and their jobs, not marked done, run again. An index job
// commits hundreds of times: the syncs were a third of its time
// (docs/benchmarks.md).
func (s *Store) syncFor(group []*writeOp) error {
	if s.sync == "NORMAL" {
		return nil
	}
	bg := true
	for _, op := range group {
		bg = bg && op.background
	}
	if bg {
		s.bgRun++
	} else {
		s.bgRun = 0
	}
	// Only in a run of background commits: where they alternate with the
	// request path's, switching twice a commit is not worth it.
	lazy := s.bgRun >= lazyAfter
	if lazy == s.lazy {
		return nil
	}
	level := s.sync
	if lazy {
		level = "NORMAL"
	}
	if _, err := s.writer.ExecContext(context.Background(), `PRAGMA synchronous = `+level); err != nil {
		return formatError(fmt.Errorf("synchronous %s: %w", level, err))
	}
	s.lazy = lazy
	return nil
}

// Statements of indexQueued. The queue's key leads with the user, so
// without the ORDER BY a group of several users' appends comes out of it
// with rowids going down as often as up; FTS5 writes its pending terms to
// a new segment whenever a rowid is not above the last one, which made
// nearly one segment per message of a group and cost a third of the
// append throughput (docs/benchmarks.md).
const (
	indexQueuedQuery = `INSERT INTO messages_fts (rowid, text, u) SELECT m.rowid, CASE WHEN m.name != '' THEN m.name || ': ' || m.content ELSE m.content END,
		'u' || lower(hex(m.user_id)) || '0' FROM messages_fts_queue q JOIN messages m ON m.rowid = q.doc
		ORDER BY q.doc`
	emptyQueueQuery = `DELETE FROM messages_fts_queue`
)

// indexQueued adds the messages that the transaction tx inserted, which
// messages_fts_insert queued, to the full-text index, in one statement and
// in rowid order so that they make one index segment (see
// migration/0004_memory.sql). The write loop calls it before each commit.
func (s *Store) indexQueued(tx *sql.Tx) error {
	ctx := context.Background()
	res, err := s.writeExec(ctx, tx, indexQueuedQuery)
	if err != nil {
		return formatError(fmt.Errorf("index messages: %w", err))
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		s.mergeDue = true // see mergeOp
	}
	if _, err := s.writeExec(ctx, tx, emptyQueueQuery); err != nil {
		return formatError(fmt.Errorf("index messages: %w", err))
	}
	return nil
}

// hotWrites are the statements of an append and of each commit, prepared
// once on the writer connection when the store opens (see writeStmt).
var hotWrites = []string{`SAVEPOINT op`, `ROLLBACK TO op`, `RELEASE op`, findThreadQuery, insertMessageQuery, updateThreadAfterAppend,
	indexQueuedQuery, emptyQueueQuery, findActiveJobQuery, findActiveJobStatusQuery, insertJobQuery}

// writeStmt returns query bound to tx, a transaction of the write loop.
// SQLite compiles a statement in about as long as it runs a small insert,
// and the write loop is the one serial path of the store, so the
// statements of hotWrites are prepared once at Open and reused; any other
// query is prepared in tx. (Preparing lazily on s.writer from inside a
// transaction would wait forever for its only connection.)
func (s *Store) writeStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st, ok := s.stmts[query]; ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// writeExec runs a cached statement (see writeStmt) in the write
// transaction tx.
func (s *Store) writeExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := s.writeStmt(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}
