package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
// (the index holds the user, migration 0019), ranked in Go by BM25 over
// the user's memories (memoryScores), the best joined to the memories and
// filtered; should the filters leave fewer than q.Limit when a list was
// full (a category, a kind, an agent of long ago, the invalidated), every
// match is ranked after all.
func searchMemories(ctx context.Context, tx *sql.Tx, userID string, terms []string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
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
	join := func(docs string) ([]agentmem.TextHit, error) {
		rows, err := tx.QueryContext(ctx, `SELECT `+memoryHitColumns+`, h.score FROM (`+docsScores+`) h
			CROSS JOIN memories m ON m.rowid = h.doc
			WHERE `+c.String()+` ORDER BY h.score DESC, m.rowid DESC LIMIT ?`, append(append([]any{docs}, c.args...), q.Limit)...)
		if err != nil {
			return nil, fmt.Errorf("search memories: %w", err)
		}
		return scanHits(rows, agentmem.ScopeMemories)
	}
	scores, full, err := memoryScores(ctx, tx, userID, terms, termCandidates)
	if err != nil {
		return nil, err
	}
	hits, err := joinBounded(scores, q.Limit, join)
	if err != nil || len(hits) >= q.Limit || !full {
		return hits, err
	}
	if scores, _, err = memoryScores(ctx, tx, userID, terms, -1); err != nil {
		return nil, err
	}
	return joinBounded(scores, q.Limit, join)
}

