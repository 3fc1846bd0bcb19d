package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

var (
	_ agentmem.ReflectionStore = (*Store)(nil)
	_ agentmem.ProfileStore    = (*Store)(nil)
)

const reflectionColumns = `user_id, thread_id, status, through_seq, topics, insights, reason, updated_at`

func scanReflection(row interface{ Scan(...any) error }) (*agentmem.Reflection, error) {
	var r agentmem.Reflection
	if err := row.Scan(&r.UserID, &r.ThreadID, &r.Status, &r.ThroughSeq, &r.Topics, &r.Insights, &r.Reason, &r.UpdatedAt); err != nil {
		return nil, err
	}
	r.UpdatedAt = r.UpdatedAt.UTC()
	return &r, nil
}

// PutReflections implements agentmem.ReflectionStore. It takes its locks
// in DeleteUser's order: the users row (insertUser), then the threads,
// FOR SHARE and in ID order, so that none is deleted before the put
// commits.
func (s *Store) PutReflections(ctx context.Context, userID string, rs []*agentmem.Reflection, insights []*agentmem.Memory) error {
	now := s.now()
	if err := agentmem.PrepareReflections(userID, rs, insights, now); err != nil {
		return err
	}
	if len(rs) == 0 && len(insights) == 0 {
		return nil
	}
	threads := make([]string, len(rs))
	for i, r := range rs {
		threads[i] = r.ThreadID
	}
	slices.Sort(threads)
	threads = slices.Compact(threads)
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := insertUser(ctx, tx, userID, now); err != nil {
			return err
		}
		for _, id := range threads {
			if _, err := findLiveThread(ctx, tx, userID, id, forShare); err != nil {
				return err
			}
		}
		for _, m := range insights {
			if err := insertMemory(ctx, tx, m); err != nil {
				return err
			}
		}
		for _, r := range rs {
			if _, err := tx.Exec(ctx, `INSERT INTO reflections (`+reflectionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
				ON CONFLICT (user_id, thread_id) DO UPDATE SET status = excluded.status, through_seq = excluded.through_seq,
					topics = excluded.topics, insights = excluded.insights, reason = excluded.reason, updated_at = excluded.updated_at`,
				userID, r.ThreadID, r.Status, r.ThroughSeq, r.Topics, r.Insights, r.Reason, now); err != nil {
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
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		if _, err := findLiveThread(ctx, tx, userID, threadID, noLock); err != nil {
			return err
		}
		r, err = scanReflection(tx.QueryRow(ctx, `SELECT `+reflectionColumns+` FROM reflections WHERE user_id = $1 AND thread_id = $2`, userID, threadID))
		if errors.Is(err, pgx.ErrNoRows) {
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
//	SELECT … FROM reflections WHERE user_id = $1 AND status = $2 AND (the thread is not soft-deleted)
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
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+reflectionColumns+` FROM reflections r WHERE user_id = $1 AND status = $2
			AND EXISTS (SELECT 1 FROM threads t WHERE t.user_id = r.user_id AND t.id = r.thread_id AND t.deleted_at IS NULL)
			ORDER BY updated_at, thread_id LIMIT $3`, userID, status, limit)
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
	var p agentmem.Profile
	if err := row.Scan(&p.UserID, &p.Version, &p.Text, &p.Method, &p.Model, &p.Sources, &p.CreatedAt); err != nil {
		return nil, err
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return &p, nil
}

// PutProfile implements agentmem.ProfileStore. It locks the users row
// first (insertUser): puts of one user's profile take turns, each reading
// the newest version after the previous one committed, so that of two
// building on the same version the second finds it taken (ECONFLICT).
// The primary key (user_id, version) backs the lock: a second insert of
// a version fails, with the same error. An insight keeps the time it was
// first marked processed; facts and unknown IDs among processed are left
// alone.
func (s *Store) PutProfile(ctx context.Context, p *agentmem.Profile, after int, processed []string) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if err := agentmem.ValidateProfileAfter(after); err != nil {
		return err
	}
	now := s.now()
	var version int
	// It locks the user's row, then the memories it marks (in no set
	// order): a write of memories taking two of them the other way round
	// can make one of the two a deadlock's victim, run again.
	err := s.writeRetrying(ctx, func(tx pgx.Tx) error {
		if err := insertUser(ctx, tx, p.UserID, now); err != nil {
			return err
		}
		var newest int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM profiles WHERE user_id = $1`, p.UserID).Scan(&newest); err != nil {
			return fmt.Errorf("find profile version: %w", err)
		}
		if after != -1 && after != newest {
			return agentmem.Errorf(agentmem.ECONFLICT, "The profile's newest version is %d, not %d.", newest, after)
		}
		version = newest + 1
		_, err := tx.Exec(ctx, `INSERT INTO profiles (`+profileColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			p.UserID, version, p.Text, p.Method, p.Model, p.Sources, now)
		if isUniqueViolation(err) {
			return agentmem.Errorf(agentmem.ECONFLICT, "The profile's version %d was stored meanwhile, not by this put.", version)
		} else if err != nil {
			return fmt.Errorf("insert profile: %w", err)
		}
		if len(processed) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE memories SET processed_at = $1 WHERE user_id = $2 AND id = ANY($3) AND processed_at IS NULL`,
				now, p.UserID, processed); err != nil {
				return fmt.Errorf("mark memories processed: %w", err)
			}
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
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		p, err = scanProfile(tx.QueryRow(ctx, `SELECT `+profileColumns+` FROM profiles WHERE user_id = $1 ORDER BY version DESC LIMIT 1`, userID))
		if errors.Is(err, pgx.ErrNoRows) {
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
//	SELECT … FROM profiles WHERE user_id = $1 AND version < $2 (cursor) ORDER BY version DESC LIMIT n+1
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
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+profileColumns+` FROM profiles WHERE user_id = $1 AND version < $2::bigint ORDER BY version DESC LIMIT $3`,
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
