package postgres

import (
	"context"
	"fmt"
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

// SearchText implements agentmem.TextSearcher.
//
//	SELECT …, ts_rank(m.tsv, q) AS score FROM memories m, to_tsquery('english', '''w1'' | ''w2'' …') q
//	WHERE m.user_id = $1 AND m.tsv @@ q [AND m.invalid_at IS NULL] [AND filters]
//	ORDER BY score DESC, m.id LIMIT n
//
// and the same over messages, joined to their threads (for the agent and
// soft deletion); the two lists are merged by score. The score is
// ts_rank: the sum over the query words an item holds of their
// frequency in it, each further occurrence of a word adding less, so an
// item holding more of the words ranks higher. It is not divided by the
// item's length: a window's own turn, written twice, then outranks its
// neighbours (see agentmem.WindowText). ts_rank_cd (cover density) was
// slower by half and found less (LoCoMo R@5 0.556 against 0.640,
// docs/benchmarks.md). The GIN indexes are shared by all users;
// PostgreSQL combines them with the primary keys' user_id.
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

// search returns the best hits of one scope.
//
// Over messages and memories, it ranks the union of the user's newest
// termCandidates turns (memories) that hold each of the query's words
// (terms), not every one that holds one: a common word occurs in most of
// a long history, and ranking all of them read every one's tsvector
// (PostgreSQL walks the user's rows newest first, by their time-ordered
// IDs, for a common word, and the GIN index for a rare one). A history
// in which no word occurs more than termCandidates times is ranked
// whole, as before.
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
		// By its window once it has one (the expression of the index
		// messages_search).
		from, tsv = `messages m JOIN threads t ON t.user_id = m.user_id AND t.id = m.thread_id`, "coalesce(m.window_tsv, m.tsv)"
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
	var sql string
	if scope != agentmem.ScopeMessages && scope != agentmem.ScopeMemories {
		sql = `SELECT ` + cols + `, ts_rank(` + tsv + `, q) AS score FROM ` + from + `, to_tsquery('english', ` + arg(query) + `) q
		WHERE ` + strings.Join(append(where, tsv+" @@ q"), " AND ") + ` ORDER BY score DESC, 1 LIMIT ` + arg(q.Limit)
	} else {
		perTerm := make([]string, len(terms))
		k := arg(termCandidates)
		for i, term := range terms {
			perTerm[i] = `(SELECT m.id FROM ` + from + ` WHERE ` + strings.Join(append(where, tsv+" @@ to_tsquery('english', "+arg(tsQuery([]string{term}))+")"), " AND ") +
				` ORDER BY m.id DESC LIMIT ` + k + `)`
		}
		sql = `WITH c AS (` + strings.Join(perTerm, " UNION ") + `)
		SELECT ` + cols + `, ts_rank(` + tsv + `, q) AS score FROM c JOIN ` + from + ` ON m.user_id = $1 AND m.id = c.id, to_tsquery('english', ` + arg(query) + `) q
		ORDER BY score DESC, 1 LIMIT ` + arg(q.Limit)
	}
	if scope == agentmem.ScopeMessages || scope == agentmem.ScopeMemories {
		// Planned for these words each time (an unnamed statement): a
		// cached statement's generic plan, made for no word in
		// particular, walked every word's rows or none.
		args = append([]any{pgx.QueryExecModeExec}, args...)
	}
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
