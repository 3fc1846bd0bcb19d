package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem"
)

const messageColumns = `thread_id, seq, id, role, content, name, tool_calls, tool_call_id, metadata, token_count, created_at`

func scanMessage(row interface{ Scan(...any) error }) (*agentmem.Message, error) {
	var (
		m         agentmem.Message
		toolCalls sql.NullString
		metadata  string
		created   int64
	)
	if err := row.Scan(&m.ThreadID, &m.Seq, &m.ID, &m.Role, &m.Content, &m.Name, &toolCalls, &m.ToolCallID, &metadata, &m.TokenCount, &created); err != nil {
		return nil, err
	}
	if toolCalls.Valid {
		if err := json.Unmarshal([]byte(toolCalls.String), &m.ToolCalls); err != nil {
			return nil, fmt.Errorf("message %s tool calls: %w", m.ID, err)
		}
	}
	m.Metadata = json.RawMessage(metadata)
	m.CreatedAt = fromMicros(created)
	return &m, nil
}

const (
	insertMessageQuery      = `INSERT INTO messages (user_id, ` + messageColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateThreadAfterAppend = `UPDATE threads SET last_seq = ?, message_count = message_count + ?, title = ?, status = ?, ended_at = ?, updated_at = ?
		WHERE user_id = ? AND id = ?`
)

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
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		out, err = s.appendMessages(ctx, tx, userID, threadID, msgs, opt, hash)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Store) appendMessages(ctx context.Context, tx *sql.Tx, userID, threadID string, msgs []*agentmem.Message, opt agentmem.AppendOptions, hash string) ([]*agentmem.Message, error) {
	key := opt.IdempotencyKey
	st, err := s.writeStmt(ctx, tx, findThreadQuery)
	if err != nil {
		return nil, fmt.Errorf("prepare find thread: %w", err)
	}
	t, err := scanThread(st.QueryRowContext(ctx, userID, threadID))
	if t, err = liveThread(foundThread(t, err, threadID)); err != nil {
		return nil, err
	}
	if key != "" {
		var (
			prevHash       string
			seqFrom, seqTo int64
		)
		err := tx.QueryRowContext(ctx, `SELECT request_hash, seq_from, seq_to FROM idempotency_keys WHERE user_id = ? AND thread_id = ? AND key = ?`,
			userID, threadID, key).Scan(&prevHash, &seqFrom, &seqTo)
		switch {
		case err == nil && prevHash != hash:
			return nil, agentmem.Errorf(agentmem.ECONFLICT, "Idempotency-Key %q was already used for a different request on this thread.", key)
		case err == nil:
			return findSeqRange(ctx, tx, userID, threadID, seqFrom, seqTo)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("find idempotency key: %w", err)
		}
	}
	if retry, err := s.findRetry(ctx, tx, userID, threadID, msgs); err != nil || retry != nil {
		return retry, err
	}

	now := s.now()
	stmt, err := s.writeStmt(ctx, tx, insertMessageQuery)
	if err != nil {
		return nil, fmt.Errorf("prepare insert message: %w", err)
	}
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
		if _, err := stmt.ExecContext(ctx, userID, m.ThreadID, m.Seq, m.ID, m.Role, m.Content, m.Name, toolCallsJSON(m.ToolCalls),
			m.ToolCallID, string(m.Metadata), m.TokenCount, micros(m.CreatedAt)); err != nil {
			if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
				return nil, agentmem.Errorf(agentmem.ECONFLICT, "Message id %q is already used.", m.ID)
			}
			return nil, fmt.Errorf("insert message: %w", err)
		}
	}
	t.AfterAppend(msgs, now)
	if _, err := s.writeExec(ctx, tx, updateThreadAfterAppend, t.LastSeq, len(msgs), t.Title, t.Status, nullMicros(t.EndedAt), micros(t.UpdatedAt), userID, threadID); err != nil {
		return nil, fmt.Errorf("update thread: %w", err)
	}
	if key != "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (user_id, thread_id, key, request_hash, seq_from, seq_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			userID, threadID, key, hash, msgs[0].Seq, seq, micros(now)); err != nil {
			return nil, fmt.Errorf("insert idempotency key: %w", err)
		}
	}
	if opt.Jobs != nil {
		if err := s.enqueueAlternatives(ctx, tx, userID, opt.Jobs(msgs), now); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// findRetry recognises a batch whose client-given message IDs are already
// stored: if all of them are, in this thread, with the same roles and
// content, it returns the stored messages; if only some are, or they
// differ, it returns ECONFLICT; if none are, it returns nil.
func (s *Store) findRetry(ctx context.Context, tx *sql.Tx, userID, threadID string, msgs []*agentmem.Message) ([]*agentmem.Message, error) {
	var ids []any
	for _, m := range msgs {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE user_id = ? AND id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`,
		append([]any{userID}, ids...)...)
	if err != nil {
		return nil, fmt.Errorf("find message ids: %w", err)
	}
	defer rows.Close()
	stored := make(map[string]*agentmem.Message, len(ids))
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("scan message: %w", err)
		}
		stored[m.ID] = m
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return agentmem.MatchRetry(threadID, msgs, stored)
}

func findSeqRange(ctx context.Context, tx *sql.Tx, userID, threadID string, from, to int64) ([]*agentmem.Message, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE user_id = ? AND thread_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`,
		userID, threadID, from, to)
	if err != nil {
		return nil, fmt.Errorf("find messages: %w", err)
	}
	return scanMessages(rows)
}

func scanMessages(rows *sql.Rows) ([]*agentmem.Message, error) {
	defer rows.Close()
	msgs := []*agentmem.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("scan message: %w", err)
		}
		msgs = append(msgs, m)
	}
	return msgs, rows.Err()
}

func toolCallsJSON(calls []agentmem.ToolCall) any {
	if len(calls) == 0 {
		return nil
	}
	b, _ := json.Marshal(calls)
	return string(b)
}

// FindMessages implements agentmem.MessageStore.
//
//	SELECT … FROM messages WHERE user_id = ? AND thread_id = ? [AND seq > ?] [AND seq < ?]
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
	err = s.read(ctx, func(tx *sql.Tx) error {
		find := findLiveThread
		if f.IncludeDeleted {
			find = findThread
		}
		if _, err := find(ctx, tx, userID, threadID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE user_id = ? AND thread_id = ? AND seq > ? AND seq < ?
			ORDER BY seq `+order+` LIMIT ?`, userID, threadID, after, before, limit+1)
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
