package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

const keyColumns = `id, hash, kind, tenant_id, user_id, name, created_at, expires_at, revoked_at, created_by`

func scanKey(row interface{ Scan(...any) error }) (*agentmem.APIKey, error) {
	var (
		k                agentmem.APIKey
		expires, revoked *time.Time
	)
	if err := row.Scan(&k.ID, &k.Hash, &k.Scope.Kind, &k.Scope.TenantID, &k.Scope.UserID, &k.Name,
		&k.CreatedAt, &expires, &revoked, &k.CreatedBy); err != nil {
		return nil, err
	}
	k.CreatedAt, k.ExpiresAt, k.RevokedAt = k.CreatedAt.UTC(), utc(expires), utc(revoked)
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
	return s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			k.ID, k.Hash, k.Scope.Kind, k.Scope.TenantID, k.Scope.UserID, k.Name, k.CreatedAt, k.ExpiresAt, k.RevokedAt, k.CreatedBy)
		if isUniqueViolation(err) {
			return agentmem.Errorf(agentmem.ECONFLICT, "API key %q already exists.", k.ID)
		} else if err != nil {
			return fmt.Errorf("insert key: %w", err)
		}
		return nil
	})
}

func findKey(ctx context.Context, tx pgx.Tx, id string) (*agentmem.APIKey, error) {
	k, err := scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errKeyNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("find key: %w", err)
	}
	return k, nil
}

// FindKeyByID implements agentmem.KeyStore.
func (s *Store) FindKeyByID(ctx context.Context, id string) (*agentmem.APIKey, error) {
	var k *agentmem.APIKey
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
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
//	SELECT … FROM api_keys WHERE true [AND tenant_id = $n] [AND (created_at, id) < ($n, $m)]
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
	var args []any
	// arg adds a parameter and returns its placeholder.
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"true"}
	if f.TenantID != nil {
		where = append(where, "tenant_id = "+arg(*f.TenantID))
	}
	if f.Cursor != "" {
		var c agentmem.TimeIDCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListKeys), &c); err != nil {
			return nil, "", err
		}
		where = append(where, "(created_at, id) < ("+arg(time.UnixMicro(c.Time).UTC())+", "+arg(c.ID)+")")
	}
	q := `SELECT ` + keyColumns + ` FROM api_keys WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY created_at DESC, id DESC LIMIT ` + arg(limit+1)
	var keys []*agentmem.APIKey
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
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
		return agentmem.TimeIDCursor{Time: last.CreatedAt.UnixMicro(), ID: last.ID}
	})
	return keys, next, nil
}

// RevokeKey implements agentmem.KeyStore. A concurrent revocation of the
// same key waits on the row lock, then finds it revoked and leaves it; the
// SELECT that follows (a new snapshot at READ COMMITTED) sees the first
// revocation's time.
func (s *Store) RevokeKey(ctx context.Context, id string) (*agentmem.APIKey, error) {
	now := s.now()
	var k *agentmem.APIKey
	err := s.write(ctx, func(tx pgx.Tx) (err error) {
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, now, id); err != nil {
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
