// Package proxy is agentmem's OpenAI-compatible proxy: an application
// built on an OpenAI SDK gets memory by pointing its base URL at
// agentmem's /openai/v1. Each request stores the client's new turns,
// builds the context (core.Service.BeginTurn), forwards the request with
// that context to the upstream model server (OpenAI, Azure OpenAI, or any
// compatible server: Ollama, vLLM, LM Studio), streams the answer back as
// it arrives, and stores the answer when it ends (core.Service's
// AppendMessages): the chat completions API, the Responses API and the
// model list, streamed and not. Embeddings pass through to the same
// upstream, with nothing stored. Fields it does not know pass through
// untouched.
//
// Who is calling comes from httpapi's authentication, which serves these
// routes (httpapi.Options.Proxy); which thread from the request (see
// resolve).
package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/httpx"
)

// Request headers a client may send to say whose memory and which of it.
const (
	HeaderUser   = httpx.HeaderUser    // the user, when the key does not say
	HeaderThread = "X-Agentmem-Thread" // the thread (else the active session of user and agent)
	HeaderAgent  = "X-Agentmem-Agent"  // the agent of the session (agentmem.DefaultAgent)
	HeaderMemory = "X-Agentmem-Memory" // the memory mode: auto, full, augment or off
)

// Response headers: what the proxy did.
const (
	HeaderThreadOut     = "X-Agentmem-Thread"         // the thread the turn was stored in
	HeaderMode          = "X-Agentmem-Memory"         // the mode applied
	HeaderContextTokens = "X-Agentmem-Context-Tokens" // the tokens of the context sent
	HeaderBudgetTokens  = "X-Agentmem-Budget-Tokens"  // the budget it was built for
	HeaderSummaryBehind = "X-Agentmem-Summary-Behind" // "true" when the summary lagged and turns were trimmed
	HeaderUnavailable   = "X-Agentmem-Memory-Unavailable"
	// HeaderAnswerTruncated is "true" on an answer (not streamed) that
	// was longer than the store's message bound: it is stored cut to it,
	// its metadata saying "truncated": true and its "original_bytes".
	HeaderAnswerTruncated = "X-Agentmem-Answer-Truncated"
	unavailableByDegrade  = "store unavailable; forwarded without memory; this turn is not stored"
)

// DegradePassthrough is Options.Degrade's value that forwards requests
// without memory while the store is down.
const DegradePassthrough = "passthrough"

// DefaultLocalUser is the user of a request that names none when
// authentication is off (seed 000's local user).
const DefaultLocalUser = agentmem.LocalUser

// DefaultTimeout bounds the wait for the upstream's answer to begin, and
// then each pause between the parts of a streamed answer.
const DefaultTimeout = 120 * time.Second

// Options configure the proxy. Upstream is required for the model routes;
// without it they answer 503 saying how to configure one.
type Options struct {
	Upstream *Upstream
	// Mode is the memory mode of a request without X-Agentmem-Memory
	// (agentmem.MemoryAuto when "").
	Mode string
	// Budgets are the context budgets of models by name or name prefix
	// ("gpt-4o", "llama3"), the longest prefix winning; they replace the
	// defaults of the known OpenAI models (DefaultBudget).
	Budgets map[string]int
	// Timeout bounds the wait for the upstream (DefaultTimeout when 0).
	Timeout time.Duration
	// Degrade says what happens while the store is down: "" answers 503;
	// DegradePassthrough forwards the request unchanged and says so in
	// the X-Agentmem-Memory-Unavailable response header, which says too
	// that the turn is not stored: agentmem keeps no copy of it to store
	// later. A client that resends its history, as chat completions
	// clients do, has it stored with its next turn once the store is
	// back (the proxy stores what the thread does not hold yet).
	Degrade string
	// Metrics receives the proxy's metrics (nil: none).
	Metrics Metrics
	// MaxBodyBytes bounds a request body (httpx.DefaultMaxBodyBytes
	// when 0).
	MaxBodyBytes int64
	// MaxAnswerBytes bounds an upstream answer that is read whole (not
	// streamed), and each line of a streamed one (DefaultMaxAnswerBytes
	// when 0): past it the client gets a 502 (in a stream, an error
	// event) saying so.
	MaxAnswerBytes int64
	// MaxMessageBytes is the store's bound on a message
	// (agentmem.DefaultMaxMessageBytes when 0): a longer answer is stored
	// cut to it and marked so (HeaderAnswerTruncated).
	MaxMessageBytes int
}

