package client

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmem/agentmem"
)

// The AdminService over REST, and the user as a whole: export and
// erasure.

// ExportUser implements agentmem.UserService: it writes everything
// stored for the user to w, as the server streams it: one JSON object in
// the shape of agentmem.UserExport (or Markdown with opt.Format). The
// export is not held in memory. A server that fails after it began
// breaks the stream, so that an error here means w holds an incomplete
// export, never one that parses as complete. GET /v1/users/{user}/export.
func (c *Client) ExportUser(ctx context.Context, userID string, opt agentmem.ExportOptions, w io.Writer) error {
	q := url.Values{}
	setNonZero(q, "format", opt.Format)
	if opt.IncludeDeleted {
		q.Set("include_deleted", "true")
	}
	return c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "export"}, query: q, stream: w})
}

// ImportUser implements agentmem.UserService: POST
// /v1/users/{user}/import?on_conflict=….
func (c *Client) ImportUser(ctx context.Context, userID string, x *agentmem.UserExport, opt agentmem.ImportOptions) (*agentmem.ImportResult, error) {
	q := url.Values{}
	setNonZero(q, "on_conflict", opt.OnConflict)
	var out agentmem.ImportResult
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "import"}, query: q, in: x, out: &out})
}

// EraseUser implements agentmem.AdminService: DELETE /v1/users/{user}.
func (c *Client) EraseUser(ctx context.Context, userID string) (agentmem.Counts, error) {
	var out struct {
		Deleted agentmem.Counts `json:"deleted"`
	}
	err := c.do(ctx, call{method: http.MethodDelete, path: []string{"v1", "users", userID}, out: &out})
	return out.Deleted, err
}

// Cleanup implements agentmem.AdminService: POST /v1/cleanup.
func (c *Client) Cleanup(ctx context.Context, cutoff time.Time, dryRun bool) (*agentmem.CleanupResult, error) {
	in := struct {
		Before time.Time `json:"before"`
		DryRun bool      `json:"dry_run"`
	}{cutoff, dryRun}
	var out agentmem.CleanupResult
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "cleanup"}, in: in, out: &out})
}

// CreateKey implements agentmem.AdminService: POST /v1/keys.
func (c *Client) CreateKey(ctx context.Context, in agentmem.KeyInput) (*agentmem.NewKey, error) {
	var out agentmem.NewKey
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "keys"}, in: in, out: &out})
}

// FindKeys implements agentmem.AdminService: GET /v1/keys with
// tenant_id, limit and cursor.
func (c *Client) FindKeys(ctx context.Context, f agentmem.KeyFilter) ([]*agentmem.APIKey, string, error) {
	q := url.Values{}
	setPtr(q, "tenant_id", f.TenantID)
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.APIKey](ctx, c, []string{"v1", "keys"}, q)
}

// AllKeys iterates over the keys that f selects.
func (c *Client) AllKeys(ctx context.Context, f agentmem.KeyFilter) iter.Seq2[*agentmem.APIKey, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.APIKey, string, error) {
		f.Cursor = cursor
		return c.FindKeys(ctx, f)
	})
}

// RevokeKey implements agentmem.AdminService: DELETE /v1/keys/{key}.
func (c *Client) RevokeKey(ctx context.Context, id string) (*agentmem.APIKey, error) {
	var out agentmem.APIKey
	return &out, c.do(ctx, call{method: http.MethodDelete, path: []string{"v1", "keys", id}, out: &out})
}

// FindAuditEvents implements agentmem.AdminService: GET /v1/audit with
// action, tenant_id, user_id, since, limit and cursor.
func (c *Client) FindAuditEvents(ctx context.Context, f agentmem.AuditFilter) ([]*agentmem.AuditEvent, string, error) {
	q := url.Values{}
	setPtr(q, "action", f.Action)
	setPtr(q, "tenant_id", f.TenantID)
	setPtr(q, "user_id", f.UserID)
	if f.Since != nil {
		q.Set("since", f.Since.Format(time.RFC3339Nano))
	}
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.AuditEvent](ctx, c, []string{"v1", "audit"}, q)
}

