package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const messageColumns = `thread_id, seq, id, role, content, name, tool_calls, tool_call_id, metadata, token_count, created_at`

const insertMessageSQL = `INSERT INTO messages (user_id, ` + messageColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

func scanMessage(row interface{ Scan(...any) error }) (*agentmem.Message, error) {
	var (
		m                   agentmem.Message
		toolCalls, metadata []byte
		created             time.Time
	)
	if err := row.Scan(&m.ThreadID, &m.Seq, &m.ID, &m.Role, &m.Content, &m.Name, &toolCalls, &m.ToolCallID, &metadata, &m.TokenCount, &created); err != nil {
		return nil, err
	}
	if toolCalls != nil {
		if err := json.Unmarshal(toolCalls, &m.ToolCalls); err != nil {
			return nil, fmt.Errorf("message %s tool calls: %w", m.ID, err)
		}
	}
	m.Metadata = jsonValue(metadata)
	m.CreatedAt = created.UTC()
	return &m, nil
}

// AppendMessages implements agentmem.MessageStore.
func (s *Store) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, opt agentmem.AppendOptions) ([]*agentmem.Message, error) {
	if err := agentmem.PrepareAppend(msgs, opt, s.MaxMessageBytes, s.tokens(), s.now()); err != nil {
		return nil, err
	}
	hash := ""
	if opt.IdempotencyKey != "" {
		hash = agentmem.BatchHash(msgs)
	}
	var out []*agentmem.Message
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		out, err = s.appendMessages(ctx, tx, userID, threadID, msgs, opt, hash)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendMessages locks the thread's row first: concurrent appends to the
// thread, from this process or another, wait here until the holder
// commits, then read the last_seq it wrote (READ COMMITTED re-reads a
// locked row), its idempotency key and its messages. That makes seqs
// consecutive and retries exact without retry loops.
//
// With opt.Jobs, one more round trip finds the active jobs of the
// alternatives' keys (pickJob), and the job picked is inserted with the
// messages.
func (s *Store) appendMessages(ctx context.Context, tx pgx.Tx, userID, threadID string, msgs []*agentmem.Message, opt agentmem.AppendOptions, hash string) ([]*agentmem.Message, error) {
	key := opt.IdempotencyKey
	t, err := findLiveThread(ctx, tx, userID, threadID, forNoKeyUpdate)
	if err != nil {
		return nil, err
	}
	if key != "" {
		var (
			prevHash       string
			seqFrom, seqTo int64
		)
		err := tx.QueryRow(ctx, `SELECT request_hash, seq_from, seq_to FROM idempotency_keys WHERE user_id = $1 AND thread_id = $2 AND key = $3`,
			userID, threadID, key).Scan(&prevHash, &seqFrom, &seqTo)
		switch {
		case err == nil && prevHash != hash:
			return nil, agentmem.Errorf(agentmem.ECONFLICT, "Idempotency-Key %q was already used for a different request on this thread.", key)
		case err == nil:
			return findSeqRange(ctx, tx, userID, threadID, seqFrom, seqTo)
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, fmt.Errorf("find idempotency key: %w", err)
		}
	}
	if retry, err := findRetry(ctx, tx, userID, threadID, msgs); err != nil || retry != nil {
		return retry, err
	}

	now := s.now()
	seq := t.LastSeq
	for _, m := range msgs {
		seq++
		m.ThreadID, m.Seq = threadID, seq
		if m.ID == "" {
			m.ID = agentmem.NewID()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
	}
	t.AfterAppend(msgs, now)
	var (
		alts []*agentmem.Job
		job  *agentmem.Job // of alts, picked and prepared
	)
	pick := -1
	if opt.Jobs != nil {
		if alts = opt.Jobs(msgs); len(alts) > 0 {
			if pick, err = pickJob(ctx, tx, userID, alts); err != nil {
				return nil, err
			}
		}
		if pick >= 0 {
			if job, err = agentmem.PrepareJob(userID, alts[pick], now); err != nil {
				return nil, err
			}
		}
	}
	// One round trip: the messages, the thread's new state, the key and
	// the job.
	b := &pgx.Batch{}
	queueMessages(b, userID, msgs)
	b.Queue(`UPDATE threads SET last_seq = $1, message_count = message_count + $2, title = $3, status = $4, ended_at = $5, updated_at = $6
		WHERE user_id = $7 AND id = $8`, t.LastSeq, int64(len(msgs)), t.Title, t.Status, t.EndedAt, t.UpdatedAt, userID, threadID)
	after := []string{"update thread"}
	if key != "" {
		b.Queue(`INSERT INTO idempotency_keys (user_id, thread_id, key, request_hash, seq_from, seq_to, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			userID, threadID, key, hash, msgs[0].Seq, seq, now)
		after = append(after, "insert idempotency key")
	}
	if pick >= 0 {
		b.Queue(insertJobSQL, insertJobArgs(job)...)
		after = append(after, "insert job")
	}
	tags, err := execBatch(ctx, tx, b, msgs, after...)
	if err != nil {
		if pick >= 0 && isUniqueViolation(err, "jobs_pkey") {
			return nil, insertJobError(job, err)
		}
		return nil, err
	}
	if pick >= 0 && tags[len(tags)-1].RowsAffected() == 0 {
		// Another transaction enqueued a job of the key since pickJob looked.
		if pick, job, err = enqueuePicked(ctx, tx, userID, alts, now); err != nil {
			return nil, err
		}
	}
	if pick >= 0 {
		*alts[pick] = *job
	}
	return msgs, nil
}

// queueMessages queues the inserts of msgs, whose thread, seq, ID and
// creation time are set.
func queueMessages(b *pgx.Batch, userID string, msgs []*agentmem.Message) {
	for _, m := range msgs {
		b.Queue(insertMessageSQL, userID, m.ThreadID, m.Seq, m.ID, m.Role, m.Content, m.Name, toolCallsJSON(m.ToolCalls),
			m.ToolCallID, string(m.Metadata), m.TokenCount, m.CreatedAt)
	}
}

// sendBatch runs b, whose first len(msgs) statements insert msgs (see
// queueMessages) and whose next ones do what after names, and returns the
// first failure; a taken message ID is ECONFLICT naming the message.
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, msgs []*agentmem.Message, after ...string) error {
	_, err := execBatch(ctx, tx, b, msgs, after...)
	return err
}

// execBatch is sendBatch returning the command tag of each statement.
func execBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, msgs []*agentmem.Message, after ...string) ([]pgconn.CommandTag, error) {
	br := tx.SendBatch(ctx, b)
	tags := make([]pgconn.CommandTag, b.Len())
	for i := range b.Len() {
		var err error
		if tags[i], err = br.Exec(); err != nil {
			br.Close()
			switch {
			case i >= len(msgs) && i-len(msgs) < len(after):
				return nil, fmt.Errorf("%s: %w", after[i-len(msgs)], err)
			case i >= len(msgs):
				return nil, fmt.Errorf("batch statement %d: %w", i, err)
			case isUniqueViolation(err, "messages_user_id"):
				return nil, agentmem.Errorf(agentmem.ECONFLICT, "Message id %q is already used.", msgs[i].ID)
			default:
				return nil, fmt.Errorf("insert message: %w", err)
			}
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("insert messages: %w", err)
	}
	return tags, nil
}

// findRetry recognises a batch whose client-given message IDs are already
// stored: if all of them are, in this thread, with the same roles and
// content, it returns the stored messages; if only some are, or they
// differ, it returns ECONFLICT; if none are, it returns nil.
func findRetry(ctx context.Context, tx pgx.Tx, userID, threadID string, msgs []*agentmem.Message) ([]*agentmem.Message, error) {
	var ids []string
	for _, m := range msgs {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `SELECT `+messageColumns+` FROM messages WHERE user_id = $1 AND id = ANY($2)`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("find message ids: %w", err)
	}
	found, err := scanMessages(rows)
	if err != nil {
		return nil, err
	}
	stored := make(map[string]*agentmem.Message, len(found))
	for _, m := range found {
		stored[m.ID] = m
	}
	return agentmem.MatchRetry(threadID, msgs, stored)
}

func findSeqRange(ctx context.Context, tx pgx.Tx, userID, threadID string, from, to int64) ([]*agentmem.Message, error) {
	rows, err := tx.Query(ctx, `SELECT `+messageColumns+` FROM messages WHERE user_id = $1 AND thread_id = $2 AND seq BETWEEN $3 AND $4 ORDER BY seq`,
		userID, threadID, from, to)
	if err != nil {
		return nil, fmt.Errorf("find messages: %w", err)
	}
	return scanMessages(rows)
}

func scanMessages(rows pgx.Rows) ([]*agentmem.Message, error) {
	defer rows.Close()
	msgs := []*agentmem.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("scan message: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	return msgs, nil
}

// toolCallsJSON returns the tool_calls value: NULL when there are none.
func toolCallsJSON(calls []agentmem.ToolCall) any {
	if len(calls) == 0 {
		return nil
	}
	b, _ := json.Marshal(calls) // plain strings cannot fail to encode
	return string(b)
}

// FindMessages implements agentmem.MessageStore.
//
//	SELECT … FROM messages WHERE user_id = $1 AND thread_id = $2 AND seq > $3 AND seq < $4
//	ORDER BY seq [DESC] LIMIT n+1
//
// is a range scan of the primary key: reading the newest page of a long
// thread costs what the first page does.
func (s *Store) FindMessages(ctx context.Context, userID, threadID string, f agentmem.MessageFilter) ([]*agentmem.Message, string, error) {
	list := agentmem.MessageList(userID, threadID, f)
	limit, after, before, err := agentmem.MessageRange(list, f)
	if err != nil {
		return nil, "", err
	}
	order := "ASC"
	if f.Desc {
		order = "DESC"
	}
	var msgs []*agentmem.Message
	err = s.read(ctx, func(tx pgx.Tx) error {
		find := findLiveThread
		if f.IncludeDeleted {
			find = findThread
		}
		if _, err := find(ctx, tx, userID, threadID, noLock); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+messageColumns+` FROM messages WHERE user_id = $1 AND thread_id = $2 AND seq > $3 AND seq < $4
			ORDER BY seq `+order+` LIMIT $5`, userID, threadID, after, before, limit+1)
		if err != nil {
			return fmt.Errorf("find messages: %w", err)
		}
		msgs, err = scanMessages(rows)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	msgs, next := agentmem.MessagePage(msgs, limit, list)
	return msgs, next, nil
}