// DefaultMaxAnswerBytes is Options.MaxAnswerBytes when 0.
const DefaultMaxAnswerBytes = 32 << 20

// Routes are the proxy's routes, for httpapi's table: each needs an
// authenticated caller; the proxy resolves whose memory it is.
var Routes = []string{
	"POST /openai/v1/chat/completions",
	"POST /openai/v1/responses",
	"GET /openai/v1/models",
	"GET /openai/v1/models/{model}",
	"POST /openai/v1/embeddings",
}

// NewHandler returns the proxy's routes (Routes) over svc.
func NewHandler(log *slog.Logger, svc agentmem.Service, opt Options) http.Handler {
	log = agentmem.LoggerOr(log)
	opt.Mode = cmp.Or(opt.Mode, agentmem.MemoryAuto)
	opt.Timeout = cmp.Or(opt.Timeout, DefaultTimeout)
	opt.MaxBodyBytes = cmp.Or(opt.MaxBodyBytes, httpx.DefaultMaxBodyBytes)
	opt.MaxAnswerBytes = cmp.Or(opt.MaxAnswerBytes, DefaultMaxAnswerBytes)
	opt.MaxMessageBytes = cmp.Or(opt.MaxMessageBytes, agentmem.DefaultMaxMessageBytes)
	p := &proxy{log: log, svc: svc, opt: opt, up: opt.Upstream, m: newMetrics(opt.Metrics)}
	mux := http.NewServeMux()
	mux.Handle(Routes[0], p.handle(p.chat))
	mux.Handle(Routes[1], p.handle(p.responses))
	mux.Handle(Routes[2], p.handleModels())
	mux.Handle(Routes[3], p.handleModels())
	mux.Handle(Routes[4], p.handle(p.embeddings))
	mux.HandleFunc("/", p.unrouted)
	return mux
}

// unrouted answers a request no route takes, in OpenAI's error shape:
// 405 naming the method a known path takes, else 404.
func (p *proxy) unrouted(w http.ResponseWriter, r *http.Request) {
	for _, rt := range Routes {
		method, path, _ := strings.Cut(rt, " ")
		if path == r.URL.Path {
			w.Header().Set("Allow", method)
			p.writeError(w, r, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: agentmem.EINVALID,
				message: r.URL.Path + " takes " + method + ", not " + r.Method + "."})
			return
		}
	}
	p.writeError(w, r, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: agentmem.ENOTFOUND,
		message: "No route for " + r.Method + " " + r.URL.Path + " in agentmem's OpenAI-compatible API (chat/completions, responses, embeddings, models)."})
}

// handle adapts a handler that returns its error, which handle writes
// (a handler that has begun its answer returns nil).
func (p *proxy) handle(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			p.writeError(w, r, err)
		}
	})
}

// proxy is the state the handlers share.
type proxy struct {
	log *slog.Logger
	svc agentmem.Service
	opt Options
	up  *Upstream
	m   *metrics
}

// apiError is an error in OpenAI's shape, with its status.
type apiError struct {
	status  int
	typ     string // OpenAI's error type: invalid_request_error, server_error…
	code    string // agentmem's code, or the upstream's
	param   string
	message string
	header  http.Header // extra response headers (Retry-After)
	// upstream: the model server's error, or its absence, passed on:
	// logged as a warning, not as the proxy's failure.
	upstream bool
	// cause is the error behind it, for the log (writeError logs a
	// server error once, with its cause).
	cause error
}