// memoryScores returns the BM25 scores of the user's memories that hold
// terms, by rowid, from lists of at most bound memories a word (-1: all),
// and whether a list was full. The statistics are the user's: the number
// of their memories, their average length, and the memories holding each
// word (estimated from its share of the memories its list spans when the
// list is full); a memory holding a word counts it once.
func memoryScores(ctx context.Context, tx *sql.Tx, userID string, terms []string, bound int) ([]agentmem.Scored, bool, error) {
	fail := func(err error) ([]agentmem.Scored, bool, error) {
		return nil, false, fmt.Errorf("search memories: %w", err)
	}
	lists, full, err := termLists(ctx, tx, "memories_fts", `u:"`+userToken(userID)+`"`, terms, bound)
	if err != nil {
		return fail(err)
	}
	if !slices.ContainsFunc(lists, func(l []int64) bool { return len(l) > 0 }) {
		return nil, false, nil
	}
	n, total, err := searchTotals(ctx, tx, userID, agentmem.ScopeMemories)
	if err != nil {
		return fail(err)
	}
	// Each memory's IDFs of the words it holds, added up: it holds each
	// once, so its score is that sum times BM25's weight of one for its
	// length.
	idfs := map[int64]float64{}
	for _, l := range lists {
		var spanned float64
		if bound > 0 && len(l) == bound {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE rowid >= ? AND user_id = ?`, l[len(l)-1], userID).Scan(&spanned); err != nil {
				return fail(err)
			}
		}
		idf := bm25IDF(n, float64(len(l)), spanned)
		for _, d := range l {
			idfs[d] += idf
		}
	}
	scored := agentmem.Ranked(idfs) // of average length
	for i := range scored {
		scored[i].Score *= agentmem.BM25TF(1, 1)
	}
	// The lengths of the best, read.
	best := agentmem.Top(scored, memoryRefine)
	ids := make([]int64, len(best))
	for i, b := range best {
		ids[i] = b.Key
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return fail(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT m.rowid, `+sqlWords("m.text")+` FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value`, string(list))
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	lens := make(map[int64]float64, len(ids))
	for rows.Next() {
		var (
			doc    int64
			length float64
		)
		if err := rows.Scan(&doc, &length); err != nil {
			return fail(err)
		}
		lens[doc] = length
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	avg := max(total/max(n, 1), 1)
	for i, b := range best {
		if l, ok := lens[b.Key]; ok {
			best[i].Score = idfs[b.Key] * agentmem.BM25TF(1, l/avg)
		}
	}
	return scored, full, nil
}

// memoryRefine is how many of the best memories, ranked as if of average
// length, a search reads the lengths of and ranks again.
const memoryRefine = 400

// searchTotals returns the number of the user's items of scope (messages:
// their windows) and their words (migration 0020_turn_index.sql).
func searchTotals(ctx context.Context, tx *sql.Tx, userID, scope string) (items, words float64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT items, words FROM search_totals WHERE user_id = ? AND scope = ?`, userID, scope).Scan(&items, &words)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	return items, words, err
}

// sqlWords is SQL of the number of words of a text column, as
// agentmem.Words counts them when words are one space apart.
func sqlWords(col string) string {
	return `(length(` + col + `) - length(replace(` + col + `, ' ', '')) + 1)`
}

// termLists returns, for each of terms, the rowids of the user's newest
// bound (-1: all) rows of table (an FTS5 index with the columns text and
// u) that hold it, newest first, and whether any list is full (then
// older rows hold the word too). user is the MATCH of the user's token.
func termLists(ctx context.Context, tx *sql.Tx, table, user string, terms []string, bound int) ([][]int64, bool, error) {
	lists := make([][]int64, len(terms))
	full := false
	for i, t := range terms {
		var err error
		lists[i], err = rowids(ctx, tx, `SELECT rowid FROM `+table+` WHERE `+table+` MATCH ? ORDER BY rowid DESC LIMIT ?`,
			user+` AND text:`+ftsQuery([]string{t}), bound)
		if err != nil {
			return nil, false, err
		}
		full = full || bound > 0 && len(lists[i]) == bound
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
	return agentmem.BM25IDF(n, df)
}

// docsScores reads a JSON array of [rowid, score] pairs (joinBounded's
// argument) as rows (doc, score).
const docsScores = `SELECT value ->> 0 AS doc, value ->> 1 AS score FROM json_each(?)`

// joinBounded joins the best of scored (by rowid), best first, by
// join, which takes them as a JSON array of [rowid, score] pairs (read by
// docsScores), filters, and returns the best limit: first the best
// max(windowCandidates, 4×limit), then all when the filters left fewer
// than limit of those.
func joinBounded(scored []agentmem.Scored, limit int, join func(docs string) ([]agentmem.TextHit, error)) ([]agentmem.TextHit, error) {
	joinRanked := func(ranked []agentmem.Scored) ([]agentmem.TextHit, error) {
		pairs := make([][2]float64, len(ranked))
		for i, d := range ranked {
			pairs[i] = [2]float64{float64(d.Key), d.Score}
		}
		list, err := json.Marshal(pairs)
		if err != nil {
			return nil, err
		}
		return join(string(list))
	}
	bound := max(windowCandidates, 4*limit)
	hits, err := joinRanked(agentmem.Top(scored, bound))
	if err != nil || len(hits) >= limit || len(scored) <= bound {
		return hits, err
	}
	return joinRanked(agentmem.Top(scored, -1)) // the filters left too few of the best
}

// userToken is a user's token in the u column of messages_fts and
// memories_fts (migrations 0019 and 0020_turn_index.sql): "u", the user ID in hex, "0", one
// token of letters and digits that the tokenizer keeps whole and the
// porter stemmer leaves alone.
func userToken(userID string) string { return "u" + hex.EncodeToString([]byte(userID)) + "0" }

// termCandidates is how many of the user's newest turns (memories) that
// hold each of a query's words a search over messages (memories) reads
// (see searchMessages).
const termCandidates = 1000

// searchMessages finds messages by their windows (agentmem.MessageWindow):
// each turn is in messages_fts once, and a window is scored from its
// turns' entries (agentmem.ScoreWindows).
//
// It asks messages_fts, for each of the query's words, for the user's
// newest termCandidates turns that hold it: newest first, no ranking, so
// each costs what it returns (ranking every match of a common word cost
// ~300 ms over 100,000 turns). The windows of those turns (message_windows:
// their other turns, their lengths) say which windows hold the word;
// when no list is full, that is every window that holds a word of the
// query. Windows are ranked in Go, the best joined to their messages and
// filtered; should the filters leave fewer than q.Limit of those when a
// list was full (a thread or an agent of long ago), every match is ranked
// after all.
func searchMessages(ctx context.Context, tx *sql.Tx, userID string, terms []string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	join := func(docs string) ([]agentmem.TextHit, error) {
		return joinMessages(ctx, tx, userID, q, docsScores, docs)
	}
	scores, full, err := windowScores(ctx, tx, userID, terms, termCandidates)
	if err != nil {
		return nil, err
	}
	hits, err := joinBounded(scores, q.Limit, join)
	if err != nil || len(hits) >= q.Limit || !full {
		return hits, err
	}
	if scores, _, err = windowScores(ctx, tx, userID, terms, -1); err != nil {
		return nil, err
	}
	return joinBounded(scores, q.Limit, join)
}

// windowRefine is how many of the best windows whose length a search
// guessed it reads the length of (see agentmem.ScoreWindows).
const windowRefine = 400

// windowScores returns the scores of the windows that hold terms, by
// their messages' rowids, from lists of at most bound turns a word (-1:
// all), and whether a list was full.
func windowScores(ctx context.Context, tx *sql.Tx, userID string, terms []string, bound int) ([]agentmem.Scored, bool, error) {
	fail := func(err error) ([]agentmem.Scored, bool, error) {
		return nil, false, fmt.Errorf("search messages: %w", err)
	}
	lists, full, err := termLists(ctx, tx, "messages_fts", `u:"`+userToken(userID)+`"`, terms, bound)
	if err != nil {
		return fail(err)
	}
	p := agentmem.WindowPostings{
		Lists:   lists,
		Bound:   max(bound, 0),
		Spanned: make([]float64, len(terms)),
		Turns:   map[int64]agentmem.TurnWindow{},
	}
	seen := map[int64]bool{}
	var docs []int64
	for i, l := range lists {
		if bound > 0 && len(l) == bound {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM message_windows WHERE user_id = ? AND doc >= ?`, userID, l[len(l)-1]).Scan(&p.Spanned[i]); err != nil {
				return fail(err)
			}
		}
		for _, d := range l {
			if !seen[d] {
				seen[d] = true
				docs = append(docs, d)
			}
		}
	}
	if len(docs) == 0 {
		return nil, false, nil
	}
	var total float64
	if p.Windows, total, err = searchTotals(ctx, tx, userID, agentmem.ScopeMessages); err != nil {
		return fail(err)
	}
	if p.Windows > 0 {
		p.AvgLen = total / p.Windows
	}
	list, err := json.Marshal(docs)
	if err != nil {
		return fail(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT w.doc, w.near, w.len FROM json_each(?) j
		CROSS JOIN message_windows w ON w.user_id = ? AND w.doc = j.value`, string(list), userID)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			doc  int64
			near string
			w    agentmem.TurnWindow
		)
		if err := rows.Scan(&doc, &near, &w.Len); err != nil {
			return fail(err)
		}
		if w.Near, err = agentmem.ParseNear(doc, near); err != nil {
			return fail(err)
		}
		p.Turns[doc] = w
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	scores, err := agentmem.ScoreWindows(p, windowRefine, func(docs []int64) (map[int64]float64, error) {
		list, err := json.Marshal(docs)
		if err != nil {
			return nil, err
		}
		rows, err := tx.QueryContext(ctx, `SELECT m.rowid, w.len, m.name, m.content FROM json_each(?) j
			CROSS JOIN messages m ON m.rowid = j.value
			LEFT JOIN message_windows w ON w.user_id = m.user_id AND w.doc = m.rowid
			WHERE m.user_id = ?`, string(list), userID)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		lens := map[int64]float64{}
		for rows.Next() {
			var (
				doc           int64
				length        sql.NullFloat64
				name, content string
			)
			if err := rows.Scan(&doc, &length, &name, &content); err != nil {
				return nil, err
			}
			if length.Valid {
				lens[doc] = length.Float64
			} else {
				lens[doc] = agentmem.LoneWindowLength(name, content)
			}
		}
		return lens, rows.Err()
	})
	if err != nil {
		return fail(err)
	}
	return scores, full, nil
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

// windowCandidates is how many of the best windows a search joins to
// their messages before it looks further.
const windowCandidates = 200

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
		WHERE `+c.String()+` ORDER BY h.score DESC, m.rowid DESC LIMIT ?`, append(append(args, c.args...), q.Limit)...)
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
