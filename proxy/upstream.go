package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// Upstream is the model server requests are forwarded to.
type Upstream struct {
	// BaseURL is an OpenAI-compatible server's base URL, /v1 included
	// ("http://localhost:11434/v1" for Ollama); "" is OpenAI's.
	BaseURL string
	// APIKey is sent as Authorization: Bearer (or api-key to Azure); ""
	// sends none, as a local server wants.
	APIKey string
	// AzureEndpoint selects Azure OpenAI ("https://RESOURCE.openai.azure.com"):
	// the model of a request names the deployment.
	AzureEndpoint   string
	AzureAPIVersion string // default "2025-04-01-preview"
	// HTTPClient sends the requests (a client of the package's own when
	// nil). Its Timeout, if any, bounds whole answers, streams included.
	HTTPClient *http.Client
}

// DefaultAzureAPIVersion is the api-version sent to Azure OpenAI when
// Upstream.AzureAPIVersion is "": one that has the Responses API.
const DefaultAzureAPIVersion = "2025-04-01-preview"

var defaultClient = &http.Client{}

// endpoint returns the URL of an API ("chat/completions", "responses",
// "embeddings", "models", or "model": models/ID) for model. The model is escaped as
// one path segment wherever it goes into the path.
func (u *Upstream) endpoint(api, model string) (string, error) {
	path := api
	if api == "model" {
		path = "models/" + url.PathEscape(model)
	}
	if u.AzureEndpoint != "" {
		base := strings.TrimRight(u.AzureEndpoint, "/") + "/openai/"
		q := "?api-version=" + url.QueryEscape(cmp.Or(u.AzureAPIVersion, DefaultAzureAPIVersion))
		if api == "chat/completions" || api == "embeddings" { // the deployment's
			return base + "deployments/" + url.PathEscape(model) + "/" + api + q, nil
		}
		return base + path + q, nil
	}
	base := cmp.Or(u.BaseURL, "https://api.openai.com/v1")
	if p, err := url.Parse(base); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("upstream base URL %q is not an http(s) URL", base)
	}
	return strings.TrimRight(base, "/") + "/" + path, nil
}

// host names the upstream in the operator's log (never its key, and
// never to a client).
func (u *Upstream) host() string {
	if u == nil {
		return ""
	}
	s := cmp.Or(u.AzureEndpoint, u.BaseURL, "https://api.openai.com/v1")
	if p, err := url.Parse(s); err == nil && p.Host != "" {
		return p.Host
	}
	return "the model server"
}

// exchange is one upstream call in progress.
type exchange struct {
	res      *http.Response
	body     io.ReadCloser // res.Body, each read rearming the idle timer
	cancel   context.CancelFunc
	timedOut *atomic.Bool
}

func (x *exchange) Close() {
	x.body.Close()
	x.cancel()
}

// send calls the upstream. The timeout bounds the wait for the answer's
// header, then each pause between reads of its body. An answer that is
// not 2xx is returned as an *apiError in OpenAI's shape with the
// upstream's status and Retry-After; a failed or timed-out call as 502 or
// 504.
func (p *proxy) send(ctx context.Context, method, api, model string, body []byte) (*exchange, error) {
	if p.up == nil {
		// No retry can help: OpenAI's SDKs retry a 503 unless told not to.
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "no_upstream", upstream: true,
			header:  http.Header{"X-Should-Retry": {"false"}},
			message: "No model server is configured for the proxy: run serve with --proxy-upstream URL (an OpenAI-compatible base URL such as https://api.openai.com/v1 or http://localhost:11434/v1; its key, if it needs one, in AGENTMEM_PROXY_API_KEY or OPENAI_API_KEY), or with OPENAI_API_KEY alone for OpenAI, or the Azure OpenAI variables."}
	}
	u, err := p.up.endpoint(api, model)
	if err != nil {
		p.log.ErrorContext(ctx, "proxy: the model server is misconfigured", agentmem.LogErr, err)
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "no_upstream", upstream: true,
			message: "The proxy's model server is misconfigured (its base URL is not an http(s) URL): the operator's log says more."}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	timedOut := new(atomic.Bool)
	timer := time.AfterFunc(p.opt.Timeout, func() { timedOut.Store(true); cancel() })
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.up.APIKey != "" {
		if p.up.AzureEndpoint != "" {
			req.Header.Set("Api-Key", p.up.APIKey)
		} else {
			req.Header.Set("Authorization", "Bearer "+p.up.APIKey)
		}
	}
	hc := cmp.Or(p.up.HTTPClient, defaultClient)
	start := time.Now()
	res, err := hc.Do(req)
	p.m.upstream(api, time.Since(start))
	if err != nil {
		timer.Stop()
		cancel()
		switch {
		case timedOut.Load():
			return nil, &apiError{status: http.StatusGatewayTimeout, typ: "server_error", code: "upstream_timeout", upstream: true,
				message: fmt.Sprintf("The model server did not answer within %s.", p.opt.Timeout)}
		case parent.Err() != nil: // (ctx is cancelled by now in any case)
			return nil, err // the client went away
		}
		return nil, &apiError{status: http.StatusBadGateway, typ: "server_error", code: "upstream_unreachable", upstream: true,
			message: "The model server could not be reached."}
	}
	x := &exchange{res: res, cancel: func() { timer.Stop(); cancel() }, timedOut: timedOut}
	x.body = &idleBody{ReadCloser: res.Body, timer: timer, d: p.opt.Timeout}
	if res.StatusCode/100 != 2 {
		defer x.Close()
		return nil, p.upstreamError(ctx, res)
	}
	return x, nil
}

