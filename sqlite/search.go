package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
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
	// A chunk's text is read from its turns (fillChunkTexts).
	chunkHitColumns = `m.id, '', m.thread_id, m.seq_from, m.seq_to, m.created_at, t.agent_id`
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
// words never reach the index query (see agentmem.SearchTerms); the
// windows' index holds the user too, and messages are searched as
// searchMessages says.
func (s *Store) SearchText(ctx context.Context, userID string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	terms, err := q.Prepare()
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return []agentmem.TextHit{}, nil
	}
	match := ftsQuery(terms)
	// Each scope in a read transaction of its own, at once.
	return agentmem.SearchScopes(q, func(scope string) (found []agentmem.TextHit, err error) {
		err = s.read(ctx, func(tx *sql.Tx) error {
			switch scope {
			case agentmem.ScopeMemories:
				found, err = searchMemories(ctx, tx, userID, terms, q)
			case agentmem.ScopeMessages:
				found, err = searchMessages(ctx, tx, userID, terms, q)
			case agentmem.ScopeChunks, agentmem.ScopeSummaries:
				found, err = searchPassages(ctx, tx, userID, scope, match, q)
			}
			return err
		})
		return found, err
	})
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

// searchMemories finds the user's memories as searchMessages finds
// turns: each query word's newest termCandidates memories of the user
// first (the index holds the user, migration 0019); when no list fills,
// FTS5's BM25 ranks every match; otherwise the lists' memories are
// ranked in Go (each word once in a memory of average length), and the
// best are joined to the memories and filtered; should the filters leave
// fewer than q.Limit (a category, a kind, an agent of long ago, the
// invalidated), every match is ranked after all.
func searchMemories(ctx context.Context, tx *sql.Tx, userID string, terms []string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	user := `u:"` + userToken(userID) + `"`
	var c conditions
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
	lists, full, err := termLists(ctx, tx, "memories_fts", user, terms)
	if err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	exact := func() ([]agentmem.TextHit, error) {
		rows, err := tx.QueryContext(ctx, `SELECT `+memoryHitColumns+`, -bm25(memories_fts, 1.0, 0.0) FROM memories_fts
			JOIN memories m ON m.rowid = memories_fts.rowid
			WHERE memories_fts MATCH ? AND `+c.String()+` ORDER BY bm25(memories_fts, 1.0, 0.0), m.id LIMIT ?`,
			append(append([]any{user + ` AND text:(` + ftsQuery(terms) + `)`}, c.args...), q.Limit)...)
		if err != nil {
			return nil, fmt.Errorf("search memories: %w", err)
		}
		return scanHits(rows, agentmem.ScopeMemories)
	}
	if !full {
		return exact()
	}
	var n float64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE user_id = ?`, userID).Scan(&n); err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	scores := map[int64]float64{}
	for _, l := range lists {
		var spanned float64
		if len(l) == termCandidates {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE rowid >= ? AND user_id = ?`, l[len(l)-1], userID).Scan(&spanned); err != nil {
				return nil, fmt.Errorf("search memories: %w", err)
			}
		}
		idf := bm25IDF(n, float64(len(l)), spanned)
		for _, d := range l {
			scores[d] += idf * bm25TF(1)
		}
	}
	hits, err := joinBounded(scores, q.Limit, func(docs string) ([]agentmem.TextHit, error) {
		rows, err := tx.QueryContext(ctx, `SELECT `+memoryHitColumns+`, h.score FROM (`+docsScores+`) h
			CROSS JOIN memories m ON m.rowid = h.doc
			WHERE `+c.String()+` ORDER BY h.score DESC, m.id LIMIT ?`, append(append([]any{docs}, c.args...), q.Limit)...)
		if err != nil {
			return nil, fmt.Errorf("search memories: %w", err)
		}
		return scanHits(rows, agentmem.ScopeMemories)
	})
	if err != nil || len(hits) >= q.Limit {
		return hits, err
	}
	return exact() // the filters left too few of the lists' (an old thread's, a category's)
}

