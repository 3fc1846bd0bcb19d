package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

// tsQuery returns the to_tsquery text that ORs terms, each a quoted
// string (quotes and backslashes escaped), so that no term is read as
// tsquery syntax (&, !, <->, :*, parentheses). to_tsquery('english', …)
// then stems each term and drops stop words.
func tsQuery(terms []string) string {
	quote := strings.NewReplacer(`\`, `\\`, `'`, `''`)
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = "'" + quote.Replace(t) + "'"
	}
	return strings.Join(quoted, " | ")
}

// Columns of the hits of each scope; memories and messages are m.
const (
	memoryHitColumns  = `m.id, m.text, m.thread_id, m.seq_from, m.seq_to, m.created_at, m.agent_id, m.category, m.kind, m.invalid_at, m.importance`
	messageHitColumns = `m.id, m.content, m.thread_id, m.seq, m.created_at, t.agent_id, m.role, m.name`
	// A chunk's text is read from its turns (fillChunkTexts).
	chunkHitColumns = `m.id, '', m.thread_id, m.seq_from, m.seq_to, m.created_at, t.agent_id`
	// A summary's ID is its thread's, its seqs 1..through_seq.
	summaryHitColumns = `m.thread_id, m.text, m.thread_id, 1::bigint, m.through_seq, m.created_at, t.agent_id`
	newestSummary     = `m.version = (SELECT max(version) FROM summaries WHERE user_id = m.user_id AND thread_id = m.thread_id)`
)

// scanHit reads a row of the hit columns of scope followed by a score.
func scanHit(row interface{ Scan(...any) error }, scope string) (agentmem.TextHit, error) {
	h := agentmem.TextHit{Scope: scope}
	var (
		invalid *time.Time
		score   float32
		err     error
	)
	switch scope {
	case agentmem.ScopeMemories:
		err = row.Scan(&h.ID, &h.Text, &h.ThreadID, &h.SeqFrom, &h.SeqTo, &h.CreatedAt, &h.AgentID, &h.Category, &h.MemoryKind, &invalid, &h.Importance, &score)
	case agentmem.ScopeChunks, agentmem.ScopeSummaries:
		err = row.Scan(&h.ID, &h.Text, &h.ThreadID, &h.SeqFrom, &h.SeqTo, &h.CreatedAt, &h.AgentID, &score)
	default:
		err = row.Scan(&h.ID, &h.Text, &h.ThreadID, &h.SeqFrom, &h.CreatedAt, &h.AgentID, &h.Role, &h.Name, &score)
		h.SeqTo = h.SeqFrom
	}
	h.Score, h.CreatedAt, h.InvalidAt = float64(score), h.CreatedAt.UTC(), utc(invalid)
	return h, err
}

func scanHits(rows pgx.Rows, scope string) ([]agentmem.TextHit, error) {
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

// SearchText implements agentmem.TextSearcher. Messages and memories
// are ranked in Go by BM25 over the user's own statistics, as on SQLite
// (searchMessages, searchMemories), from the user's newest
// termCandidates rows that hold each of the query's words; chunks and
// summaries by ts_rank:
//
//	SELECT ..., ts_rank(m.tsv, q) AS score FROM chunks m ..., to_tsquery('english', '''w1'' | ''w2'' ...') q
//	WHERE m.user_id = $1 AND m.tsv @@ q [AND filters] ORDER BY score DESC, m.id LIMIT n
//
// The lists are merged by score. The GIN indexes are shared by all
// users; PostgreSQL combines them with the primary keys' user_id.
func (s *Store) SearchText(ctx context.Context, userID string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	terms, err := q.Prepare()
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return []agentmem.TextHit{}, nil
	}
	query := tsQuery(terms)
	// Each scope in a read transaction of its own, at once.
	return agentmem.SearchScopes(q, func(scope string) (found []agentmem.TextHit, err error) {
		err = s.read(ctx, func(tx pgx.Tx) error {
			found, err = search(ctx, tx, userID, scope, query, terms, q)
			return err
		})
		return found, err
	})

}