func (e *apiError) Error() string { return e.message }

func (e *apiError) Unwrap() error { return e.cause }

// errorOf turns an agentmem error into an apiError of its status, in
// OpenAI's terms (httpx.NewOpenAIError).
func errorOf(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	code := agentmem.ErrorCode(err)
	e := httpx.NewOpenAIError(httpx.StatusOf(code), code, agentmem.ErrorMessage(err))
	return &apiError{status: e.Status, typ: e.Type, code: e.Code, message: e.Message}
}

// invalid is a 400 naming param.
func invalid(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: agentmem.EINVALID, param: param,
		message: agentmem.Errorf(agentmem.EINVALID, format, args...).Message}
}

// writeError answers err in OpenAI's error shape, which the SDKs parse:
// {"error":{"message","type","param","code"}}. Server errors are logged.
func (p *proxy) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorOf(err)
	switch {
	case e.status >= 500 && e.upstream && p.up == nil:
		p.log.WarnContext(r.Context(), "proxy: no model server is configured", agentmem.LogPath, r.URL.Path, agentmem.LogStatus, e.status, "code", e.code)
	case e.status >= 500 && e.upstream:
		p.log.WarnContext(r.Context(), "proxy: the model server failed", agentmem.LogPath, r.URL.Path, "upstream", p.up.host(), agentmem.LogStatus, e.status, "code", e.code)
	case e.status >= 500:
		if e.cause != nil {
			err = e.cause
		}
		p.log.ErrorContext(r.Context(), "proxy request failed", agentmem.LogPath, r.URL.Path, agentmem.LogStatus, e.status, agentmem.LogErr, err)
	}
	for k, vs := range e.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	(&httpx.OpenAIError{Status: e.status, Type: e.typ, Code: e.code, Param: e.param, Message: e.message}).Write(w)
}

// caller is who a request speaks for and where its turn goes.
type caller struct {
	user   string
	thread string
	agent  string
	mode   string
	api    string // "chat" or "responses", for the metrics
}

// resolve says whose memory a request is, from the first that says:
//
//   - the authenticated identity, when it is one user's (a user key, or
//     a trusted proxy's user header): another user named by
//     X-Agentmem-User or the body's "user" is refused (403), since a key
//     speaks for one user;
//   - X-Agentmem-User;
//   - the body's "user", only when authentication is off or the key is an
//     admin's (a tenant's key must name the user by the header, since
//     apps also put pseudonymous IDs there for the model server);
//   - with authentication off, DefaultLocalUser.
//
// The thread is X-Agentmem-Thread, else threadID (from the body), else
// the active session of the user and X-Agentmem-Agent.
func (p *proxy) resolve(r *http.Request, bodyUser, threadID string) (*caller, error) {
	id := agentmem.IdentityFromContext(r.Context())
	header := r.Header.Get(HeaderUser)
	c := &caller{
		thread: cmp.Or(r.Header.Get(HeaderThread), threadID),
		agent:  r.Header.Get(HeaderAgent),
		mode:   cmp.Or(r.Header.Get(HeaderMemory), p.opt.Mode),
	}
	authOff := id == nil || id.Via == agentmem.ViaNone
	names := []httpx.Name{{Where: HeaderUser, User: header}}
	if id == nil || id.Scope.Kind != agentmem.ScopeTenant { // a tenant's key names its users in the header
		names = append(names, httpx.Name{Where: `the body's "user"`, User: bodyUser})
	}
	user, err := httpx.UserOf(id, names...)
	switch {
	case err != nil:
		return nil, &apiError{status: http.StatusForbidden, typ: "permission_error", code: agentmem.EFORBIDDEN, message: agentmem.ErrorMessage(err)}
	case user != "":
		c.user = user
	case authOff:
		c.user = DefaultLocalUser
	default:
		return nil, invalid("user", "Name the user whose memory this is with the %s header.", HeaderUser)
	}
	switch c.mode {
	case agentmem.MemoryAuto, agentmem.MemoryFull, agentmem.MemoryAugment, agentmem.MemoryOff:
	default:
		return nil, invalid(HeaderMemory, "%s must be auto, full, augment or off, not %q.", HeaderMemory, c.mode)
	}
	return c, nil
}

