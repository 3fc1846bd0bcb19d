// Package client is a Go client for agentmem's REST API (package httpapi).
// Client implements agentmem.Service over HTTP, so that a program written
// against the Service runs in process (package core) or against a server
// alike; it also covers the routes that are not use cases (health,
// readiness, metrics, the streamed user export, Markdown exports). API
// errors come back as *agentmem.Error with the server's code and message,
// so callers branch on agentmem.ErrorCode(err) as they would in process.
//
// The server identifies the caller by the APIKey (or, with --auth none,
// takes every caller for the admin): an identity in ctx
// (agentmem.NewContextWithIdentity) is not sent.
package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// Defaults of the retry fields of Client.
const (
	DefaultMaxRetries     = 3
	DefaultRetryBaseDelay = 250 * time.Millisecond
	DefaultRetryMaxDelay  = 10 * time.Second
	DefaultUserAgent      = "agentmem-go-client"
)

var _ agentmem.Service = (*Client)(nil)

// Client calls one agentmem server. Set its fields before the first call;
// it is then safe for concurrent use.
//
// Idempotent calls are retried when the server could not be reached, or
// answered 429, 502, 503 or 504: GET, PUT and DELETE requests, appends
// that carry an idempotency key, and the POSTs that change nothing twice
// (ending a thread, building a context, searching, reading notes). Other
// POSTs and PATCHes are sent once: a retry could store twice what the
// first attempt stored before its answer was lost. Between attempts the
// client waits what the server asked (Retry-After) or an exponential,
// jittered back-off, and gives up at once when ctx would end first or
// when the server asks for longer than RetryMaxDelay. A retry whose first
// attempt succeeded but lost its answer on the way answers as a second
// call would: a DELETE ENOTFOUND, a write with an expected version
// ECONFLICT.
type Client struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8080.
	BaseURL string
	// HTTPClient sends the requests.
	HTTPClient *http.Client
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// UserAgent is sent as User-Agent (DefaultUserAgent when empty).
	UserAgent string
	// MaxRetries is the number of retries of an idempotent call after its
	// first attempt: DefaultMaxRetries when 0, none when negative.
	MaxRetries int
	// RetryBaseDelay is the back-off before the first retry; it doubles
	// with each retry up to RetryMaxDelay. Zero fields take the defaults.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// Sleep waits d between attempts, or returns ctx.Err() if ctx ends
	// first. Nil means a timer; tests replace it to record the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// New returns a client of the server at baseURL; a nil httpClient means
// http.DefaultClient.
func New(baseURL string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTPClient: httpClient}
}

// Health returns nil while the server answers /healthz (liveness).
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, call{method: http.MethodGet, path: []string{"healthz"}})
}

// Ready returns nil when the server and its database answer /readyz;
// EUNAVAILABLE when the database does not.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, call{method: http.MethodGet, path: []string{"readyz"}})
}

// Metrics writes the server's Prometheus metrics, in the text exposition
// format, to w. The route needs an admin key, and is served only by a
// server with metrics (ENOTFOUND otherwise).
func (c *Client) Metrics(ctx context.Context, w io.Writer) error {
	return c.do(ctx, call{method: http.MethodGet, path: []string{"metrics"}, accept: "text/plain", stream: w})
}

// OpenAPI writes the server's OpenAPI 3.1 document (GET /openapi.json),
// JSON, to w.
func (c *Client) OpenAPI(ctx context.Context, w io.Writer) error {
	return c.do(ctx, call{method: http.MethodGet, path: []string{"openapi.json"}, accept: "application/json", stream: w})
}

// page is the shape of every list response.
type page[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
}

// list gets one page of a list route.
func list[T any](ctx context.Context, c *Client, path []string, q url.Values) ([]T, string, error) {
	var out page[T]
	err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, out: &out})
	return out.Data, out.NextCursor, err
}