// idleBody rearms the timeout at each read that returns data.
type idleBody struct {
	io.ReadCloser
	timer *time.Timer
	d     time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

// upstreamError returns the upstream's error answer as the client's, in
// OpenAI's shape: its status and its Retry-After headers, and of its
// body (when it is OpenAI's error shape) the type, code and param when
// each is a plain word (harmlessWord, harmlessParam), never its message:
// OpenAI's name the operator's organisation ("Rate limit reached … in
// organization org-…"), and any may echo the operator's setup. The
// message is the proxy's, from the status; the upstream's is logged at
// Debug. The upstream's address is in no message either.
func (p *proxy) upstreamError(ctx context.Context, res *http.Response) *apiError {
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	e := &apiError{status: res.StatusCode, typ: "upstream_error", code: "upstream_error", upstream: true, header: http.Header{},
		message: upstreamMessage(res.StatusCode)}
	for _, h := range []string{"Retry-After", "Retry-After-Ms", "X-Should-Retry"} {
		if v := res.Header.Get(h); v != "" {
			e.header.Set(h, v)
		}
	}
	var shaped struct{ Error *errorObject }
	if json.Unmarshal(body, &shaped) == nil && shaped.Error != nil {
		shaped.Error.passOn(e)
		p.log.DebugContext(ctx, "proxy: the model server's error", agentmem.LogStatus, res.StatusCode, "type", shaped.Error.Type, "code", string(shaped.Error.Code), "message", truncate(shaped.Error.Message, 512))
	}
	if e.status < 400 { // a 1xx or 3xx the client cannot follow
		e.status = http.StatusBadGateway
	}
	return e
}

// errorObject is an error object of the upstream's: its error answer's
// "error", an error event of a stream, a failed response's "error".
type errorObject struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   *string         `json:"param"`
	Code    json.RawMessage `json:"code"`
}

// passOn sets in e what of the error may be passed on: its type, code
// and param when each is a plain word (harmlessWord, harmlessParam).
// Never its message.
func (o *errorObject) passOn(e *apiError) {
	if harmlessWord(o.Type) {
		e.typ = o.Type
	}
	if o.Param != nil && harmlessParam(*o.Param) {
		e.param = *o.Param
	}
	var code string
	if json.Unmarshal(o.Code, &code) == nil && harmlessWord(code) {
		e.code = code
	}
}

// reportedError is the error to pass on for one the upstream reported
// inside an answer (a stream's error event, a failed response).
func reportedError(o *errorObject) *apiError {
	e := &apiError{typ: "server_error", code: "upstream_error", upstream: true,
		message: "The model server reported an error while answering (see the error's code)."}
	o.passOn(e)
	return e
}

// scrubError replaces, in a JSON object of the upstream's, the error
// object of field ("error" of a chat stream's error event or of a
// failed response) with what may be passed on of it (reportedError). It
// returns obj unchanged when the field holds no error object.
func scrubError(obj []byte, field string) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(obj, &fields) != nil {
		return obj
	}
	var o *errorObject
	if raw, ok := fields[field]; !ok || json.Unmarshal(raw, &o) != nil || o == nil {
		return obj
	}
	e := reportedError(o)
	fields[field], _ = json.Marshal(map[string]any{"message": e.message, "type": e.typ, "code": e.code, "param": nilIfEmpty(e.param)})
	return rawObject(fields)
}

// nilIfEmpty is nil for "", else s: a JSON null or string.
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// upstreamMessage is the message of an upstream's error answer of status.
func upstreamMessage(status int) string {
	msg := fmt.Sprintf("The model server answered %d %s", status, http.StatusText(status))
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		msg += ": it refused the proxy's own key to it (the operator's AGENTMEM_PROXY_API_KEY or OPENAI_API_KEY), not yours."
	case status == http.StatusNotFound:
		msg += ": no such model, or no such API there. (If the model exists, check that the proxy's upstream is the server's base URL, /v1 included: http://localhost:11434/v1, not http://localhost:11434.)"
	case status == http.StatusTooManyRequests:
		msg += ": it is rate limited; retry after Retry-After."
	case status >= 400 && status < 500:
		msg += ": it refused the request (see the error's code and param)."
	default:
		msg += "."
	}
	return msg
}

// harmlessWord reports whether an upstream's error type or code may be
// passed on: lower-case words joined by underscores (rate_limit_exceeded,
// invalid_request_error), at most 64 bytes. Digits and hyphens are not,
// so no identifier (org-…, proj_…1, a request ID) passes.
func harmlessWord(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// harmlessParam reports whether an upstream's error param may be passed
// on: the path of a field of the client's own request (temperature,
// messages[0].content), at most 64 bytes.
func harmlessParam(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("_.[]", r) {
			return false
		}
	}
	return true
}

// truncate cuts s to at most n bytes, on a character boundary.
func truncate(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// timeoutError is the error of a stream that paused longer than the
// timeout.
func (p *proxy) timeoutError() *apiError {
	return &apiError{status: http.StatusGatewayTimeout, typ: "server_error", code: "upstream_timeout", upstream: true,
		message: fmt.Sprintf("The model server paused longer than %s.", p.opt.Timeout)}
}