// termLists returns, for each of terms, the rowids of the user's newest
// termCandidates rows of table (an FTS5 index with the columns text and
// u) that hold it, newest first, and whether any list is full (then
// older rows hold the word too). user is the MATCH of the user's token.
func termLists(ctx context.Context, tx *sql.Tx, table, user string, terms []string) ([][]int64, bool, error) {
	lists := make([][]int64, len(terms))
	full := false
	for i, t := range terms {
		var err error
		lists[i], err = rowids(ctx, tx, `SELECT rowid FROM `+table+` WHERE `+table+` MATCH ? ORDER BY rowid DESC LIMIT ?`,
			user+` AND text:`+ftsQuery([]string{t}), termCandidates)
		if err != nil {
			return nil, false, err
		}
		full = full || len(lists[i]) == termCandidates
	}
	return lists, full, nil
}

// bm25IDF is FTS5's IDF of a word held by df of n rows; when the word's
// list is full (spanned > 0: the rows its list spans), df is estimated
// from its share of those.
func bm25IDF(n, df, spanned float64) float64 {
	if spanned > 0 {
		df = df / spanned * n
	}
	idf := math.Log((n - df + 0.5) / (df + 0.5))
	if idf <= 0 {
		idf = 1e-6 // as FTS5
	}
	return idf
}

// bm25TF is BM25's weight of a word held tf times by a row of average
// length.
func bm25TF(tf float64) float64 { return tf * (bm25K1 + 1) / (tf + bm25K1) }

// docsScores reads a JSON array of [rowid, score] pairs (joinBounded's
// argument) as rows (doc, score).
const docsScores = `SELECT value ->> 0 AS doc, value ->> 1 AS score FROM json_each(?)`

// joinBounded joins the best of scores (rowid → score), best first, by
// join, which takes them as a JSON array of [rowid, score] pairs (read by
// docsScores), filters, and returns the best limit: first the best
// max(windowCandidates, 4×limit), then all when the filters left fewer
// than limit of those.
func joinBounded(scores map[int64]float64, limit int, join func(docs string) ([]agentmem.TextHit, error)) ([]agentmem.TextHit, error) {
	type scored struct {
		doc   int64
		score float64
	}
	ranked := make([]scored, 0, len(scores))
	for d, s := range scores {
		ranked = append(ranked, scored{d, s})
	}
	slices.SortFunc(ranked, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(b.doc, a.doc)
	})
	joinRanked := func(ranked []scored) ([]agentmem.TextHit, error) {
		pairs := make([][2]float64, len(ranked))
		for i, r := range ranked {
			pairs[i] = [2]float64{float64(r.doc), r.score}
		}
		list, err := json.Marshal(pairs)
		if err != nil {
			return nil, err
		}
		return join(string(list))
	}
	bound := max(windowCandidates, 4*limit)
	hits, err := joinRanked(ranked[:min(bound, len(ranked))])
	if err != nil || len(hits) >= limit || len(ranked) <= bound {
		return hits, err
	}
	return joinRanked(ranked) // the filters left too few of the best
}

// userToken is a user's token in the u column of message_windows_fts
// (migration/0018_window_user.sql): "u", the user ID in hex, "0", one
// token of letters and digits that the tokenizer keeps whole and the
// porter stemmer leaves alone.
func userToken(userID string) string { return "u" + hex.EncodeToString([]byte(userID)) + "0" }

// termCandidates is how many of the user's newest windows that hold each
// of a query's words a search over messages reads (see searchMessages).
const termCandidates = 1000

