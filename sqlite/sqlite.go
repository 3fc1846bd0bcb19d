// Package sqlite implements agentmem.Store on an embedded SQLite file with
// the pure-Go driver modernc.org/sqlite: WAL, synchronous=FULL by default,
// one writer connection that commits concurrent writes together (group
// commit), and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migration/*.sql
var migrationFS embed.FS

var _ agentmem.Store = (*Store)(nil)

// maxGroup bounds how many queued writes one transaction commits together.
const maxGroup = 256

// Store is an agentmem.Store on one SQLite file.
type Store struct {
	path   string
	writer *sql.DB // one connection; all writes go through the write loop
	reader *sql.DB // a pool of read-only connections

	stmts map[string]*sql.Stmt // hotWrites prepared on the writer connection; read-only after Open

	sync  string // the synchronous level of request writes (see syncFor)
	lazy  bool   // the writer is at NORMAL for background work (the write loop's)
	bgRun int    // background groups committed in a row, this one included (the write loop's)
	// mergeDue: messages_fts may have segments to merge (the write
	// loop's; see mergeStep).
	mergeDue bool

	writes     chan *writeOp // the request path's writes
	background chan *writeOp // background work's (agentmem.IsBackground), after the request path's
	mu         sync.RWMutex  // guards closed against sends on writes and background
	closed     bool
	stopped    chan struct{} // closed when the write loop has returned

	checkpointer *sql.DB       // one connection, for checkpointLoop (synchronous NORMAL only)
	committed    chan struct{} // the write loop committed (a signal, capacity 1; nil without checkpointer)
	checkpointed chan struct{} // closed when checkpointLoop has returned (nil without checkpointer)

	// Now returns the current time; tests replace it.
	Now func() time.Time
	// Tokens counts message tokens at write (agentmem.EstimateTokens when nil).
	Tokens agentmem.TokenCounter
	// MaxMessageBytes bounds one message (agentmem.DefaultMaxMessageBytes when 0).
	MaxMessageBytes int
}

// Options tune Open. The zero value is the durable default.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: FULL (default) makes every
	// acknowledged write survive power loss; NORMAL may lose the last
	// commits on power loss (never on a process crash), and checkpoints the
	// write-ahead log in the background rather than in a commit.
	Synchronous string
}

