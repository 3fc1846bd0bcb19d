// Package client is a Go client for agentmem's REST API (package httpapi),
// used by the command line and the end-to-end tests. API errors come back
// as *agentmem.Error, so callers branch on agentmem.ErrorCode(err) as they
// would with a Store.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem"
)

// Client calls one agentmem server. It is safe for concurrent use.
type Client struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8080.
	BaseURL string
	// HTTPClient sends the requests.
	HTTPClient *http.Client
}

// New returns a client of the server at baseURL; a nil httpClient means
// http.DefaultClient.
func New(baseURL string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTPClient: httpClient}
}

// ListThreadsOptions select a page of threads.
type ListThreadsOptions struct {
	AgentID *string // only threads of this agent; "" means threads without an agent
	Status  string  // only threads with this status (active or ended); "" means any
	Limit   int     // page size; 0 means the server's default
	Cursor  string  // the next cursor of the previous page
}

// CreateThread creates a thread of the user from t's ID (empty: assigned),
// AgentID, Title, Metadata and Tags, and returns the stored thread.
func (c *Client) CreateThread(ctx context.Context, userID string, t *agentmem.Thread) (*agentmem.Thread, error) {
	req := struct {
		ID       string          `json:"id,omitempty"`
		AgentID  string          `json:"agent_id,omitempty"`
		Title    string          `json:"title,omitempty"`
		Metadata json.RawMessage `json:"metadata,omitempty"`
		Tags     []string        `json:"tags,omitempty"`
	}{t.ID, t.AgentID, t.Title, t.Metadata, t.Tags}
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "threads"}, in: req, out: &out})
}

// GetThread returns a thread of the user.
func (c *Client) GetThread(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "threads", threadID}, out: &out})
}

// ListThreads returns a page of the user's threads, newest updated first,
// and the cursor of the next page ("" on the last).
func (c *Client) ListThreads(ctx context.Context, userID string, opt ListThreadsOptions) ([]*agentmem.Thread, string, error) {
	q := url.Values{}
	if opt.AgentID != nil {
		q.Set("agent_id", *opt.AgentID)
	}
	setNonZero(q, "status", opt.Status)
	setNonZero(q, "limit", itoa(int64(opt.Limit)))
	setNonZero(q, "cursor", opt.Cursor)
	var out page[*agentmem.Thread]
	err := c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "threads"}, query: q, out: &out})
	return out.Data, out.NextCursor, err
}

// UpdateThread applies upd to a thread and returns it.
func (c *Client) UpdateThread(ctx context.Context, userID, threadID string, upd agentmem.ThreadUpdate) (*agentmem.Thread, error) {
	// Unset fields must be absent, not null: the same to the server, but
	// omitting them keeps the request minimal.
	req := struct {
		Title    *string          `json:"title,omitempty"`
		Metadata *json.RawMessage `json:"metadata,omitempty"`
		Tags     *[]string        `json:"tags,omitempty"`
		AgentID  *string          `json:"agent_id,omitempty"`
		Status   *string          `json:"status,omitempty"`
	}{upd.Title, upd.Metadata, upd.Tags, upd.AgentID, upd.Status}
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPatch, path: []string{"v1", "users", userID, "threads", threadID}, in: req, out: &out})
}

// DeleteThread soft-deletes a thread, or removes it for good when
// permanent.
func (c *Client) DeleteThread(ctx context.Context, userID, threadID string, permanent bool) error {
	q := url.Values{}
	if permanent {
		q.Set("permanent", "true")
	}
	return c.do(ctx, call{method: http.MethodDelete, path: []string{"v1", "users", userID, "threads", threadID}, query: q})
}

// EndThread marks a thread ended and returns it.
func (c *Client) EndThread(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "threads", threadID, "end"}, out: &out})
}

// AppendMessages appends a batch to a thread atomically and returns the
// stored messages. A non-empty idempotencyKey makes a retry of the same
// batch return the original messages instead of storing them twice.
func (c *Client) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, idempotencyKey string) ([]*agentmem.Message, error) {
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	in := struct {
		Messages []*agentmem.Message `json:"messages"`
	}{msgs}
	var out struct {
		Messages []*agentmem.Message `json:"messages"`
	}
	err := c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "threads", threadID, "messages"}, header: h, in: in, out: &out})
	return out.Messages, err
}