// termCandidates is how many of the newest turns (memories) holding each
// of a query's words a search over messages (memories) ranks (see
// search).
const termCandidates = 200

// search returns the best hits of one scope. Over messages and memories
// it reads, for each of the query's words, the user's newest
// termCandidates turns (memories) that hold it and pass the filters, not
// every one: a common word occurs in most of a long history (PostgreSQL
// walks the user's rows newest first, by their time-ordered IDs, for a
// common word, and the GIN index for a rare one).
func search(ctx context.Context, tx pgx.Tx, userID, scope, query string, terms []string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	from := `memories m`
	cols, agentCol, tsv := memoryHitColumns, "m.agent_id", "m.tsv"
	where := []string{"m.user_id = " + arg(userID)}
	switch scope {
	case agentmem.ScopeMessages:
		from = `messages m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id`
		cols, agentCol = messageHitColumns, "t.agent_id"
		where = append(where, "t.deleted_at IS NULL")
	case agentmem.ScopeChunks:
		from = `chunks m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id`
		cols, agentCol = chunkHitColumns, "t.agent_id"
		where = append(where, "t.deleted_at IS NULL")
	case agentmem.ScopeSummaries:
		from = `summaries m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id`
		cols, agentCol = summaryHitColumns, "t.agent_id"
		where = append(where, "t.deleted_at IS NULL", newestSummary)
	default:
		if !q.Filter.IncludeInvalid {
			where = append(where, "m.invalid_at IS NULL")
		}
		if q.Filter.Category != nil {
			where = append(where, "m.category = "+arg(*q.Filter.Category))
		}
		if q.Filter.MemoryKind != nil {
			where = append(where, "m.kind = "+arg(*q.Filter.MemoryKind))
		}
	}
	// The filters as agentmem.SearchFilter.Match states them.
	f := q.Filter
	if f.AgentID != nil {
		where = append(where, agentCol+" = "+arg(*f.AgentID))
	}
	if f.ThreadID != nil {
		where = append(where, "m.thread_id = "+arg(*f.ThreadID))
	}
	if f.Since != nil {
		where = append(where, "m.created_at >= "+arg(agentmem.Timestamp(*f.Since)))
	}
	if f.Until != nil {
		where = append(where, "m.created_at < "+arg(agentmem.Timestamp(*f.Until)))
	}
	switch scope {
	case agentmem.ScopeMessages:
		return searchMessages(ctx, tx, userID, terms, q, from, where, args)
	case agentmem.ScopeMemories:
		return searchMemories(ctx, tx, userID, terms, q, where, args)
	}
	sql := `SELECT ` + cols + `, ts_rank(` + tsv + `, q) AS score FROM ` + from + `, to_tsquery('english', ` + arg(query) + `) q
		WHERE ` + strings.Join(append(where, tsv+" @@ q"), " AND ") + ` ORDER BY score DESC, 1 LIMIT ` + arg(q.Limit)
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", scope, err)
	}
	hits, err := scanHits(rows, scope)
	if err == nil && scope == agentmem.ScopeChunks {
		err = fillChunkTexts(ctx, tx, userID, hits)
	}
	return hits, err
}

// termList runs a query of a word's list (its last argument the word's
// tsquery, its one before the list's bound), planned for this word each
// time (an unnamed statement): a cached statement's generic plan, made
// for no word in particular, walked every word's rows or none.
func termList(ctx context.Context, tx pgx.Tx, query string, args []any, term string, bound any) (pgx.Rows, error) {
	a := append([]any{pgx.QueryExecModeExec}, args...)
	return tx.Query(ctx, query, append(a, bound, tsQuery([]string{term}))...)
}