// noWriteDeadline lifts the server's write timeout from a response: a
// model may think, or stream, for longer than any REST answer takes; the
// upstream's own timeout (Options.Timeout, between reads) bounds it.
func noWriteDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{}) // unsupported by a test recorder: nothing to lift
}

// modelRequest is what both model APIs read alike of a request.
type modelRequest struct {
	body     map[string]json.RawMessage
	model    string // required
	stream   bool
	user     string // the body's "user"
	threadID string // metadata.thread_id
}

// readModelRequest reads the body of a model API's request, and lifts
// the write timeout from its answer.
func (p *proxy) readModelRequest(w http.ResponseWriter, r *http.Request) (*modelRequest, error) {
	noWriteDeadline(w)
	body, err := p.readBody(r)
	if err != nil {
		return nil, err
	}
	req := &modelRequest{body: body}
	if req.model, err = str(body, "model"); err != nil {
		return nil, err
	}
	if req.model == "" {
		return nil, invalid("model", "model is required.")
	}
	if req.stream, err = flag(body, "stream"); err != nil {
		return nil, err
	}
	if req.user, err = str(body, "user"); err != nil {
		return nil, err
	}
	if req.threadID, err = metadataThread(body); err != nil {
		return nil, err
	}
	return req, nil
}

// readBody reads a request body: one JSON object, declared as JSON
// (checkJSON), within the size limit.
func (p *proxy) readBody(r *http.Request) (map[string]json.RawMessage, error) {
	if err := checkJSON(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, p.opt.MaxBodyBytes))
	if err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: agentmem.ETOOLARGE,
				message: "The request body is larger than the limit of " + strconv.FormatInt(tooLarge.Limit, 10) + " bytes."}
		}
		return nil, invalid("", "The request body could not be read.")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, invalid("", "The request body must be a JSON object.")
	}
	return obj, nil
}

// checkJSON answers 415 to a request whose body is not declared JSON:
// application/json or a type with the +json suffix, charset utf-8 if
// any, as the REST API requires (httpapi's requireJSON, which covers
// /v1/ only). A form or text/plain body is also what a web page can send
// another origin without asking first.
func checkJSON(r *http.Request) error {
	if r.ContentLength == 0 {
		return nil // no body: readBody says what is missing
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	msg := ""
	switch {
	case ct == "":
		msg = "A request body needs the header Content-Type: application/json."
	case err != nil || (mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))):
		msg = "The request body is " + strconv.Quote(ct) + "; send it as Content-Type: application/json."
	case params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8"):
		msg = "The request body's charset is " + strconv.Quote(params["charset"]) + "; JSON must be utf-8 (Content-Type: application/json)."
	default:
		return nil
	}
	return &apiError{status: http.StatusUnsupportedMediaType, typ: "invalid_request_error", code: agentmem.EINVALID, message: msg}
}

// str reads a string field of a body; absent or null is "".
func str(body map[string]json.RawMessage, field string) (string, error) {
	raw, ok := body[field]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid(field, "%s must be a string.", field)
	}
	return s, nil
}

// flag reads a boolean field of a body; absent or null is false.
func flag(body map[string]json.RawMessage, field string) (bool, error) {
	raw, ok := body[field]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, invalid(field, "%s must be true or false.", field)
	}
	return b, nil
}

// metadataThread reads metadata.thread_id of a body.
func metadataThread(body map[string]json.RawMessage) (string, error) {
	raw, ok := body["metadata"]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var md map[string]json.RawMessage
	if err := json.Unmarshal(raw, &md); err != nil {
		return "", invalid("metadata", "metadata must be an object of strings.")
	}
	return str(md, "thread_id")
}

