package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
)

// readStmtCache is how many prepared statements each connection keeps
// (the readers' and the writer's): every query text the store runs, and
// room for the few that filters vary.
const readStmtCache = 256

// cachingConnector opens connections that keep their queries' prepared
// statements (see cachingConn): database/sql asks a driver that can run a
// query text directly to do so, and modernc.org/sqlite then parses and
// plans the statement every time. In a search that is a third of the
// time spent in SQLite (docs/benchmarks.md).
type cachingConnector struct {
	driver.Connector
}

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cachingConn{Conn: conn, stmts: map[string]*cachedStmt{}}, nil
}

// cachingConn runs queries through statements prepared once per query
// text, reset after each use. A statement still in use (its rows open
// while the same query runs again in the transaction) is not shared: that
// query gets a statement of its own, closed with its rows. Exec,
// transactions and the rest go to the connection as they are.
type cachingConn struct {
	driver.Conn
	stmts map[string]*cachedStmt
	order []string // query texts, oldest first: the first is evicted
}

type cachedStmt struct {
	driver.Stmt
	busy bool
}

// cached returns the cached statement of query, busy or not, preparing
// and caching it when there is none; nil when the cache is full of
// statements in use.
func (c *cachingConn) cached(ctx context.Context, query string) (*cachedStmt, error) {
	if st := c.stmts[query]; st != nil {
		return st, nil
	}
	if len(c.stmts) >= readStmtCache {
		c.evict()
	}
	if len(c.stmts) >= readStmtCache { // all busy: do not grow
		return nil, nil
	}
	ds, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	st := &cachedStmt{Stmt: ds}
	c.stmts[query] = st
	c.order = append(c.order, query)
	return st, nil
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, err := c.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	own := st == nil || st.busy // a statement of this query's own, closed with its rows
	if own {
		ds, err := c.prepare(ctx, query)
		if err != nil {
			return nil, err
		}
		st = &cachedStmt{Stmt: ds}
	}
	q, ok := st.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("sqlite: statement cannot query with a context")
	}
	st.busy = true
	rows, err := q.QueryContext(ctx, args)
	if err != nil {
		st.busy = false
		if own {
			st.Close()
		}
		return nil, err
	}
	return &cachedRows{Rows: rows, st: st, own: own}, nil
}

// evict closes the oldest statement not in use.
func (c *cachingConn) evict() {
	for i, q := range c.order {
		if st := c.stmts[q]; !st.busy {
			st.Close()
			delete(c.stmts, q)
			c.order = append(c.order[:i], c.order[i+1:]...)
			return
		}
	}
}

func (c *cachingConn) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *cachingConn) Close() error {
	var errs []error
	for _, st := range c.stmts {
		errs = append(errs, st.Close())
	}
	c.stmts, c.order = nil, nil
	return errors.Join(append(errs, c.Conn.Close())...)
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.prepare(ctx, query)
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, errors.New("sqlite: connection cannot begin a transaction with options")
}

// ExecContext runs a statement through its cached prepared statement
// too (the writer's inserts and updates, compiled once), unless the text
// holds several statements (a migration), which a prepared statement
// would cut at the first, or the cached one is in use.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if !strings.Contains(strings.TrimSuffix(strings.TrimSpace(query), ";"), ";") {
		st, err := c.cached(ctx, query)
		if err != nil {
			return nil, err
		}
		if st != nil && !st.busy {
			if e, ok := st.Stmt.(driver.StmtExecContext); ok {
				return e.ExecContext(ctx, args)
			}
		}
	}
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *cachingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *cachingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *cachingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// cachedRows gives its statement back when closed (the driver resets it).
type cachedRows struct {
	driver.Rows
	st     *cachedStmt
	own    bool
	closed bool
}

func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	r.st.busy = false
	if r.own {
		err = errors.Join(err, r.st.Close())
	}
	return err
}

func (r *cachedRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == io.EOF {
		return io.EOF // unwrapped: database/sql compares it
	}
	return err
}