// ListMessages returns a page of a thread's messages in seq order (newest
// first with f.Desc) and the cursor of the next page.
func (c *Client) ListMessages(ctx context.Context, userID, threadID string, f agentmem.MessageFilter) ([]*agentmem.Message, string, error) {
	q := url.Values{}
	setNonZero(q, "after_seq", itoa(f.AfterSeq))
	setNonZero(q, "before_seq", itoa(f.BeforeSeq))
	setNonZero(q, "limit", itoa(int64(f.Limit)))
	setNonZero(q, "cursor", f.Cursor)
	if f.Desc {
		q.Set("order", "desc")
	}
	var out page[*agentmem.Message]
	err := c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "threads", threadID, "messages"}, query: q, out: &out})
	return out.Data, out.NextCursor, err
}

// CreateElement attaches e to a thread and returns the stored element.
func (c *Client) CreateElement(ctx context.Context, userID, threadID string, e *agentmem.Element) (*agentmem.Element, error) {
	var out agentmem.Element
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "threads", threadID, "elements"}, in: e, out: &out})
}

// ListElements returns a page of a thread's elements in creation order and
// the cursor of the next page.
func (c *Client) ListElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) ([]*agentmem.Element, string, error) {
	q := url.Values{}
	if f.MessageID != nil {
		setNonZero(q, "message_id", *f.MessageID)
	}
	setNonZero(q, "limit", itoa(int64(f.Limit)))
	setNonZero(q, "cursor", f.Cursor)
	var out page[*agentmem.Element]
	err := c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "threads", threadID, "elements"}, query: q, out: &out})
	return out.Data, out.NextCursor, err
}

// GetSession returns the active session of the user and agent; ENOTFOUND
// when there is none, unless create, which then starts one on a new thread
// of the agent.
func (c *Client) GetSession(ctx context.Context, userID, agentID string, create bool) (*agentmem.Session, error) {
	q := url.Values{}
	if create {
		q.Set("create", "true")
	}
	var out agentmem.Session
	return &out, c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "agents", agentID, "session"}, query: q, out: &out})
}

// SetSession makes threadID the active thread of the user and agent.
func (c *Client) SetSession(ctx context.Context, userID, agentID, threadID string) (*agentmem.Session, error) {
	in := struct {
		ThreadID string `json:"thread_id"`
	}{threadID}
	var out agentmem.Session
	return &out, c.do(ctx, call{method: http.MethodPut, path: []string{"v1", "users", userID, "agents", agentID, "session"}, in: in, out: &out})
}

// ExportThread returns a thread with its messages and elements, in the
// format ImportThread takes.
func (c *Client) ExportThread(ctx context.Context, userID, threadID string) (*agentmem.ThreadExport, error) {
	var out agentmem.ThreadExport
	return &out, c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "threads", threadID, "export"}, out: &out})
}

// ExportThreadMarkdown returns a thread rendered as Markdown.
func (c *Client) ExportThreadMarkdown(ctx context.Context, userID, threadID string) (string, error) {
	var out string
	err := c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "threads", threadID, "export"},
		query: url.Values{"format": {"markdown"}}, out: &out})
	return out, err
}

// ImportThread stores an export as a new thread of the user and returns
// the thread.
func (c *Client) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (*agentmem.Thread, error) {
	var out agentmem.Thread
	return &out, c.do(ctx, call{method: http.MethodPost, path: []string{"v1", "users", userID, "threads", "import"}, in: x, out: &out})
}

// ExportUser returns everything stored for the user. The whole export is
// held in memory.
func (c *Client) ExportUser(ctx context.Context, userID string) (*agentmem.UserExport, error) {
	var out agentmem.UserExport
	return &out, c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "users", userID, "export"}, out: &out})
}

