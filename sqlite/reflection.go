package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/agentmem/agentmem"
)

var (
	_ agentmem.ReflectionStore = (*Store)(nil)
	_ agentmem.ProfileStore    = (*Store)(nil)
)

const reflectionColumns = `user_id, thread_id, status, through_seq, topics, insights, reason, updated_at`

func scanReflection(row interface{ Scan(...any) error }) (*agentmem.Reflection, error) {
	var (
		r                agentmem.Reflection
		topics, insights string
		updated          int64
	)
	if err := row.Scan(&r.UserID, &r.ThreadID, &r.Status, &r.ThroughSeq, &topics, &insights, &r.Reason, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(topics), &r.Topics); err != nil {
		return nil, fmt.Errorf("reflection of %s topics: %w", r.ThreadID, err)
	}
	if err := json.Unmarshal([]byte(insights), &r.Insights); err != nil {
		return nil, fmt.Errorf("reflection of %s insights: %w", r.ThreadID, err)
	}
	r.UpdatedAt = fromMicros(updated)
	return &r, nil
}

// PutReflections implements agentmem.ReflectionStore.
func (s *Store) PutReflections(ctx context.Context, userID string, rs []*agentmem.Reflection, insights []*agentmem.Memory) error {
	now := s.now()
	if err := agentmem.PrepareReflections(userID, rs, insights, now); err != nil {
		return err
	}
	if len(rs) == 0 && len(insights) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := insertUser(ctx, tx, userID, now); err != nil {
			return err
		}
		for _, r := range rs {
			if _, err := findLiveThread(ctx, tx, userID, r.ThreadID); err != nil {
				return err
			}
		}
		for _, m := range insights {
			if err := insertMemory(ctx, tx, m); err != nil {
				return err
			}
		}
		for _, r := range rs {
			topics, _ := json.Marshal(r.Topics)
			ids, _ := json.Marshal(r.Insights)
			if _, err := tx.ExecContext(ctx, `INSERT INTO reflections (`+reflectionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (user_id, thread_id) DO UPDATE SET status = excluded.status, through_seq = excluded.through_seq,
					topics = excluded.topics, insights = excluded.insights, reason = excluded.reason, updated_at = excluded.updated_at`,
				userID, r.ThreadID, r.Status, r.ThroughSeq, string(topics), string(ids), r.Reason, micros(now)); err != nil {
				return fmt.Errorf("put reflection: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range rs {
		r.UpdatedAt = now
	}
	return nil
}

// FindReflection implements agentmem.ReflectionStore.
func (s *Store) FindReflection(ctx context.Context, userID, threadID string) (*agentmem.Reflection, error) {
	var r *agentmem.Reflection
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		if _, err := findLiveThread(ctx, tx, userID, threadID); err != nil {
			return err
		}
		r, err = scanReflection(tx.QueryRowContext(ctx, `SELECT `+reflectionColumns+` FROM reflections WHERE user_id = ? AND thread_id = ?`, userID, threadID))
		if errors.Is(err, sql.ErrNoRows) {
			return agentmem.Errorf(agentmem.ENOTFOUND, "Thread %q has no reflection.", threadID)
		} else if err != nil {
			return fmt.Errorf("find reflection: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// FindReflections implements agentmem.ReflectionStore.
//
//	SELECT … FROM reflections WHERE user_id = ? AND status = ? AND (the thread is not soft-deleted)
//	ORDER BY updated_at, thread_id LIMIT n
//
// walks reflections_status, looking up each row's thread.
func (s *Store) FindReflections(ctx context.Context, userID, status string, limit int) ([]*agentmem.Reflection, error) {
	limit, err := agentmem.PageSize(limit)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateReflectionStatus(status); err != nil {
		return nil, err
	}
	out := []*agentmem.Reflection{}
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+reflectionColumns+` FROM reflections r WHERE user_id = ? AND status = ?
			AND EXISTS (SELECT 1 FROM threads t WHERE t.user_id = r.user_id AND t.id = r.thread_id AND t.deleted_at IS NULL)
			ORDER BY updated_at, thread_id LIMIT ?`, userID, status, limit)
		if err != nil {
			return fmt.Errorf("find reflections: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanReflection(rows)
			if err != nil {
				return fmt.Errorf("scan reflection: %w", err)
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

const profileColumns = `user_id, version, text, method, model, sources, created_at`

func scanProfile(row interface{ Scan(...any) error }) (*agentmem.Profile, error) {
	var (
		p       agentmem.Profile
		sources string
		created int64
	)
	if err := row.Scan(&p.UserID, &p.Version, &p.Text, &p.Method, &p.Model, &sources, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(sources), &p.Sources); err != nil {
		return nil, fmt.Errorf("profile %d sources: %w", p.Version, err)
	}
	p.CreatedAt = fromMicros(created)
	return &p, nil
}

// PutProfile implements agentmem.ProfileStore. The write loop runs one
// write at a time, so the newest version cannot change between its check
// and the insert. A memory keeps the time it was first marked
// processed; unknown IDs among processed are left alone.
func (s *Store) PutProfile(ctx context.Context, p *agentmem.Profile, after int, processed []string) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if err := agentmem.ValidateProfileAfter(after); err != nil {
		return err
	}
	if processed == nil {
		processed = []string{}
	}
	sources, _ := json.Marshal(p.Sources)
	ids, _ := json.Marshal(processed)
	now := s.now()
	var version int
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := insertUser(ctx, tx, p.UserID, now); err != nil {
			return err
		}
		var newest int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM profiles WHERE user_id = ?`, p.UserID).Scan(&newest); err != nil {
			return fmt.Errorf("find profile version: %w", err)
		}
		if after != -1 && after != newest {
			return agentmem.Errorf(agentmem.ECONFLICT, "The profile's newest version is %d, not %d.", newest, after)
		}
		version = newest + 1
		if _, err := tx.ExecContext(ctx, `INSERT INTO profiles (`+profileColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			p.UserID, version, p.Text, p.Method, p.Model, string(sources), micros(now)); err != nil {
			return fmt.Errorf("insert profile: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET processed_at = ? WHERE user_id = ? AND processed_at IS NULL
			AND id IN (SELECT value FROM json_each(?))`, micros(now), p.UserID, string(ids)); err != nil {
			return fmt.Errorf("mark memories processed: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.Version, p.CreatedAt = version, now
	return nil
}

// FindProfile implements agentmem.ProfileStore.
func (s *Store) FindProfile(ctx context.Context, userID string) (*agentmem.Profile, error) {
	var p *agentmem.Profile
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		p, err = scanProfile(tx.QueryRowContext(ctx, `SELECT `+profileColumns+` FROM profiles WHERE user_id = ? ORDER BY version DESC LIMIT 1`, userID))
		if errors.Is(err, sql.ErrNoRows) {
			return agentmem.Errorf(agentmem.ENOTFOUND, "The user has no profile yet.")
		} else if err != nil {
			return fmt.Errorf("find profile: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// FindProfiles implements agentmem.ProfileStore.
//
//	SELECT … FROM profiles WHERE user_id = ? [AND version < cursor] ORDER BY version DESC LIMIT n+1
//
// walks the primary key from the cursor. Versions number a user's
// profiles as seqs number a thread's messages, so the cursor is a
// SeqCursor.
func (s *Store) FindProfiles(ctx context.Context, userID string, limit int, cursor string) ([]*agentmem.Profile, string, error) {
	limit, err := agentmem.PageSize(limit)
	if err != nil {
		return nil, "", err
	}
	before := int64(math.MaxInt64)
	if cursor != "" {
		var c agentmem.SeqCursor
		if err := agentmem.DecodeCursor(cursor, agentmem.ListOf(agentmem.ListProfiles, userID), &c); err != nil {
			return nil, "", err
		}
		before = c.Seq
	}
	var ps []*agentmem.Profile
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+profileColumns+` FROM profiles WHERE user_id = ? AND version < ? ORDER BY version DESC LIMIT ?`,
			userID, before, limit+1)
		if err != nil {
			return fmt.Errorf("find profiles: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			p, err := scanProfile(rows)
			if err != nil {
				return fmt.Errorf("scan profile: %w", err)
			}
			ps = append(ps, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	ps, next := agentmem.CutPage(ps, limit, agentmem.ListOf(agentmem.ListProfiles, userID), func(last *agentmem.Profile) any { return agentmem.SeqCursor{Seq: int64(last.Version)} })
	return ps, next, nil
}