// searchMessages finds messages by their windows (message_windows_fts)
// and, for those that have none yet, by their content (messages_fts).
//
// It first asks the windows' index, for each of the query's words, for
// the user's newest termCandidates windows that hold it: newest first, no
// ranking, so each costs what it returns. When no word fills its list,
// the lists hold every window that matches, and the windows are ranked
// by FTS5's BM25 (searchMessagesExact). Otherwise a common word occurs in
// most of a long history, and ranking every window that holds one cost
// ~300 ms over 100,000 turns (BM25 counts every match of each word for
// its IDF): the candidates are the lists' windows, ranked in Go
// (searchMessagesBounded); should the query's filters leave fewer than
// q.Limit of those (a thread or an agent of long ago), every match is
// ranked after all.
func searchMessages(ctx context.Context, tx *sql.Tx, userID string, terms []string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	user := `u:"` + userToken(userID) + `"`
	lists, full, err := termLists(ctx, tx, "message_windows_fts", user, terms)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	if full {
		hits, err := searchMessagesBounded(ctx, tx, userID, terms, lists, q)
		if err != nil || len(hits) >= q.Limit {
			return hits, err
		}
		// The filters left too few of the lists' turns (an old thread's):
		// rank every match.
	}
	return searchMessagesExact(ctx, tx, userID, user+` AND text:(`+ftsQuery(terms)+`)`, ftsQuery(terms), q)
}