// maxTokens reads the answer's token limit a request sets (0: none).
func maxTokens(body map[string]json.RawMessage, fields ...string) int {
	for _, f := range fields {
		var n int
		if raw, ok := body[f]; ok && json.Unmarshal(raw, &n) == nil && n > 0 {
			return n
		}
	}
	return 0
}

// setHeaders writes the response headers that say what the proxy did.
func setHeaders(h http.Header, turn *agentmem.Turn) {
	if turn == nil {
		return
	}
	h.Set(HeaderThreadOut, turn.Thread.ID)
	h.Set(HeaderMode, turn.Mode)
	if turn.Context != nil {
		t := turn.Context.Telemetry
		h.Set(HeaderContextTokens, strconv.Itoa(t.UsedTokens))
		h.Set(HeaderBudgetTokens, strconv.Itoa(t.BudgetTokens))
		h.Set(HeaderSummaryBehind, strconv.FormatBool(t.SummaryBehind))
	}
}

// beginTurn runs the service's first half of the call. A store that is
// down answers 503, or with DegradePassthrough nil and no error: the
// request is then forwarded as it is.
func (p *proxy) beginTurn(ctx context.Context, c *caller, req agentmem.TurnRequest) (*agentmem.Turn, error) {
	turn, err := p.svc.BeginTurn(ctx, c.user, req)
	if err == nil {
		return turn, nil
	}
	switch agentmem.ErrorCode(err) {
	case agentmem.EINTERNAL, agentmem.EUNAVAILABLE:
		if ctx.Err() != nil {
			return nil, err
		}
		if p.opt.Degrade == DegradePassthrough {
			p.log.ErrorContext(ctx, "proxy: memory unavailable, forwarding without it", agentmem.LogErr, err)
			return nil, nil
		}
		// writeError logs it, with err.
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: agentmem.EUNAVAILABLE, cause: err,
			header:  http.Header{"Retry-After": {"5"}},
			message: "agentmem's store is unavailable, so the turn could not be stored; retry shortly (or run serve with --proxy-degrade passthrough to forward without memory meanwhile)."}
	}
	return nil, err
}

// finish stores the model's answer (the second half of the call). It
// runs after the client went away too, on a context of its own. An
// answer over the store's message bound is stored cut to it (fit);
// dropped counts the bytes of it the proxy did not keep while reading
// it (answerCap). It reports whether the answer was stored cut.
func (p *proxy) finish(ctx context.Context, c *caller, turn *agentmem.Turn, reply *agentmem.Message, dropped int) (truncated bool) {
	if turn == nil || reply == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	truncated = fit(reply, p.opt.MaxMessageBytes, dropped)
	if _, err := p.svc.AppendMessages(ctx, c.user, turn.Thread.ID, []*agentmem.Message{reply}, ""); err != nil {
		p.log.ErrorContext(ctx, "proxy: answer not stored", agentmem.LogThread, turn.Thread.ID, agentmem.LogErr, err)
		p.m.answer(c.api, "failed")
		return false
	}
	if truncated {
		p.log.WarnContext(ctx, "proxy: answer stored truncated", agentmem.LogThread, turn.Thread.ID, "max_message_bytes", p.opt.MaxMessageBytes)
		p.m.answer(c.api, "truncated")
	} else {
		p.m.answer(c.api, "stored")
	}
	return truncated
}

