package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem"
)

const keyColumns = `id, hash, kind, tenant_id, user_id, name, created_at, expires_at, revoked_at, created_by`

func scanKey(row interface{ Scan(...any) error }) (*agentmem.APIKey, error) {
	var (
		k                agentmem.APIKey
		created          int64
		expires, revoked sql.NullInt64
	)
	if err := row.Scan(&k.ID, &k.Hash, &k.Scope.Kind, &k.Scope.TenantID, &k.Scope.UserID, &k.Name,
		&created, &expires, &revoked, &k.CreatedBy); err != nil {
		return nil, err
	}
	k.CreatedAt, k.ExpiresAt, k.RevokedAt = fromMicros(created), fromNullMicros(expires), fromNullMicros(revoked)
	return &k, nil
}

// errKeyNotFound names no ID: the ID comes from a presented token, and the
// answer must not help anyone probe which keys exist.
func errKeyNotFound() error { return agentmem.Errorf(agentmem.ENOTFOUND, "API key not found.") }

// CreateKey implements agentmem.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k *agentmem.APIKey) error {
	if err := k.Prepare(s.now()); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.Hash, k.Scope.Kind, k.Scope.TenantID, k.Scope.UserID, k.Name,
			micros(k.CreatedAt), nullMicros(k.ExpiresAt), nullMicros(k.RevokedAt), k.CreatedBy)
		if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
			return agentmem.Errorf(agentmem.ECONFLICT, "API key %q already exists.", k.ID)
		} else if err != nil {
			return fmt.Errorf("insert key: %w", err)
		}
		return nil
	})
}

func findKey(ctx context.Context, tx *sql.Tx, id string) (*agentmem.APIKey, error) {
	k, err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errKeyNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("find key: %w", err)
	}
	return k, nil
}

// FindKeyByID implements agentmem.KeyStore.
func (s *Store) FindKeyByID(ctx context.Context, id string) (*agentmem.APIKey, error) {
	var k *agentmem.APIKey
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		k, err = findKey(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// FindKeys implements agentmem.KeyStore.
//
//	SELECT … FROM api_keys WHERE true [AND tenant_id = ?] [AND (created_at, id) < (cursor)]
//	ORDER BY created_at DESC, id DESC LIMIT n+1
//
// walks the ([tenant_id,] created_at DESC, id DESC) index from the cursor.
func (s *Store) FindKeys(ctx context.Context, f agentmem.KeyFilter) ([]*agentmem.APIKey, string, error) {
	limit, err := agentmem.PageSize(f.Limit)
	if err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	where, args := []string{"true"}, []any{}
	if f.TenantID != nil {
		where, args = append(where, "tenant_id = ?"), append(args, *f.TenantID)
	}
	if f.Cursor != "" {
		var c agentmem.TimeIDCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListKeys), &c); err != nil {
			return nil, "", err
		}
		where, args = append(where, "(created_at, id) < (?, ?)"), append(args, c.Time, c.ID)
	}
	var keys []*agentmem.APIKey
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE `+strings.Join(where, " AND ")+
			` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, limit+1)...)
		if err != nil {
			return fmt.Errorf("find keys: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			k, err := scanKey(rows)
			if err != nil {
				return fmt.Errorf("scan key: %w", err)
			}
			keys = append(keys, k)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	keys, next := agentmem.CutPage(keys, limit, agentmem.ListOf(agentmem.ListKeys), func(last *agentmem.APIKey) any {
		return agentmem.TimeIDCursor{Time: micros(last.CreatedAt), ID: last.ID}
	})
	return keys, next, nil
}

// RevokeKey implements agentmem.KeyStore.
func (s *Store) RevokeKey(ctx context.Context, id string) (*agentmem.APIKey, error) {
	now := s.now()
	var k *agentmem.APIKey
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, micros(now), id); err != nil {
			return fmt.Errorf("revoke key: %w", err)
		}
		k, err = findKey(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}