// AllAuditEvents iterates over the audit events that f selects.
func (c *Client) AllAuditEvents(ctx context.Context, f agentmem.AuditFilter) iter.Seq2[*agentmem.AuditEvent, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.AuditEvent, string, error) {
		f.Cursor = cursor
		return c.FindAuditEvents(ctx, f)
	})
}

// FindJobs implements agentmem.AdminService: GET /v1/jobs with status,
// kind, user_id, limit and cursor.
func (c *Client) FindJobs(ctx context.Context, f agentmem.JobFilter) ([]*agentmem.Job, string, error) {
	q := url.Values{}
	setPtr(q, "status", f.Status)
	setPtr(q, "kind", f.Kind)
	setPtr(q, "user_id", f.UserID)
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Job](ctx, c, []string{"v1", "jobs"}, q)
}

// AllJobs iterates over the jobs that f selects.
func (c *Client) AllJobs(ctx context.Context, f agentmem.JobFilter) iter.Seq2[*agentmem.Job, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Job, string, error) {
		f.Cursor = cursor
		return c.FindJobs(ctx, f)
	})
}

// FindUserJobs implements agentmem.UserService: GET
// /v1/users/{user}/jobs with status, kind, limit and cursor (f.UserID is
// not sent: the jobs are the user's of the path).
func (c *Client) FindUserJobs(ctx context.Context, userID string, f agentmem.JobFilter) ([]*agentmem.Job, string, error) {
	q := url.Values{}
	setPtr(q, "status", f.Status)
	setPtr(q, "kind", f.Kind)
	setPage(q, f.Limit, f.Cursor)
	return list[*agentmem.Job](ctx, c, []string{"v1", "users", userID, "jobs"}, q)
}

// AllUserJobs iterates over the user's jobs that f selects.
func (c *Client) AllUserJobs(ctx context.Context, userID string, f agentmem.JobFilter) iter.Seq2[*agentmem.Job, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.Job, string, error) {
		f.Cursor = cursor
		return c.FindUserJobs(ctx, userID, f)
	})
}

// RetryJob implements agentmem.UserService: POST
// /v1/users/{user}/jobs/{job}/retry. It is not retried: a retry whose
// first attempt succeeded would answer ECONFLICT (the job is no longer
// dead).
func (c *Client) RetryJob(ctx context.Context, userID, id string) (*agentmem.Job, error) {
	var out agentmem.Job
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "jobs", id, "retry"}, out: &out})
}

// WhoAmI implements agentmem.UserService: GET /v1/me, the identity the
// server takes the client's key (or, without one, the request) for.
func (c *Client) WhoAmI(ctx context.Context) (*agentmem.Caller, error) {
	var out agentmem.Caller
	return &out, c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "me"}, out: &out})
}

// FindUsers implements agentmem.AdminService: GET /v1/users with limit,
// cursor and user_id.
func (c *Client) FindUsers(ctx context.Context, f agentmem.UserFilter) ([]*agentmem.UserSummary, string, error) {
	q := url.Values{}
	setPage(q, f.Limit, f.Cursor)
	if f.UserID != nil {
		q.Set("user_id", *f.UserID)
	}
	return list[*agentmem.UserSummary](ctx, c, []string{"v1", "users"}, q)
}

// AllUsers iterates over every user, from f.Cursor on.
func (c *Client) AllUsers(ctx context.Context, f agentmem.UserFilter) iter.Seq2[*agentmem.UserSummary, error] {
	return all(f.Cursor, func(cursor string) ([]*agentmem.UserSummary, string, error) {
		f.Cursor = cursor
		return c.FindUsers(ctx, f)
	})
}

// Stats implements agentmem.AdminService: GET /v1/stats.
func (c *Client) Stats(ctx context.Context) (*agentmem.Stats, error) {
	var out agentmem.Stats
	return &out, c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "stats"}, out: &out})
}