// rowids returns the first column of a query's rows.
func rowids(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// searchMessagesExact ranks every window of the user that matches
// (windows, a MATCH of the user's windows) by BM25, and the user's turns
// that have no window yet that match (match, over messages_fts).
//
// Only the best windowCandidates windows are joined to their messages
// (the join, not BM25, was half the time of a search over 100,000
// messages; docs/benchmarks.md). When fewer than q.Limit of those pass
// the filters and more windows match than the bound, the search runs
// again over all the matches, so what is found does not depend on the
// bound.
func searchMessagesExact(ctx context.Context, tx *sql.Tx, userID, windows, match string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	bound := max(windowCandidates, 4*q.Limit)
	hits, err := searchMessagesWithin(ctx, tx, userID, windows, match, q, bound)
	if err != nil || len(hits) >= q.Limit {
		return hits, err
	}
	// Did the bound leave windows out? Counting up to one past it reads
	// rowids only, no BM25.
	var matched int
	err = tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM message_windows_fts WHERE message_windows_fts MATCH ? LIMIT ?)`,
		windows, bound+1).Scan(&matched)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	if matched <= bound {
		return hits, nil
	}
	return searchMessagesWithin(ctx, tx, userID, windows, match, q, -1)
}

// windowCandidates is how many of the best matching windows a search
// joins to their messages before it looks further.
const windowCandidates = 200

// searchMessagesWithin is searchMessagesExact over the best bound windows
// that match (all of them when bound is -1). Messages are joined to the
// hits (CROSS JOIN keeps that order: otherwise SQLite may read all of the
// user's messages and look each up among the hits). The u column weighs
// nothing in BM25.
func searchMessagesWithin(ctx context.Context, tx *sql.Tx, userID, windows, match string, q agentmem.TextQuery, bound int) ([]agentmem.TextHit, error) {
	return joinMessages(ctx, tx, userID, q, `WITH w AS (
			SELECT rowid AS doc, -bm25(message_windows_fts, 1.0, 0.0) AS score FROM message_windows_fts WHERE message_windows_fts MATCH ?
			ORDER BY score DESC LIMIT ?
		)
		SELECT doc, score FROM w
		UNION ALL
		SELECT rowid, -bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?
			AND NOT EXISTS (SELECT 1 FROM message_windows w WHERE w.user_id = ? AND w.doc = messages_fts.rowid)`,
		windows, bound, match, userID)
}

// joinMessages returns the best q.Limit hits of hits, a query of (doc,
// score) rows, joined to the user's messages and their threads, filtered.
func joinMessages(ctx context.Context, tx *sql.Tx, userID string, q agentmem.TextQuery, hits string, args ...any) ([]agentmem.TextHit, error) {
	var c conditions
	c.add("m.user_id = ?", userID)
	c.add("t.deleted_at IS NULL")
	c.addFilter(q.Filter, "t.agent_id")
	rows, err := tx.QueryContext(ctx, `SELECT `+messageHitColumns+`, h.score FROM (`+hits+`) h
		CROSS JOIN messages m ON m.rowid = h.doc
		JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
		WHERE `+c.String()+` ORDER BY h.score DESC, m.id LIMIT ?`, append(append(args, c.args...), q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	return scanHits(rows, agentmem.ScopeMessages)
}

// bm25K1 is BM25's k1, as FTS5's. (Rows ranked in Go are taken to be of
// average length, so b, 0.75 in FTS5, plays no part.)
const bm25K1 = 1.2

// searchMessagesBounded ranks the windows of lists (each the user's
// newest termCandidates windows holding a term of terms, newest first)
// and the turns that have no window yet, in Go, by BM25 over what the
// lists tell:
//
//   - a word's IDF from the user's windows: the number of the user's
//     windows (N) and of those holding the word, counted when its list is
//     not full, estimated from its share of the windows its list spans
//     when it is;
//   - its frequency in a window: 2 when the window's own turn holds it
//     (the turn is written twice in its window, agentmem.WindowText; read
//     from messages_fts over the span of the list), 1 when only its
//     neighbours do; a window of average length.
//
// A window older than a word's list (the word's termCandidates newer
// windows hold it) is scored without that word: over a long history,
// search prefers the newer of windows that hold the same rarer words.
// Turns without a window yet are those of the own lists that are the
// user's and have none (at most looseCandidates, newest first).
func searchMessagesBounded(ctx context.Context, tx *sql.Tx, userID string, terms []string, lists [][]int64, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	var n float64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM message_windows WHERE user_id = ?`, userID).Scan(&n); err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	scores := map[int64]float64{}
	loose := map[int64]float64{} // turns holding a word that no list has, and their scores
	for i, t := range terms {
		l := lists[i]
		var from int64
		var spanned float64
		if len(l) == termCandidates {
			from = l[len(l)-1]
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM message_windows WHERE user_id = ? AND doc >= ?`, userID, from).Scan(&spanned); err != nil {
				return nil, fmt.Errorf("search messages: %w", err)
			}
		}
		idf := bm25IDF(n, float64(len(l)), spanned)
		own, err := rowids(ctx, tx, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid >= ? ORDER BY rowid DESC LIMIT ?`,
			ftsQuery([]string{t}), from, 4*termCandidates)
		if err != nil {
			return nil, fmt.Errorf("search messages: %w", err)
		}
		holds := make(map[int64]bool, len(own))
		for _, d := range own {
			holds[d] = true
		}
		for _, d := range l {
			tf := 1.0
			if holds[d] {
				tf = 2
			}
			scores[d] += idf * bm25TF(tf)
		}
		for _, d := range own {
			if _, ok := scores[d]; !ok {
				loose[d] += idf * bm25TF(2)
			}
		}
	}
	// Of the loose turns, the user's without a window.
	var ids []int64
	for d := range loose {
		if _, ok := scores[d]; !ok {
			ids = append(ids, d)
		}
	}
	slices.Sort(ids)
	ids = ids[max(0, len(ids)-looseCandidates):]
	if len(ids) > 0 {
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, fmt.Errorf("search messages: %w", err)
		}
		bare, err := rowids(ctx, tx, `SELECT m.rowid FROM json_each(?) j CROSS JOIN messages m ON m.rowid = j.value
			WHERE m.user_id = ? AND NOT EXISTS (SELECT 1 FROM message_windows w WHERE w.user_id = m.user_id AND w.doc = m.rowid)`, string(list), userID)
		if err != nil {
			return nil, fmt.Errorf("search messages: %w", err)
		}
		for _, d := range bare {
			scores[d] = loose[d]
		}
	}
	return joinBounded(scores, q.Limit, func(docs string) ([]agentmem.TextHit, error) {
		return joinMessages(ctx, tx, userID, q, docsScores, docs)
	})
}

// looseCandidates bounds the turns without a window that a bounded search
// looks up (see searchMessagesBounded).
const looseCandidates = 2000

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
	hits, err := scanHits(rows, scope)
	if err == nil && scope == agentmem.ScopeChunks {
		err = fillChunkTexts(ctx, tx, userID, hits)
	}
	return hits, err
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
		if found, err = scanHits(rows, scope); err != nil {
			return err
		}
		found = agentmem.FilterItems(found, ids, f)
		return fillChunkTexts(ctx, tx, userID, found)
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}
