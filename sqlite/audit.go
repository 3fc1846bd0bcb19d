package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem"
)

const auditColumns = `id, at, actor, action, tenant_id, user_id, target, detail`

func scanAuditEvent(row interface{ Scan(...any) error }) (*agentmem.AuditEvent, error) {
	var (
		e      agentmem.AuditEvent
		at     int64
		detail string
	)
	if err := row.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.TenantID, &e.UserID, &e.Target, &detail); err != nil {
		return nil, err
	}
	e.At, e.Detail = fromMicros(at), json.RawMessage(detail)
	return &e, nil
}

// CreateAuditEvent implements agentmem.AuditStore.
func (s *Store) CreateAuditEvent(ctx context.Context, e *agentmem.AuditEvent) error {
	if err := e.Prepare(s.now()); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, micros(e.At), e.Actor, e.Action, e.TenantID, e.UserID, e.Target, string(e.Detail))
		if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
			return agentmem.Errorf(agentmem.ECONFLICT, "Audit event %q already exists.", e.ID)
		} else if err != nil {
			return fmt.Errorf("insert audit event: %w", err)
		}
		return nil
	})
}

// FindAuditEvents implements agentmem.AuditStore.
//
//	SELECT … FROM audit_log WHERE true [AND action = ?] [AND tenant_id = ?] [AND user_id = ?]
//	  [AND at >= since] [AND (at, id) < (cursor)]
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
	where, args := []string{"true"}, []any{}
	if f.Action != nil {
		where, args = append(where, "action = ?"), append(args, *f.Action)
	}
	if f.TenantID != nil {
		where, args = append(where, "tenant_id = ?"), append(args, *f.TenantID)
	}
	if f.UserID != nil {
		where, args = append(where, "user_id = ?"), append(args, *f.UserID)
	}
	if f.Since != nil {
		where, args = append(where, "at >= ?"), append(args, micros(agentmem.Timestamp(*f.Since)))
	}
	if f.Cursor != "" {
		var c agentmem.TimeIDCursor
		if err := agentmem.DecodeCursor(f.Cursor, agentmem.ListOf(agentmem.ListAudit), &c); err != nil {
			return nil, "", err
		}
		where, args = append(where, "(at, id) < (?, ?)"), append(args, c.Time, c.ID)
	}
	var events []*agentmem.AuditEvent
	err = s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log WHERE `+strings.Join(where, " AND ")+
			` ORDER BY at DESC, id DESC LIMIT ?`, append(args, limit+1)...)
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
	events, next := agentmem.CutPage(events, limit, agentmem.ListOf(agentmem.ListAudit), func(last *agentmem.AuditEvent) any { return agentmem.TimeIDCursor{Time: micros(last.At), ID: last.ID} })
	return events, next, nil
}