// Open opens (creating if needed) the SQLite database at path, applies the
// pending migrations and starts the write loop. path may carry the
// "sqlite:" prefix of agentmem's --db flag.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "sqlite://"), "sqlite:")
	if path == "" || path == ":memory:" {
		return nil, agentmem.Errorf(agentmem.EINVALID, "sqlite needs a file path (an in-memory database cannot share one writer and many readers).")
	}
	sync := strings.ToUpper(opt.Synchronous)
	switch sync {
	case "":
		sync = "FULL"
	case "FULL", "NORMAL", "EXTRA":
	default:
		return nil, agentmem.Errorf(agentmem.EINVALID, "synchronous must be FULL, NORMAL or EXTRA, not %q.", opt.Synchronous)
	}
	// busy_timeout comes first so that the other pragmas wait for a lock.
	// The log is cut back to journalSizeLimit when it starts over after a
	// checkpoint: otherwise it kept the largest size a burst of writes
	// gave it (indexing 20,000 messages left ~5 MB, 240 bytes a message
	// of the store's size; 4 MB left 195, 1 MB 52).
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(" + sync + ")&_pragma=foreign_keys(ON)" +
		"&_pragma=journal_size_limit(" + strconv.Itoa(journalSizeLimit) + ")"
	dsn := fileDSN(path)
	// With synchronous NORMAL the writer never checkpoints: checkpointLoop
	// does, on a connection of its own.
	background := sync == "NORMAL"
	writerPragmas := pragmas
	if background {
		writerPragmas += "&_pragma=wal_autocheckpoint(0)"
	}
	// The writer keeps its statements prepared too (see cachingConn): an
	// index job's many small writes were mostly SQLite compiling them.
	wconn, err := sqlite.NewConnector(dsn + writerPragmas + "&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	writer := sql.OpenDB(cachingConnector{wconn})
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	s := &Store{
		sync:       sync,
		path:       path,
		writer:     writer,
		writes:     make(chan *writeOp, 1024),
		background: make(chan *writeOp, 64),
		stopped:    make(chan struct{}),
		stmts:      map[string]*sql.Stmt{},
		Now:        time.Now,
	}
	if err := s.migrate(ctx); err != nil {
		writer.Close()
		return nil, err
	}
	for _, q := range hotWrites {
		st, err := writer.PrepareContext(ctx, q)
		if err != nil {
			writer.Close()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		s.stmts[q] = st
	}
	connector, err := sqlite.NewConnector(dsn + pragmas + "&_pragma=query_only(1)")
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	s.reader = sql.OpenDB(cachingConnector{connector})
	n := max(4, 2*runtime.GOMAXPROCS(0))
	s.reader.SetMaxOpenConns(n)
	s.reader.SetMaxIdleConns(n)
	if background {
		s.checkpointer, err = sql.Open("sqlite", dsn+pragmas)
		if err != nil {
			writer.Close()
			s.reader.Close()
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		s.checkpointer.SetMaxOpenConns(1)
		s.committed, s.checkpointed = make(chan struct{}, 1), make(chan struct{})
		go s.checkpointLoop()
	}
	go s.writeLoop()
	return s, nil
}

// checkpointInterval is the least time between two checkpoints.
const checkpointInterval = 100 * time.Millisecond

// journalSizeLimit is the size, in bytes, to which the write-ahead log is
// cut back when it starts over.
const journalSizeLimit = 1 << 20

// checkpointLoop copies what the write-ahead log holds into the database
// file after commits, at most every checkpointInterval, with a PASSIVE
// checkpoint on a connection of its own: it waits for no reader and no
// writer, and no commit waits for it. It runs with synchronous NORMAL,
// where a commit does not fsync and SQLite's own checkpoint (in the
// connection that commits, each time the log passes 1,000 pages) was the
// only fsync on the request path: one append in a hundred took ~16 ms
// (docs/benchmarks.md). With FULL, where every commit fsyncs the log, the
// same loop made appends slower (p50 0.65 → 0.95 ms), so SQLite keeps
// checkpointing there. The log restarts from its beginning at the first
// write after a checkpoint that copied all of it.
func (s *Store) checkpointLoop() {
	defer close(s.checkpointed)
	for range s.committed {
		// A failure (the disk full, say) leaves the log as it is, to be
		// copied at the next try; commits go on meanwhile.
		_, _ = s.checkpointer.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		select {
		case <-time.After(checkpointInterval):
		case <-s.stopped: // closing: the last connection's close checkpoints
		}
	}
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close finishes the queued writes, stops the write loop and closes the
// connections.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.writes)
	close(s.background)
	s.mu.Unlock()
	<-s.stopped
	if s.checkpointer != nil {
		close(s.committed)
		<-s.checkpointed
		s.checkpointer.Close()
	}
	for _, st := range s.stmts {
		st.Close()
	}
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// Ping implements agentmem.Store.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.reader.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return agentmem.Errorf(agentmem.EUNAVAILABLE, "The database does not answer.")
	}
	return nil
}

// fileDSN is the driver's name of the database file at path, ready for
// its parameters.
func fileDSN(path string) string { return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" }

func (s *Store) now() time.Time { return agentmem.Timestamp(s.Now()) }

func (s *Store) tokens() agentmem.TokenCounter {
	if s.Tokens == nil {
		return agentmem.EstimateTokens{}
	}
	return s.Tokens
}

// writeOp is one caller's write, run by the write loop in a transaction
// shared with other queued writes, inside a savepoint of its own.
type writeOp struct {
	ctx        context.Context
	fn         func(tx *sql.Tx) error
	done       chan error
	background bool // agentmem.IsBackground(ctx)
}

// write runs fn in a write transaction and returns once that transaction
// has committed (or fn failed). Concurrent calls share transactions: each
// fn runs in its own savepoint, so one caller's failure rolls back only its
// own changes, and one fsync makes a whole group durable.
//
// Background work's writes (agentmem.IsBackground(ctx)) wait while the
// request path has writes queued, and each commits in a transaction with
// no other background write: a request's write waits for at most one of
// them (see writeSlices).
//
// A job's write (agentmem.WithJob) first checks, in its transaction, that
// the job is still there and leased to its owner (see checkJobRun), and a
// write with a requirement (agentmem.WithRequired) that it holds.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if run, ok := agentmem.JobRunFromContext(ctx); ok {
		write := fn
		fn = func(tx *sql.Tx) error {
			if err := checkJobRun(ctx, tx, run); err != nil {
				return err
			}
			return write(tx)
		}
	}
	if r, ok := agentmem.RequiredFromContext(ctx); ok {
		write := fn
		fn = func(tx *sql.Tx) error {
			if err := checkRequired(ctx, tx, r); err != nil {
				return err
			}
			return write(tx)
		}
	}
	op := &writeOp{ctx: ctx, fn: fn, done: make(chan error, 1), background: agentmem.IsBackground(ctx)}
	queue := s.writes
	if op.background {
		queue = s.background
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return agentmem.Errorf(agentmem.EUNAVAILABLE, "The store is closed.")
	}
	select {
	case queue <- op:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	// Wait for the outcome even if ctx ends meanwhile: once queued, the
	// write may commit, and the caller must not be told otherwise.
	return formatError(<-op.done)
}

// sliceBytes bounds what one transaction of background work (windows,
// chunks, vectors) writes, in bytes of text and vectors: an append
// queued behind it waits for a millisecond or two, not for a thousand
// windows (a hundred everyday windows, 110 KB of text for the full-text
// index, took 14 ms).
const sliceBytes = 16 << 10

// writeSlices writes n items with fn, which writes items [from, to) in
// tx: in one transaction, or, for background work (agentmem.IsBackground),
// in slices of about sliceBytes (size(i) is item i's bytes), each a write
// of its own, so that the request path's writes go between them. A
// failure leaves the slices before it written.
func (s *Store) writeSlices(ctx context.Context, n int, size func(i int) int, fn func(tx *sql.Tx, from, to int) error) error {
	background := agentmem.IsBackground(ctx)
	for from := 0; ; {
		to := n
		if background {
			to = from + 1
			for bytes := size(from); to < n && bytes+size(to) <= sliceBytes; to++ {
				bytes += size(to)
			}
		}
		if err := s.write(ctx, func(tx *sql.Tx) error { return fn(tx, from, to) }); err != nil || to >= n {
			return err
		}
		from = to
	}
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

func (s *Store) inSavepoint(tx *sql.Tx, fn func(tx *sql.Tx) error) error {
	ctx := context.Background()
	if _, err := s.writeExec(ctx, tx, `SAVEPOINT op`); err != nil {
		return formatError(fmt.Errorf("savepoint: %w", err))
	}
	if err := fn(tx); err != nil {
		if _, rerr := s.writeExec(ctx, tx, `ROLLBACK TO op`); rerr != nil {
			return errors.Join(err, formatError(rerr))
		}
		_, _ = s.writeExec(ctx, tx, `RELEASE op`)
		return err
	}
	if _, err := s.writeExec(ctx, tx, `RELEASE op`); err != nil {
		return formatError(fmt.Errorf("release: %w", err))
	}
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

// read runs fn in a read transaction on a reader connection: a consistent
// snapshot of the database.
func (s *Store) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return formatError(fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback()
	err = fn(tx)
	if err == nil {
		err = tx.Commit()
	}
	if errors.Is(err, sql.ErrTxDone) && ctx.Err() != nil {
		// database/sql rolled the transaction back when ctx ended, and a
		// statement or the commit after that says so, not why.
		return ctx.Err()
	}
	if err != nil {
		return formatError(err)
	}
	return nil
}

// migrate applies the embedded migrations not yet recorded in migrations,
// each in its own transaction, in file-name order.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (version TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := s.migrateFile(ctx, name); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

func (s *Store) migrateFile(ctx context.Context, name string) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE version = ?`, name).Scan(&n); err != nil {
		return err
	} else if n > 0 {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (version, applied_at) VALUES (?, ?)`, name, s.now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}

// Size returns the bytes the database takes on disk, its WAL included.
func (s *Store) Size() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// formatError turns driver errors into agentmem errors: a constraint
// violation is ECONFLICT, a busy database EUNAVAILABLE, a full disk (or
// a file at its SetMaxPageCount) EUNAVAILABLE saying so; agentmem errors
// and others pass as they are (clients see the others as internal
// errors). write and read apply it to what their fn returns.
func formatError(err error) error {
	var ae *agentmem.Error
	var e *sqlite.Error
	if errors.As(err, &ae) {
		return err
	}
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_CONSTRAINT:
			return agentmem.Errorf(agentmem.ECONFLICT, "The record already exists.")
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return errors.Join(agentmem.Errorf(agentmem.EUNAVAILABLE, "The database is busy; retry."), err)
		case sqlite3.SQLITE_FULL:
			return errors.Join(errDiskFull, agentmem.ErrStoreDown, err)
		}
	}
	return err
}

