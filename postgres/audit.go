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

const auditColumns = `id, at, actor, action, tenant_id, user_id, target, detail`

func scanAuditEvent(row interface{ Scan(...any) error }) (*agentmem.AuditEvent, error) {
	var (
		e      agentmem.AuditEvent
		detail []byte
	)
	if err := row.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.TenantID, &e.UserID, &e.Target, &detail); err != nil {
		return nil, err
	}
	e.At, e.Detail = e.At.UTC(), jsonValue(detail)
	return &e, nil
}

// CreateAuditEvent implements agentmem.AuditStore.
func (s *Store) CreateAuditEvent(ctx context.Context, e *agentmem.AuditEvent) error {
	if err := e.Prepare(s.now()); err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			e.ID, e.At, e.Actor, e.Action, e.TenantID, e.UserID, e.Target, string(e.Detail))
		if isUniqueViolation(err) {
			return agentmem.Errorf(agentmem.ECONFLICT, "Audit event %q already exists.", e.ID)
		} else if err != nil {
			return fmt.Errorf("insert audit event: %w", err)
		}
		return nil
	})
}

// FindAuditEvents implements agentmem.AuditStore.
//
//	SELECT … FROM audit_log WHERE true [AND action = $n] [AND tenant_id = $n] [AND user_id = $n]
//	  [AND at >= $n] [AND (at, id) < ($n, $m)]
//	ORDER BY at DESC, id DESC LIMIT n+1
//
// walks the ([action | tenant_id | user_id,] at DESC, id DESC) index from
// the cursor.
func (s *Store) FindAuditEvents(ctx context.Context, f agentmem.AuditFilter) ([]*agentmem.AuditEvent, string, error) {
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
	if f.Action != nil {
		where = append(where, "action = "+arg(*f.Action))
	}
	if f.TenantID != nil {
		where = append(where, "tenant_id = "+arg(*f.TenantID))
	}
	if f.UserID != nil {
		where = append(where, "user_id = "+arg(*f.UserID))
	}
	if f.Since != nil {
		where = append(where, "at >= "+arg(agentmem.Timestamp(*f.Since)))
	}
	if f.Cursor != "" {
		var c agentmem.TimeIDCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListAudit), &c); err != nil {
			return nil, "", err
		}
		where = append(where, "(at, id) < ("+arg(time.UnixMicro(c.Time).UTC())+", "+arg(c.ID)+")")
	}
	q := `SELECT ` + auditColumns + ` FROM audit_log WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY at DESC, id DESC LIMIT ` + arg(limit+1)
	var events []*agentmem.AuditEvent
	err = s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("find audit events: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanAuditEvent(rows)
			if err != nil {
				return fmt.Errorf("scan audit event: %w", err)
			}
			events = append(events, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	events, next := agentmem.CutPage(events, limit, agentmem.ListOf(agentmem.ListAudit), func(last *agentmem.AuditEvent) any {
		return agentmem.TimeIDCursor{Time: last.At.UnixMicro(), ID: last.ID}
	})
	return events, next, nil
}
