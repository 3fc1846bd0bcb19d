package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem"
)

// ftsQuery returns the FTS5 query that ORs terms, each a string in double
// quotes (a quote inside one doubled), so that no term is read as FTS5
// syntax (AND, NEAR, *, -, column filters).
func ftsQuery(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " OR ")
}

// Columns of the hits of each scope; memories and messages are m.
const (
	memoryHitColumns  = `m.id, m.text, m.thread_id, m.seq_from, m.seq_to, m.created_at, m.agent_id, m.category, m.kind, m.invalid_at, m.importance`
	messageHitColumns = `m.id, m.content, m.thread_id, m.seq, m.created_at, t.agent_id, m.role, m.name`
	chunkHitColumns   = `m.id, m.text, m.thread_id, m.seq_from, m.seq_to, m.created_at, t.agent_id`
	// A summary's ID is its thread's, its seqs 1..through_seq.
	summaryHitColumns = `m.thread_id, m.text, m.thread_id, 1, m.through_seq, m.created_at, t.agent_id`
)

// scanHit reads a row of the hit columns of scope followed by a score.
func scanHit(row interface{ Scan(...any) error }, scope string) (agentmem.TextHit, error) {
	h := agentmem.TextHit{Scope: scope}
	var (
		created int64
		invalid sql.NullInt64
		err     error
	)
	switch scope {
	case agentmem.ScopeMemories:
		err = row.Scan(&h.ID, &h.Text, &h.ThreadID, &h.SeqFrom, &h.SeqTo, &created, &h.AgentID, &h.Category, &h.MemoryKind, &invalid, &h.Importance, &h.Score)
	case agentmem.ScopeChunks, agentmem.ScopeSummaries:
		err = row.Scan(&h.ID, &h.Text, &h.ThreadID, &h.SeqFrom, &h.SeqTo, &created, &h.AgentID, &h.Score)
	default:
		err = row.Scan(&h.ID, &h.Text, &h.ThreadID, &h.SeqFrom, &created, &h.AgentID, &h.Role, &h.Name, &h.Score)
		h.SeqTo = h.SeqFrom
	}
	h.CreatedAt, h.InvalidAt = fromMicros(created), fromNullMicros(invalid)
	return h, err
}