// errDiskFull is a write that found the database's disk full: nothing of
// it is stored, what is stored stays readable, and the same write succeeds
// once there is room again.
var errDiskFull = agentmem.Errorf(agentmem.EUNAVAILABLE, "The database's disk is full: nothing was written; reads still work. Retry once space is freed.")

// DefaultMaxPageCount is SQLite's own bound on the pages of a database
// file (SQLITE_MAX_PAGE_COUNT), which SetMaxPageCount restores.
const DefaultMaxPageCount = 4294967294

// SetMaxPageCount bounds the pages of the database file (SQLite's PRAGMA
// max_page_count, on the writer connection): a write that would grow it
// further fails as on a full disk (EUNAVAILABLE, errDiskFull's message),
// while reads go on, and writes that fit in the file's free pages still
// succeed. A bound below the file's size is raised to it; n ≤ 0 restores
// DefaultMaxPageCount. It returns the bound in effect. It is how the
// fault tests fill the disk without a file system of their own, and an
// operator's cap on the file; the bound lasts until Close.
func (s *Store) SetMaxPageCount(ctx context.Context, n int64) (int64, error) {
	if n <= 0 {
		n = DefaultMaxPageCount
	}
	var got int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, n)).Scan(&got)
	})
	if err != nil {
		return 0, fmt.Errorf("set max_page_count: %w", err)
	}
	return got, nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}
