// Package sqlite implements agentmem.Store on an embedded SQLite file with
// the pure-Go driver modernc.org/sqlite: WAL, synchronous=FULL by default,
// one writer connection that commits concurrent writes together (group
// commit), and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem"
	sqlite "modernc.org/sqlite"
)

var _ agentmem.Store = (*Store)(nil)

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