// fit cuts an answer to maxBytes, the store's bound on a message (which
// counts content, tool calls and metadata): its content first, then the
// arguments of its tool calls from the last, each on a character
// boundary. A cut answer's metadata says "truncated": true and
// "original_bytes", the size of its content and tool calls as the model
// gave them (dropped of which the proxy did not keep while reading). It
// reports whether it cut.
func fit(m *agentmem.Message, maxBytes, dropped int) bool {
	if dropped == 0 && m.Size() <= maxBytes {
		return false
	}
	var md map[string]any
	if json.Unmarshal(m.Metadata, &md) != nil || md == nil { // replyMetadata's: an object
		md = map[string]any{}
	}
	md["truncated"], md["original_bytes"] = true, m.Size()-len(m.Metadata)+dropped
	m.Metadata, _ = json.Marshal(md)
	if over := m.Size() - maxBytes; over > 0 {
		m.Content = truncate(m.Content, len(m.Content)-over)
	}
	for i := len(m.ToolCalls) - 1; i >= 0 && m.Size() > maxBytes; i-- {
		args := &m.ToolCalls[i].Function.Arguments
		*args = truncate(*args, len(*args)-(m.Size()-maxBytes))
	}
	return true
}

// answerCap keeps at most max bytes of an answer gathered from a stream,
// counting those it drops: the store keeps no more than its message
// bound in any case.
type answerCap struct{ max, kept, dropped int }

// keep returns what of s fits.
func (a *answerCap) keep(s string) string {
	k := truncate(s, a.max-a.kept)
	a.kept += len(k)
	a.dropped += len(s) - len(k)
	return k
}

// readAnswer reads an upstream answer whole, within MaxAnswerBytes: a
// larger one is a 502 saying so.
func (p *proxy) readAnswer(x *exchange) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(x.body, p.opt.MaxAnswerBytes+1))
	switch {
	case err != nil && x.timedOut.Load():
		return nil, p.timeoutError()
	case err != nil:
		// The upstream's answer broke off (its error names its address:
		// it is not passed on).
		return nil, &apiError{status: http.StatusBadGateway, typ: "server_error", code: "upstream_unreachable", upstream: true,
			message: "The model server's answer broke off before its end."}
	case int64(len(b)) > p.opt.MaxAnswerBytes:
		return nil, p.answerTooLarge()
	}
	return b, nil
}

// answerTooLarge is the error of an answer, or of a line of a streamed
// one, over MaxAnswerBytes.
func (p *proxy) answerTooLarge() *apiError {
	return &apiError{status: http.StatusBadGateway, typ: "server_error", code: "upstream_answer_too_large", upstream: true,
		message: "The model server's answer is larger than the proxy's limit of " + strconv.FormatInt(p.opt.MaxAnswerBytes, 10) + " bytes; it was not passed on or stored."}
}

// replyMetadata is the metadata of a stored answer.
func replyMetadata(model, id, finish string, incomplete bool) json.RawMessage {
	md := map[string]any{"source": "proxy"}
	if model != "" {
		md["model"] = model
	}
	if id != "" {
		md["response_id"] = id
	}
	if finish != "" {
		md["finish_reason"] = finish
	}
	if incomplete {
		md["incomplete"] = true
	}
	b, _ := json.Marshal(md)
	return b
}

// contentText returns the text of a message's content: a string, null,
// or an array of parts whose text parts are joined (images and audio are
// forwarded but not stored).
func contentText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if raw[0] == '"' {
		return s, json.Unmarshal(raw, &s) == nil
	}
	var parts []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, part := range parts {
		if t := cmp.Or(part.Text, part.Refusal); t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "\n"), true
}

// rawArray writes items, each valid JSON, as a JSON array. Unlike
// json.Marshal it does not check and compact each item again: a context
// of 100,000 tokens is half a megabyte.
func rawArray(items []json.RawMessage) json.RawMessage {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

// rawObject writes a body, whose values are valid JSON (read from the
// client's request, or written by the proxy), as a JSON object with its
// keys in order, without checking the values again.
func rawObject(body map[string]json.RawMessage) []byte {
	keys := slices.Sorted(maps.Keys(body))
	n := 2
	for _, k := range keys {
		n += len(k) + len(body[k]) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(k) // a string: cannot fail
		b = append(append(append(b, key...), ':'), body[k]...)
	}
	return append(b, '}')
}