// all iterates over the items of a list from cursor on, page by page:
// next returns the page at a cursor and the cursor of the following one
// ("" after the last). The first error is yielded with a zero item and
// ends the iteration.
func all[T any](cursor string, next func(cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, after, err := next(cursor)
			if err == nil && after != "" && after == cursor {
				err = agentmem.Errorf(agentmem.EINTERNAL, "The server answered the same next cursor again; stopping rather than looping.")
			}
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, v := range items {
				if !yield(v, nil) {
					return
				}
			}
			if after == "" {
				return
			}
			cursor = after
		}
	}
}

// call is one request.
type call struct {
	method string
	path   []string // segments from the server's root, escaped by do
	query  url.Values
	header http.Header
	// idempotent marks a POST that may be retried (GET, PUT and DELETE
	// always may).
	idempotent bool
	accept     string    // the Accept header; application/json when empty
	in         any       // JSON-encoded as the body when non-nil
	out        any       // the 2xx body is decoded into it when non-nil; a *string takes the raw body
	stream     io.Writer // the 2xx body is copied to it when non-nil
	status     *int      // receives the 2xx status when non-nil
}

// retries returns how many times cl may be retried.
func (c *Client) retries(cl call) int {
	switch {
	case c.MaxRetries < 0:
		return 0
	case cl.idempotent, cl.method == http.MethodGet, cl.method == http.MethodPut, cl.method == http.MethodDelete:
		return cmp.Or(c.MaxRetries, DefaultMaxRetries)
	}
	return 0
}

// do sends cl, retrying it as Client's doc says, and reads its answer. A
// non-2xx answer becomes an *agentmem.Error; a server that cannot be
// reached is EUNAVAILABLE, with the transport error wrapped.
func (c *Client) do(ctx context.Context, cl call) error {
	p, err := escapePath(cl.path)
	if err != nil {
		return err
	}
	u := c.BaseURL + p
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body []byte
	if cl.in != nil {
		if body, err = json.Marshal(cl.in); err != nil {
			return fmt.Errorf("%s %s: encode request: %w", cl.method, p, err)
		}
	}
	retries := c.retries(cl)
	for n := 0; ; n++ {
		req, err := c.newRequest(ctx, cl, u, body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", cl.method, p, err)
		}
		hc := c.HTTPClient
		if hc == nil {
			hc = http.DefaultClient
		}
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s %s: %w", cl.method, p, ctx.Err())
			}
			if n < retries {
				if d := c.backoff(n); c.fits(ctx, d) {
					if err := c.sleep(ctx, d); err != nil {
						return fmt.Errorf("%s %s: %w", cl.method, p, err)
					}
					continue
				}
			}
			return &unreachableError{request: cl.method + " " + p, err: err}
		}
		if n < retries && retryable(resp.StatusCode) {
			if d, ok := c.retryDelay(resp.Header, n); ok && c.fits(ctx, d) {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
				resp.Body.Close()
				if err := c.sleep(ctx, d); err != nil {
					return fmt.Errorf("%s %s: %w", cl.method, p, err)
				}
				continue
			}
		}
		return read(resp, cl, p)
	}
}

// newRequest returns the request of one attempt at cl.
func (c *Client) newRequest(ctx context.Context, cl call, u string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, r)
	if err != nil {
		return nil, err
	}
	for k, v := range cl.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", cmp.Or(cl.accept, "application/json"))
	req.Header.Set("User-Agent", cmp.Or(c.UserAgent, DefaultUserAgent))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	return req, nil
}

// read reads the answer to cl (p is its escaped path, for messages) and
// closes its body.
func read(resp *http.Response, cl call, p string) error {
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp)
	}
	if cl.status != nil {
		*cl.status = resp.StatusCode
	}
	switch out := cl.out.(type) {
	case nil:
		if cl.stream != nil {
			if _, err := io.Copy(cl.stream, resp.Body); err != nil {
				return fmt.Errorf("%s %s: read response: %w", cl.method, p, err)
			}
			return nil
		}
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
		// The newline after the value: a body closed before its end
		// closes the connection (a large answer's last read leaves it),
		// and the next call would dial again.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
}