// searchMemories ranks the user's memories that hold the query's words
// and pass the filters (where, with its args, as search builds it): for
// each word, its newest termCandidates memories (by their time-ordered
// IDs), scored in Go by BM25 over the user's memories, as SQLite's store
// scores them: the number of the user's memories, the memories holding
// the word (estimated from its share of the memories its list spans when
// the list is full), a memory's length in words against the average of
// those the lists hold; a memory holding a word counts it once.
func searchMemories(ctx context.Context, tx pgx.Tx, userID string, terms []string, q agentmem.TextQuery, where []string, args []any) ([]agentmem.TextHit, error) {
	fail := func(err error) ([]agentmem.TextHit, error) { return nil, fmt.Errorf("search memories: %w", err) }
	var (
		ids   []string
		key   = map[string]int64{}
		lists = make([][]int64, len(terms))
		lens  = map[int64]float64{}
		total float64
	)
	list := `SELECT m.id, m.text FROM memories m WHERE ` + strings.Join(where, " AND ") +
		` AND m.tsv @@ to_tsquery('english', $` + strconv.Itoa(len(args)+2) + `) ORDER BY m.id DESC LIMIT $` + strconv.Itoa(len(args)+1)
	spanned := make([]float64, len(terms))
	for i, term := range terms {
		rows, err := termList(ctx, tx, list, args, term, termCandidates)
		if err != nil {
			return fail(err)
		}
		var id, text string
		for rows.Next() {
			if err := rows.Scan(&id, &text); err != nil {
				rows.Close()
				return fail(err)
			}
			k, ok := key[id]
			if !ok {
				k = int64(len(ids))
				key[id], ids = k, append(ids, id)
				lens[k] = agentmem.Words(text)
				total += lens[k]
			}
			lists[i] = append(lists[i], k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fail(err)
		}
		if len(lists[i]) == termCandidates {
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM memories WHERE user_id = $1 AND id >= $2`, userID, id).Scan(&spanned[i]); err != nil {
				return fail(err)
			}
		}
	}
	if len(ids) == 0 {
		return []agentmem.TextHit{}, nil
	}
	var n float64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM memories WHERE user_id = $1`, userID).Scan(&n); err != nil {
		return fail(err)
	}
	avg := max(total/float64(len(ids)), 1)
	scores := map[int64]float64{}
	for i, l := range lists {
		df := float64(len(l))
		if spanned[i] > 0 {
			df = df / spanned[i] * n
		}
		idf := agentmem.BM25IDF(n, df)
		for _, k := range l {
			scores[k] += idf * agentmem.BM25TF(1, lens[k]/avg)
		}
	}
	best := agentmem.Top(agentmem.Ranked(scores), q.Limit)
	top := make([]string, len(best))
	for i, k := range best {
		top[i] = ids[k.Key]
	}
	rows, err := tx.Query(ctx, `SELECT `+memoryHitColumns+`, 0::real FROM memories m WHERE m.user_id = $1 AND m.id = ANY($2)`, userID, top)
	if err != nil {
		return fail(err)
	}
	hits, err := scanHits(rows, agentmem.ScopeMemories)
	if err != nil {
		return fail(err)
	}
	for i := range hits {
		hits[i].Score = scores[key[hits[i].ID]]
	}
	agentmem.SortHits(hits)
	return hits, nil
}

// searchMessages finds messages by their windows (agentmem.MessageWindow):
// each turn's words are in its own tsv, and a window is scored from its
// turns' (agentmem.ScoreWindows). For each of the query's words it reads
// the user's newest termCandidates turns that hold it and pass the
// filters (from and where, with their args, as search builds them), with
// their windows (message_windows): which windows hold the word.
// The windows are ranked in Go, and the best joined to their messages and
// filtered again (a window's own turn may be older than since). Should
// that leave fewer than q.Limit when a list was full, every match is
// ranked after all.
func searchMessages(ctx context.Context, tx pgx.Tx, userID string, terms []string, q agentmem.TextQuery, from string, where []string, args []any) ([]agentmem.TextHit, error) {
	hits, full, err := searchWindows(ctx, tx, userID, terms, q, from, where, args, termCandidates)
	if err != nil || len(hits) >= q.Limit || !full {
		return hits, err
	}
	hits, _, err = searchWindows(ctx, tx, userID, terms, q, from, where, args, 0)
	return hits, err
}

// windowRefine is how many of the best windows whose length a search
// guessed it reads the length of (see agentmem.ScoreWindows).
const windowRefine = 400

// windowCandidates is how many of the best windows a search joins to
// their messages before it looks further.
const windowCandidates = 200

// searchWindows is searchMessages with lists of at most bound turns a
// word (0: all); it also says whether a list was full. A turn's key in
// the scores is its thread's number among the threads the lists hold,
// shifted above its seq.
func searchWindows(ctx context.Context, tx pgx.Tx, userID string, terms []string, q agentmem.TextQuery, from string, where []string, args []any, bound int) ([]agentmem.TextHit, bool, error) {
	fail := func(err error) ([]agentmem.TextHit, bool, error) {
		return nil, false, fmt.Errorf("search messages: %w", err)
	}
	var (
		threads  []string
		threadNo = map[string]int64{}
	)
	key := func(thread string, seq int64) int64 {
		n, ok := threadNo[thread]
		if !ok {
			n = int64(len(threads))
			threadNo[thread] = n
			threads = append(threads, thread)
		}
		return n<<40 | seq
	}
	unkey := func(k int64) (string, int64) { return threads[k>>40], k & (1<<40 - 1) }
	p := agentmem.WindowPostings{
		Lists:   make([][]int64, len(terms)),
		Bound:   bound,
		Spanned: make([]float64, len(terms)),
		Turns:   map[int64]agentmem.TurnWindow{},
	}
	var limit any // NULL: all
	if bound > 0 {
		limit = bound
	}
	full := false
	for i, term := range terms {
		rows, err := termList(ctx, tx, `SELECT m.thread_id, m.seq, m.id, w.near, w.len FROM `+from+`
			LEFT JOIN message_windows w ON w.user_id = m.user_id AND w.thread_id = m.thread_id AND w.seq = m.seq
			WHERE `+strings.Join(where, " AND ")+` AND m.tsv @@ to_tsquery('english', $`+strconv.Itoa(len(args)+2)+`)
			ORDER BY m.id DESC LIMIT $`+strconv.Itoa(len(args)+1), args, term, limit)
		if err != nil {
			return fail(err)
		}
		var oldest string
		for rows.Next() {
			var (
				thread string
				seq    int64
				near   *string
				length *float64
			)
			if err := rows.Scan(&thread, &seq, &oldest, &near, &length); err != nil {
				rows.Close()
				return fail(err)
			}
			k := key(thread, seq)
			p.Lists[i] = append(p.Lists[i], k)
			if near != nil && length != nil {
				w := agentmem.TurnWindow{Len: *length}
				if w.Near, err = agentmem.ParseNear(k, *near); err != nil {
					rows.Close()
					return fail(err)
				}
				p.Turns[k] = w
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fail(err)
		}
		if bound > 0 && len(p.Lists[i]) == bound {
			full = true
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM messages WHERE user_id = $1 AND id >= $2`, userID, oldest).Scan(&p.Spanned[i]); err != nil {
				return fail(err)
			}
		}
	}
	if len(threads) == 0 {
		return []agentmem.TextHit{}, false, nil
	}
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(message_count), 0) FROM threads WHERE user_id = $1`, userID).Scan(&p.Windows); err != nil {
		return fail(err)
	}
	split := func(keys []int64) ([]string, []int64) {
		ts, seqs := make([]string, len(keys)), make([]int64, len(keys))
		for i, k := range keys {
			ts[i], seqs[i] = unkey(k)
		}
		return ts, seqs
	}
	scores, err := agentmem.ScoreWindows(p, windowRefine, func(keys []int64) (map[int64]float64, error) {
		ts, seqs := split(keys)
		rows, err := tx.Query(ctx, `SELECT h.thread_id, h.seq, w.len, m.name, m.content FROM unnest($2::text[], $3::bigint[]) AS h(thread_id, seq)
			JOIN messages m ON m.user_id = $1 AND m.thread_id = h.thread_id AND m.seq = h.seq
			LEFT JOIN message_windows w ON w.user_id = m.user_id AND w.thread_id = m.thread_id AND w.seq = m.seq`, userID, ts, seqs)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		lens := map[int64]float64{}
		for rows.Next() {
			var (
				thread, name, content string
				seq                   int64
				length                *float64
			)
			if err := rows.Scan(&thread, &seq, &length, &name, &content); err != nil {
				return nil, err
			}
			if length != nil {
				lens[key(thread, seq)] = *length
				continue
			}
			lens[key(thread, seq)] = agentmem.LoneWindowLength(name, content)
		}
		return lens, rows.Err()
	})
	if err != nil {
		return fail(err)
	}
	join := func(best []agentmem.Scored) ([]agentmem.TextHit, error) {
		keys := make([]int64, len(best))
		ss := make([]float64, len(best))
		for i, b := range best {
			keys[i], ss[i] = b.Key, b.Score
		}
		ts, seqs := split(keys)
		a := append([]any{ts, seqs, ss}, args...)
		w := slices.Clone(where)
		for i := range w {
			w[i] = shiftArgs(w[i], 3)
		}
		rows, err := tx.Query(ctx, `SELECT `+messageHitColumns+`, h.score::real FROM unnest($1::text[], $2::bigint[], $3::float8[]) AS h(thread_id, seq, score)
			JOIN (`+from+`) ON m.user_id = $4 AND m.thread_id = h.thread_id AND m.seq = h.seq
			WHERE `+strings.Join(w, " AND ")+` ORDER BY h.score DESC, m.id LIMIT `+strconv.Itoa(q.Limit), a...)
		if err != nil {
			return nil, err
		}
		return scanHits(rows, agentmem.ScopeMessages)
	}
	n := max(windowCandidates, 4*q.Limit)
	hits, err := join(agentmem.Top(scores, n))
	if err == nil && len(hits) < q.Limit && len(scores) > n {
		hits, err = join(agentmem.Top(scores, -1)) // the filters left too few of the best
	}
	if err != nil {
		return fail(err)
	}
	return hits, full, nil
}

// shiftArgs renumbers a condition's placeholders ($1 …) by n.
func shiftArgs(cond string, n int) string {
	var b strings.Builder
	for i := 0; i < len(cond); i++ {
		if cond[i] != '$' {
			b.WriteByte(cond[i])
			continue
		}
		j := i + 1
		for j < len(cond) && cond[j] >= '0' && cond[j] <= '9' {
			j++
		}
		k, _ := strconv.Atoi(cond[i+1 : j])
		b.WriteString("$" + strconv.Itoa(k+n))
		i = j - 1
	}
	return b.String()
}

// FindItems implements agentmem.TextSearcher. The filter applies to the
// few rows found, in Go (agentmem.FilterItems).
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
	q := `SELECT ` + memoryHitColumns + `, 0::real FROM memories m WHERE m.user_id = $1 AND m.id = ANY($2)`
	switch scope {
	case agentmem.ScopeMessages:
		q = `SELECT ` + messageHitColumns + `, 0::real FROM messages m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
			WHERE m.user_id = $1 AND m.id = ANY($2) AND m.role IN ('user', 'assistant') AND t.deleted_at IS NULL`
	case agentmem.ScopeChunks:
		q = `SELECT ` + chunkHitColumns + `, 0::real FROM chunks m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
			WHERE m.user_id = $1 AND m.id = ANY($2) AND t.deleted_at IS NULL`
	case agentmem.ScopeSummaries:
		q = `SELECT ` + summaryHitColumns + `, 0::real FROM summaries m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id
			WHERE m.user_id = $1 AND m.thread_id = ANY($2) AND t.deleted_at IS NULL AND ` + newestSummary
	}
	var found []agentmem.TextHit
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, userID, ids)
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
