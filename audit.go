package agentmem

import (
	"context"
	"encoding/json"
	"time"
)

// Audit actions.
const (
	AuditKeyCreate    = "key.create"
	AuditKeyRevoke    = "key.revoke"
	AuditUserErase    = "user.erase"
	AuditThreadErase  = "thread.erase" // permanent deletion of a thread
	AuditCleanup      = "cleanup"
	AuditThreadImport = "thread.import"
	AuditUserExport   = "user.export"
	AuditJobRetry     = "job.retry" // a dead job queued again
)

// AuditEvent records an administrative action or an erasure: who did it,
// what, to whom, and when. The audit log outlives the data it speaks of: an
// erased user's erasure stays recorded.
type AuditEvent struct {
	ID       string          `json:"id"`
	At       time.Time       `json:"at"`
	Actor    string          `json:"actor"`               // Identity.Actor() of who did it
	Action   string          `json:"action"`              // one of the Audit* constants
	TenantID string          `json:"tenant_id,omitempty"` // the tenant acted on, if any
	UserID   string          `json:"user_id,omitempty"`   // the user acted on (as the caller named it)
	Target   string          `json:"target,omitempty"`    // e.g. a thread or key ID
	Detail   json.RawMessage `json:"detail"`              // what the action reported (counts…)
}

// AuditFilter selects audit events for FindAuditEvents, newest first.
type AuditFilter struct {
	Action   *string
	TenantID *string
	UserID   *string
	Since    *time.Time // only events at or after
	Limit    int
	Cursor   string
}

// Validate checks the filter's text (see validateTextFilters) and time.
func (f *AuditFilter) Validate() error {
	if err := validateTextFilters(textFilter{"action", f.Action}, textFilter{"tenant_id", f.TenantID}, textFilter{"user_id", f.UserID}); err != nil {
		return err
	}
	if f.Since != nil {
		return ValidateTime("since", *f.Since)
	}
	return nil
}

// AuditStore stores the audit log.
type AuditStore interface {
	// CreateAuditEvent appends an event, assigning ID when empty and At
	// when zero; Detail defaults to {}. Returns EINVALID for a malformed ID
	// or a Detail that is not a JSON object, ECONFLICT if the ID is taken.
	CreateAuditEvent(ctx context.Context, e *AuditEvent) error

	// FindAuditEvents returns a page of events, newest first (by At, then
	// ID, descending), and the cursor of the next page ("" on the last
	// page). Returns EINVALID for a malformed cursor or limit.
	FindAuditEvents(ctx context.Context, filter AuditFilter) ([]*AuditEvent, string, error)
}

// when empty; text fields must be valid UTF-8 without NUL.
func (e *AuditEvent) Prepare(now time.Time) error {
	if e.ID != "" {
		if err := ValidateID("id", e.ID); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{{"actor", e.Actor}, {"action", e.Action}, {"tenant_id", e.TenantID}, {"user_id", e.UserID}, {"target", e.Target}} {
		if err := ValidateText(f.name, f.v); err != nil {
			return err
		}
	}
	detail, err := NormalizeMetadata("detail", e.Detail)
	if err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = NewID()
	}
	if e.At.IsZero() {
		e.At = now
	}
	e.At, e.Detail = Timestamp(e.At), detail
	return nil
}