// retryable reports whether an answer with status may be retried: the
// server refused the request before it did anything (429), or something
// on the way, or the server itself, is unavailable for now.
func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryDelay returns the wait before retry n+1 after an answer with
// header h: what its Retry-After asks, unless that is longer than
// RetryMaxDelay (then no retry: the caller learns at once), or the
// back-off.
func (c *Client) retryDelay(h http.Header, n int) (time.Duration, bool) {
	if d, ok := retryAfter(h.Get("Retry-After"), time.Now()); ok {
		return d, d <= cmp.Or(c.RetryMaxDelay, DefaultRetryMaxDelay)
	}
	return c.backoff(n), true
}

// backoff returns the wait before retry n+1: RetryBaseDelay doubled n
// times, capped at RetryMaxDelay, of which a random part (jitter spreads
// out the retries of clients that failed together).
func (c *Client) backoff(n int) time.Duration {
	base, most := cmp.Or(c.RetryBaseDelay, DefaultRetryBaseDelay), cmp.Or(c.RetryMaxDelay, DefaultRetryMaxDelay)
	d := most
	if n < 30 && base<<n < most {
		d = base << n
	}
	return d/2 + rand.N(d/2+1)
}

// fits reports whether waiting d leaves ctx time for another attempt;
// if not, the caller gets the server's error rather than ctx's deadline.
func (c *Client) fits(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > d
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryAfter reads a Retry-After value: seconds, or an HTTP date
// (relative to now).
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 || s > 1e6 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// decodeError reads an error response: the API's {"error":{code,message}}
// or, from something else on the way (a proxy), a code guessed from the
// status and a message with the status and the start of the body.
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
	msg := fmt.Sprintf("The server answered %s", resp.Status)
	if text := strings.Join(strings.Fields(string(b)), " "); text != "" && utf8.ValidString(text) {
		if len(text) > 200 {
			text = strings.ToValidUTF8(text[:200], "") + "…"
		}
		msg += ": " + text
	}
	return &agentmem.Error{Code: codeOf(resp.StatusCode), Message: msg + "."}
}

// codeOf is the agentmem error code of an HTTP status, the inverse of
// httpapi's mapping.
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed:
		return agentmem.EINVALID
	case http.StatusUnauthorized:
		return agentmem.EUNAUTHORIZED
	case http.StatusForbidden:
		return agentmem.EFORBIDDEN
	case http.StatusNotFound:
		return agentmem.ENOTFOUND
	case http.StatusConflict:
		return agentmem.ECONFLICT
	case http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong:
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

// notInAPI is the error of a filter or update field that the REST API
// has no parameter for: refused rather than silently dropped.
func notInAPI(field string) error {
	return agentmem.Errorf(agentmem.EINVALID, "%s cannot be sent over the REST API.", field)
}

// setNonZero sets key unless value is empty or "0".
func setNonZero(q url.Values, key, value string) {
	if value != "" && value != "0" {
		q.Set(key, value)
	}
}

// setPtr sets key when value is not nil, also to "" (the handlers tell an
// absent parameter from an empty one).
func setPtr(q url.Values, key string, value *string) {
	if value != nil {
		q.Set(key, *value)
	}
}

// setTime sets key to value in RFC 3339 when value is not nil.
func setTime(q url.Values, key string, value *time.Time) {
	if value != nil {
		q.Set(key, value.Format(time.RFC3339Nano))
	}
}

// setPage sets the limit and cursor of a list.
func setPage(q url.Values, limit int, cursor string) {
	setNonZero(q, "limit", strconv.Itoa(limit))
	setNonZero(q, "cursor", cursor)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// unreachableError is a request that got no answer: its code is
// EUNAVAILABLE, and the transport's error stays in the chain.
type unreachableError struct {
	request string // "GET /healthz"
	err     error
}

func (e *unreachableError) Error() string { return e.request + ": " + e.err.Error() }

func (e *unreachableError) Unwrap() []error {
	return []error{agentmem.Errorf(agentmem.EUNAVAILABLE, "The agentmem server did not answer %s.", e.request), e.err}
}