func scanHits(rows *sql.Rows, scope string) ([]agentmem.TextHit, error) {
	defer rows.Close()
	hits := []agentmem.TextHit{}
	for rows.Next() {
		h, err := scanHit(rows, scope)
		if err != nil {
			return nil, fmt.Errorf("scan hit: %w", err)
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// SearchText implements agentmem.TextSearcher.
//
//	SELECT …, -bm25(memories_fts) FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
//	WHERE memories_fts MATCH '"w1" OR "w2" …' AND m.user_id = ? [AND m.invalid_at IS NULL] [AND filters]
//	ORDER BY bm25(memories_fts), m.id LIMIT n
//
// and the same over messages_fts, joined to the messages and their
// threads (for the agent and soft deletion); the two lists are merged by
// score. The score is -bm25 (FTS5's BM25 with k1 = 1.2, b = 0.75, negated
// so that higher is better): the sum over the query words an item holds
// of the word's IDF, weighted by how often the item holds it against its
// length. The indexes are shared by all users: MATCH finds every user's
// matches and the join keeps the user's, which stays cheap because stop
// words never reach the index query (see agentmem.SearchTerms).
func (s *Store) SearchText(ctx context.Context, userID string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	terms, err := q.Prepare()
	if err != nil {
		return nil, err
	}
	hits := []agentmem.TextHit{}
	if len(terms) == 0 {
		return hits, nil
	}
	match := ftsQuery(terms)
	err = s.read(ctx, func(tx *sql.Tx) error {
		for _, scope := range q.Scopes {
			var (
				found []agentmem.TextHit
				err   error
			)
			switch scope {
			case agentmem.ScopeMemories:
				found, err = searchMemories(ctx, tx, userID, match, q)
			case agentmem.ScopeMessages:
				if q.Filter.Category != nil {
					continue // messages have no category
				}
				found, err = searchMessages(ctx, tx, userID, match, q)
			case agentmem.ScopeChunks, agentmem.ScopeSummaries:
				if q.Filter.Category != nil {
					continue // chunks and summaries have no category
				}
				found, err = searchPassages(ctx, tx, userID, scope, match, q)
			}
			if err != nil {
				return err
			}
			hits = append(hits, found...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	agentmem.SortHits(hits)
	return hits[:min(len(hits), q.Limit)], nil
}

// conditions collects the terms of a WHERE clause and their arguments.
type conditions struct {
	where []string
	args  []any
}

func (c *conditions) add(cond string, args ...any) {
	c.where, c.args = append(c.where, cond), append(c.args, args...)
}

func (c *conditions) String() string { return strings.Join(c.where, " AND ") }

// addFilter adds the conditions of f that apply to the columns of m (and
// t, the thread, for messages), as agentmem.SearchFilter.Match states them.
func (c *conditions) addFilter(f agentmem.SearchFilter, agentCol string) {
	if f.AgentID != nil {
		c.add(agentCol+" = ?", *f.AgentID)
	}
	if f.ThreadID != nil {
		c.add("m.thread_id = ?", *f.ThreadID)
	}
	if f.Since != nil {
		c.add("m.created_at >= ?", micros(*f.Since))
	}
	if f.Until != nil {
		c.add("m.created_at < ?", micros(*f.Until))
	}
}

func searchMemories(ctx context.Context, tx *sql.Tx, userID, match string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	var c conditions
	c.add("memories_fts MATCH ?", match)
	c.add("m.user_id = ?", userID)
	if !q.Filter.IncludeInvalid {
		c.add("m.invalid_at IS NULL")
	}
	if q.Filter.Category != nil {
		c.add("m.category = ?", *q.Filter.Category)
	}
	if q.Filter.MemoryKind != nil {
		c.add("m.kind = ?", *q.Filter.MemoryKind)
	}
	c.addFilter(q.Filter, "m.agent_id")
	rows, err := tx.QueryContext(ctx, `SELECT `+memoryHitColumns+`, -bm25(memories_fts) FROM memories_fts
		JOIN memories m ON m.rowid = memories_fts.rowid
		WHERE `+c.String()+` ORDER BY bm25(memories_fts), m.id LIMIT ?`, append(c.args, q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	return scanHits(rows, agentmem.ScopeMemories)
}

// searchMessages finds messages by their windows (message_windows_fts)
// and, for those that have none yet, by their content (messages_fts).
//
// The windows' index is every user's, and a common word matches
// thousands of windows: only the best windowCandidates of them are joined
// to their messages (the join, not BM25, was half the time of a search
// over 100,000 messages; docs/benchmarks.md). When fewer than q.Limit
// of those are the user's (other users' windows ranked first, or the
// filters left few) and more windows match than the bound, the search
// runs again over all the matches, so what is found does not depend on
// the bound.
func searchMessages(ctx context.Context, tx *sql.Tx, userID, match string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	bound := max(windowCandidates, 4*q.Limit)
	hits, err := searchMessagesWithin(ctx, tx, userID, match, q, bound)
	if err != nil || len(hits) >= q.Limit {
		return hits, err
	}
	// Did the bound leave windows out? Counting up to one past it reads
	// rowids only, no BM25.
	var matched int
	err = tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM message_windows_fts WHERE message_windows_fts MATCH ? LIMIT ?)`,
		match, bound+1).Scan(&matched)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	if matched <= bound {
		return hits, nil
	}
	return searchMessagesWithin(ctx, tx, userID, match, q, -1)
}

// windowCandidates is how many of the best matching windows a search
// joins to their messages before it looks further.
const windowCandidates = 200

// searchMessagesWithin is searchMessages over the best bound windows that
// match (all of them when bound is -1). Messages are joined to the hits
// (CROSS JOIN keeps that order: otherwise SQLite may read all of the
// user's messages and look each up among the hits).
func searchMessagesWithin(ctx context.Context, tx *sql.Tx, userID, match string, q agentmem.TextQuery, bound int) ([]agentmem.TextHit, error) {
	var c conditions
	c.add("m.user_id = ?", userID)
	c.add("t.deleted_at IS NULL")
	c.addFilter(q.Filter, "t.agent_id")
	rows, err := tx.QueryContext(ctx, `WITH w AS (
			SELECT rowid AS doc, -bm25(message_windows_fts) AS score FROM message_windows_fts WHERE message_windows_fts MATCH ?
			ORDER BY score DESC LIMIT ?
		)
		SELECT `+messageHitColumns+`, h.score FROM (
			SELECT doc, score FROM w
			UNION ALL
			SELECT rowid, -bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?
				AND NOT EXISTS (SELECT 1 FROM message_windows w WHERE w.user_id = ? AND w.doc = messages_fts.rowid)
		) h
		CROSS JOIN messages m ON m.rowid = h.doc
		JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
		WHERE `+c.String()+` ORDER BY h.score DESC, m.id LIMIT ?`, append(append([]any{match, bound, match, userID}, c.args...), q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	return scanHits(rows, agentmem.ScopeMessages)
}

// searchPassages searches chunks or the newest summary of each thread.
func searchPassages(ctx context.Context, tx *sql.Tx, userID, scope, match string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	table, cols := "chunks", chunkHitColumns
	var c conditions
	if scope == agentmem.ScopeSummaries {
		table, cols = "summaries", summaryHitColumns
	}
	c.add(table+"_fts MATCH ?", match)
	c.add("m.user_id = ?", userID)
	c.add("t.deleted_at IS NULL")
	if scope == agentmem.ScopeSummaries {
		c.add("m.version = (SELECT max(version) FROM summaries WHERE user_id = m.user_id AND thread_id = m.thread_id)")
	}
	c.addFilter(q.Filter, "t.agent_id")
	rows, err := tx.QueryContext(ctx, `SELECT `+cols+`, -bm25(`+table+`_fts) FROM `+table+`_fts
		JOIN `+table+` m ON m.rowid = `+table+`_fts.rowid
		JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
		WHERE `+c.String()+` ORDER BY bm25(`+table+`_fts), m.rowid LIMIT ?`, append(c.args, q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", scope, err)
	}
	return scanHits(rows, scope)
}

// FindItems implements agentmem.TextSearcher. The IDs are passed as one
// JSON array (json_each), whatever their number; the filter applies to
// the few rows found, in Go (agentmem.FilterItems).
func (s *Store) FindItems(ctx context.Context, userID, scope string, ids []string, f agentmem.SearchFilter) ([]agentmem.TextHit, error) {
	if err := agentmem.ValidateTextScope(scope); err != nil {
		return nil, err
	}
	if len(ids) > agentmem.MaxPageSize {
		return nil, agentmem.Errorf(agentmem.EINVALID, "At most %d ids at once.", agentmem.MaxPageSize)
	}
	if len(ids) == 0 {
		return []agentmem.TextHit{}, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("find items: %w", err)
	}
	q := `SELECT ` + memoryHitColumns + `, 0.0 FROM memories m WHERE m.user_id = ? AND m.id IN (SELECT value FROM json_each(?))`
	switch scope {
	case agentmem.ScopeMessages:
		q = `SELECT ` + messageHitColumns + `, 0.0 FROM messages m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
			WHERE m.user_id = ? AND m.id IN (SELECT value FROM json_each(?)) AND m.role IN ('user', 'assistant') AND t.deleted_at IS NULL`
	case agentmem.ScopeChunks:
		q = `SELECT ` + chunkHitColumns + `, 0.0 FROM chunks m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
			WHERE m.user_id = ? AND m.id IN (SELECT value FROM json_each(?)) AND t.deleted_at IS NULL`
	case agentmem.ScopeSummaries:
		q = `SELECT ` + summaryHitColumns + `, 0.0 FROM summaries m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
			WHERE m.user_id = ? AND m.thread_id IN (SELECT value FROM json_each(?)) AND t.deleted_at IS NULL
				AND m.version = (SELECT max(version) FROM summaries WHERE user_id = m.user_id AND thread_id = m.thread_id)`
	}
	var found []agentmem.TextHit
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, userID, string(list))
		if err != nil {
			return fmt.Errorf("find items: %w", err)
		}
		found, err = scanHits(rows, scope)
		return err
	})
	if err != nil {
		return nil, err
	}
	return agentmem.FilterItems(found, ids, f), nil
}