// DeleteUser erases everything stored for the user and returns what was
// removed.
func (c *Client) DeleteUser(ctx context.Context, userID string) (agentmem.Counts, error) {
	var out struct {
		Deleted agentmem.Counts `json:"deleted"`
	}
	err := c.do(ctx, call{method: http.MethodDelete, path: []string{"v1", "users", userID}, out: &out})
	return out.Deleted, err
}

// Stats returns the store's counts and size.
func (c *Client) Stats(ctx context.Context) (*agentmem.Stats, error) {
	var out agentmem.Stats
	return &out, c.do(ctx, call{method: http.MethodGet, path: []string{"v1", "stats"}, out: &out})
}

// Health returns nil when the server answers /healthz.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, call{method: http.MethodGet, path: []string{"healthz"}})
}

// Ready returns nil when the server and its store answer /readyz.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, call{method: http.MethodGet, path: []string{"readyz"}})
}

// page is the shape of every list response.
type page[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
}

// call is one request.
type call struct {
	method string
	path   []string // segments from the server's root, escaped by do
	query  url.Values
	header http.Header
	in     any // JSON-encoded as the body when non-nil
	out    any // the 2xx body is decoded into it when non-nil; a *string takes the raw body
}

// do sends cl and decodes its answer. A non-2xx answer becomes an
// *agentmem.Error; transport failures are wrapped with the request line.
func (c *Client) do(ctx context.Context, cl call) error {
	p, err := escapePath(cl.path)
	if err != nil {
		return err
	}
	u := c.BaseURL + p
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.in != nil {
		b, err := json.Marshal(cl.in)
		if err != nil {
			return fmt.Errorf("%s %s: encode request: %w", cl.method, p, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", cl.method, p, err)
	}
	for k, v := range cl.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", cl.method, p, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp)
	}
	switch out := cl.out.(type) {
	case nil:
		_, _ = io.Copy(io.Discard, resp.Body) // lets the connection be reused
		return nil
	case *string:
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("%s %s: read response: %w", cl.method, p, err)
		}
		*out = string(b)
		return nil
	default:
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("%s %s: decode response: %w", cl.method, p, err)
		}
		return nil
	}
}

// decodeError reads an error response: the API's {"error":{code,message}}
// or, from something else on the way (a proxy), a code guessed from the
// status.
func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil && body.Error.Code != "" {
		return &agentmem.Error{Code: body.Error.Code, Message: body.Error.Message}
	}
	return &agentmem.Error{Code: codeOf(resp.StatusCode), Message: fmt.Sprintf("The server answered %s.", resp.Status)}
}

// codeOf is the agentmem error code of an HTTP status, the inverse of
// httpapi's mapping.
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed:
		return agentmem.EINVALID
	case http.StatusUnauthorized, http.StatusForbidden:
		return agentmem.EUNAUTHORIZED
	case http.StatusNotFound:
		return agentmem.ENOTFOUND
	case http.StatusConflict:
		return agentmem.ECONFLICT
	case http.StatusRequestEntityTooLarge:
		return agentmem.ETOOLARGE
	case http.StatusUnprocessableEntity:
		return agentmem.EUNPROCESSABLE
	case http.StatusTooManyRequests:
		return agentmem.ERATELIMIT
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return agentmem.EUNAVAILABLE
	}
	return agentmem.EINTERNAL
}

// escapePath joins segments, each escaped, into a path from the root. An
// empty segment (an empty ID) is refused, and "." and ".." are escaped
// (url.PathEscape leaves dots): either way the server would see a path to
// clean, which it refuses rather than redirect to another route.
func escapePath(segments []string) (string, error) {
	var b strings.Builder
	for _, s := range segments {
		if s == "" {
			return "", agentmem.Errorf(agentmem.EINVALID, "An ID in the request path is empty.")
		}
		b.WriteByte('/')
		if s == "." || s == ".." {
			b.WriteString(strings.ReplaceAll(s, ".", "%2E"))
		} else {
			b.WriteString(url.PathEscape(s))
		}
	}
	return b.String(), nil
}

func setNonZero(q url.Values, key, value string) {
	if value != "" && value != "0" {
		q.Set(key, value)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
