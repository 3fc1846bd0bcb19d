// Package llmtest is a fake OpenAI-compatible HTTP server for tests: every
// test in the project that needs a model talks to one of these instead of a
// provider. It speaks the real wire format, so the production client
// (llm/openai) is what gets tested:
//
//	POST /v1/chat/completions                       (also with "stream": true, as server-sent events)
//	POST /v1/responses                              (the Responses API, streamed or not)
//	POST /v1/embeddings
//	GET  /v1/models, GET /v1/models/{model}
//	POST /openai/deployments/{deployment}/chat/completions?api-version=…   (Azure OpenAI)
//	POST /openai/deployments/{deployment}/embeddings?api-version=…
//
// Answers are deterministic: chat echoes the last user message (DefaultReply)
// and embeddings are hashed bags of words (Vector), unless a test queues
// replies with Push or decides them with Script. Replies can also be faults:
// an HTTP error with an optional Retry-After (Fail, RateLimited), a hang until
// the client gives up (Hang), a malformed body (Malformed), a body that is
// not JSON at all (NotJSON) or an answer without choices (Empty); Down
// makes every answer one of them until Up, an outage of the whole server.
// The server records every request it receives.
//
// The package imports the standard library only, and never llm/openai.
package llmtest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// DefaultDimensions is the length of the vectors the server returns when
// neither SetDimensions nor the request's "dimensions" says otherwise.
const DefaultDimensions = 64

// created is the fixed "created" timestamp of every answer, so that
// recorded answers are byte-for-byte reproducible.
const created = 1700000000

// Server is a fake OpenAI-compatible server on a loopback port. Its methods
// are safe for concurrent use.
type Server struct {
	// URL is the server's root, e.g. "http://127.0.0.1:41234". OpenAI
	// clients take BaseURL() (URL + "/v1"); Azure clients take URL as the
	// endpoint.
	URL string

	srv  *httptest.Server
	done chan struct{} // closed at cleanup; releases hanging handlers

	mu          sync.Mutex
	chatQueue   []Reply
	embedQueue  []Reply
	chatScript  func(ChatCompletionRequest) Reply
	embedScript func(EmbeddingRequest) Reply
	down        *Reply // the fault of every answer while the server is down
	dim         int
	apiKey      string
	requests    []Request
	seq         int
}

// Request is one request the server received, in arrival order.
type Request struct {
	Method string
	Path   string // URL path, e.g. "/v1/chat/completions"
	Query  url.Values
	Header http.Header
	Body   []byte

	// Chat is the decoded body of a chat-completions request, Responses
	// that of a Responses API request, and Embedding that of an
	// embeddings request; nil otherwise or when the body did not decode.
	Chat      *ChatCompletionRequest
	Responses *ResponsesRequest
	Embedding *EmbeddingRequest
}

// NewServer starts a fake server, closed when tb's test ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{done: make(chan struct{}), dim: DefaultDimensions}
	s.srv = httptest.NewServer(s.routes())
	s.URL = s.srv.URL
	tb.Cleanup(func() {
		close(s.done) // first, or Close would wait for hanging handlers
		s.srv.Close()
	})
	return s
}

// BaseURL returns the base URL an OpenAI client takes: URL + "/v1".
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Push queues replies for the next chat-completion requests, one each, in
// order. When the queue is empty the Script function decides, or else
// DefaultReply.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatQueue = append(s.chatQueue, replies...)
}

// Script sets the function that decides each chat answer once the Push
// queue is empty; nil restores DefaultReply. f runs on the server's
// goroutines and may be called concurrently.
func (s *Server) Script(f func(req ChatCompletionRequest) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatScript = f
}

// PushEmbedding queues replies for the next embeddings requests, one each.
// Only the fault fields and Vectors of a Reply apply to embeddings; a reply
// without them answers the default hashed vectors.
func (s *Server) PushEmbedding(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedQueue = append(s.embedQueue, replies...)
}

// ScriptEmbedding sets the function that decides each embeddings answer
// once the PushEmbedding queue is empty; nil restores the default.
func (s *Server) ScriptEmbedding(f func(req EmbeddingRequest) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedScript = f
}

// Down makes the server answer every model request (chat, Responses and
// embeddings) with fault, ahead of the queues and scripts, until Up: an
// outage of the model server (Fail(500), Hang(), Malformed(), NotJSON()…).
// The requests are still recorded; what was queued stays queued.
func (s *Server) Down(fault Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = &fault
}

// Up ends the outage that Down began: answers are the queued, scripted or
// default ones again.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = nil
}

// SetDimensions sets the length of default embedding vectors for requests
// that do not ask for "dimensions" themselves.
func (s *Server) SetDimensions(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dim = n
}

// RequireAPIKey makes the server answer 401 to any model request that does
// not carry key as "Authorization: Bearer key" (OpenAI) or "api-key: key"
// (Azure). By default every request is accepted.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ChatRequests returns the decoded chat-completion requests received so
// far, in order.
func (s *Server) ChatRequests() []ChatCompletionRequest {
	var reqs []ChatCompletionRequest
	for _, r := range s.Requests() {
		if r.Chat != nil {
			reqs = append(reqs, *r.Chat)
		}
	}
	return reqs
}

// EmbeddingRequests returns the decoded embeddings requests received so
// far, in order.
func (s *Server) EmbeddingRequests() []EmbeddingRequest {
	var reqs []EmbeddingRequest
	for _, r := range s.Requests() {
		if r.Embedding != nil {
			reqs = append(reqs, *r.Embedding)
		}
	}
	return reqs
}

// Reply is one scripted answer. The zero value answers an empty assistant
// message. Content, FinishReason, Model, token counts and NoChoices apply to
// chat; Vectors to embeddings; the fault fields to both.
type Reply struct {
	Content          string
	FinishReason     string // "" means "stop"
	Model            string // "" means the request's model (or Azure deployment)
	PromptTokens     int    // 0 means the number of words of the prompt
	CompletionTokens int    // 0 means the number of words of Content
	NoChoices        bool   // answer 200 with "choices": [] (a truncated answer)
	// ToolCalls are function calls the answer asks for (finish reason
	// "tool_calls" unless FinishReason says otherwise); streamed, each
	// call's name comes first, then its arguments in two parts.
	ToolCalls []ToolCall
	// ChunkDelay pauses a streamed answer before each chunk after the
	// first (a slow model; a client can go away mid-stream).
	ChunkDelay time.Duration

	// Vectors replaces the hashed embeddings, one per input.
	Vectors [][]float32

	// Status, if neither 0 nor 200, answers that HTTP status with an
	// OpenAI error body.
	Status     int
	RetryAfter string      // sent as Retry-After: seconds or an HTTP date
	Header     http.Header // extra response headers (retry-after-ms, x-should-retry…)
	Body       string      // sent verbatim, with Status or 200, instead of the generated body
	Hang       bool        // answer nothing until the client gives up (or the test ends)
	Delay      time.Duration
	// ContentType is the Content-Type of Body ("" means application/json).
	ContentType string
}

// Text returns a reply whose chat answer is content.
func Text(content string) Reply { return Reply{Content: content} }

// Fail returns a reply that answers the HTTP status with an OpenAI error
// body.
func Fail(status int) Reply { return Reply{Status: status} }

// RateLimited returns a 429 reply with the given Retry-After header
// (seconds, or an HTTP date; "" sends none).
func RateLimited(retryAfter string) Reply {
	return Reply{Status: http.StatusTooManyRequests, RetryAfter: retryAfter}
}

// Hang returns a reply that answers nothing until the client gives up.
func Hang() Reply { return Reply{Hang: true} }

// Malformed returns a reply whose 200 body is cut-off JSON.
func Malformed() Reply {
	return Reply{Body: `{"id":"chatcmpl-broken","object":"chat.completion","choices":[{"index":0,"message":{"role":"assist`}
}

// NotJSON returns a reply whose 200 body is an HTML page, as a proxy or a
// captive portal in front of the model server might answer.
func NotJSON() Reply {
	return Reply{Body: "<html><head><title>Service Unavailable</title></head><body>Try again later.</body></html>\n", ContentType: "text/html; charset=utf-8"}
}

// Empty returns a chat reply with no choices.
func Empty() Reply { return Reply{NoChoices: true} }

// DefaultReply is the answer to a chat request that nothing scripted: the
// last user message prefixed with "echo: ", or in JSON mode the object
// {"echo": <last user message>}. A max_tokens (or max_completion_tokens)
// smaller than the answer's word count cuts it to that many words, with
// finish reason "length", as a real model would.
func DefaultReply(req ChatCompletionRequest) Reply {
	last := req.LastUserMessage()
	if req.JSONMode() {
		b, _ := json.Marshal(map[string]string{"echo": last})
		return Reply{Content: string(b)}
	}
	r := Reply{Content: "echo: " + last}
	limit := 0
	if req.MaxTokens != nil {
		limit = *req.MaxTokens
	}
	if req.MaxCompletionTokens != nil {
		limit = *req.MaxCompletionTokens
	}
	if words := strings.Fields(r.Content); limit > 0 && len(words) > limit {
		r.Content, r.FinishReason = strings.Join(words[:limit], " "), "length"
	}
	return r
}

// Vector returns the deterministic embedding of text: a signed hashed bag
// of its lower-cased words (FNV-1a) in dim dimensions, scaled to unit
// length. Texts that share words are closer than texts that don't, which is
// enough for retrieval tests. A text without words hashes as one word.
func Vector(text string, dim int) []float32 {
	if dim <= 0 {
		dim = DefaultDimensions
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) == 0 {
		words = []string{text}
	}
	v := make([]float64, dim)
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		if sum>>63 == 1 {
			v[sum%uint64(dim)]--
		} else {
			v[sum%uint64(dim)]++
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dim)
	for i, x := range v {
		if norm > 0 {
			out[i] = float32(x / norm)
		}
	}
	if norm == 0 { // words whose signs cancelled out
		out[0] = 1
	}
	return out
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/responses", s.handleResponses)
	mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /v1/models/{model}", s.handleModel)
	mux.HandleFunc("POST /openai/deployments/{deployment}/chat/completions", s.azure(s.handleChat))
	mux.HandleFunc("POST /openai/deployments/{deployment}/embeddings", s.azure(s.handleEmbeddings))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, nil)
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path))
	})
	return mux
}

// azure requires the api-version query parameter that Azure OpenAI
// requires; the handlers read the deployment from the path.
func (s *Server) azure(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api-version") == "" {
			s.record(r, nil)
			writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_api_version", "Missing API version parameter.")
			return
		}
		next(w, r)
	}
}

// record reads the body, stores the request and returns the body.
func (s *Server) record(r *http.Request, decode func(body []byte, rec *Request)) []byte {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body}
	if decode != nil {
		decode(body, &rec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	s.seq++
	return body
}

func (s *Server) authorized(r *http.Request) bool {
	s.mu.Lock()
	key := s.apiKey
	s.mu.Unlock()
	return key == "" || r.Header.Get("Authorization") == "Bearer "+key || r.Header.Get("Api-Key") == key
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req ChatCompletionRequest
	var decodeErr error
	s.record(r, func(body []byte, rec *Request) {
		if decodeErr = json.Unmarshal(body, &req); decodeErr == nil {
			req.Deployment = r.PathValue("deployment")
			rec.Chat = &req
		}
	})
	switch {
	case refuse(w, s.authorized(r), decodeErr, req.Model):
		return
	case len(req.Messages) == 0:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "empty_array", "Invalid 'messages': empty array.")
		return
	}

	reply, n := s.next(req)
	id := "chatcmpl-" + n

	if s.fault(w, r, reply) {
		return
	}
	model := cmp.Or(reply.Model, req.Model)
	finish := cmp.Or(reply.FinishReason, "stop")
	if len(reply.ToolCalls) > 0 {
		finish = cmp.Or(reply.FinishReason, "tool_calls")
	}
	usage := &Usage{
		PromptTokens:     cmp.Or(reply.PromptTokens, promptWords(req.Messages)),
		CompletionTokens: cmp.Or(reply.CompletionTokens, len(strings.Fields(reply.Content))),
	}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens

	if req.Stream {
		s.stream(w, r, id, model, reply, finish, req.StreamOptions != nil && req.StreamOptions.IncludeUsage, usage)
		return
	}
	resp := ChatCompletion{ID: id, Object: "chat.completion", Created: created, Model: model, Choices: []Choice{}, Usage: usage}
	if !reply.NoChoices {
		resp.Choices = append(resp.Choices, Choice{
			Message:      ChatMessage{Role: "assistant", Content: reply.Content, ToolCalls: reply.ToolCalls},
			FinishReason: finish,
		})
	}
	writeJSON(w, http.StatusOK, resp)
}

// startStream begins an event stream's answer.
func startStream(w http.ResponseWriter) http.Flusher {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	return flusher
}

// pause waits d between two parts of a streamed answer; false when the
// client or the test ended meanwhile.
func (s *Server) pause(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// refuse answers the faults every model request shares: a wrong key, a
// body that did not decode, no model; it reports whether it answered.
func refuse(w http.ResponseWriter, authorized bool, decodeErr error, model string) bool {
	switch {
	case !authorized:
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "We could not parse the JSON body of your request.")
	case model == "":
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_model", "You must provide a model parameter.")
	default:
		return false
	}
	return true
}

// next returns the answer to a chat (or a Responses request read as
// one): the next queued reply, else the script's, else DefaultReply; and
// the request's number, for IDs.
func (s *Server) next(req ChatCompletionRequest) (Reply, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := fmt.Sprint(s.seq)
	if s.down != nil {
		return *s.down, n
	}
	if len(s.chatQueue) > 0 {
		reply := s.chatQueue[0]
		s.chatQueue = s.chatQueue[1:]
		return reply, n
	}
	if f := s.chatScript; f != nil {
		s.mu.Unlock()
		defer s.mu.Lock()
		return f(req), n
	}
	return DefaultReply(req), n
}

// stream writes the answer as server-sent events: a role chunk, one chunk
// per word, the tool calls (each a chunk with its name, then two with
// parts of its arguments), a finish chunk, an optional usage chunk and
// [DONE]. Reply.ChunkDelay paces the chunks; a client that goes away ends
// the stream.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, id, model string, reply Reply, finish string, withUsage bool, usage *Usage) {
	flusher := startStream(w)
	first := true
	send := func(c ChatCompletionChunk) bool {
		if !first && !s.pause(r, reply.ChunkDelay) {
			return false
		}
		first = false
		c.ID, c.Object, c.Created, c.Model = id, "chat.completion.chunk", created, model
		b, _ := json.Marshal(c)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	delta := func(d ChunkDelta) bool { return send(ChatCompletionChunk{Choices: []ChunkChoice{{Delta: d}}}) }
	if !reply.NoChoices {
		if !delta(ChunkDelta{Role: "assistant"}) {
			return
		}
		for _, part := range strings.SplitAfter(reply.Content, " ") {
			if part != "" && !delta(ChunkDelta{Content: part}) {
				return
			}
		}
		for i, tc := range reply.ToolCalls {
			args := tc.Function.Arguments
			half := len(args) / 2
			if !delta(ChunkDelta{ToolCalls: []ChunkToolCall{{Index: i, ID: tc.ID, Type: cmp.Or(tc.Type, "function"), Function: FunctionCall{Name: tc.Function.Name}}}}) ||
				!delta(ChunkDelta{ToolCalls: []ChunkToolCall{{Index: i, Function: FunctionCall{Arguments: args[:half]}}}}) ||
				!delta(ChunkDelta{ToolCalls: []ChunkToolCall{{Index: i, Function: FunctionCall{Arguments: args[half:]}}}}) {
				return
			}
		}
		if !send(ChatCompletionChunk{Choices: []ChunkChoice{{FinishReason: &finish}}}) {
			return
		}
	}
	if withUsage && !send(ChatCompletionChunk{Choices: []ChunkChoice{}, Usage: usage}) {
		return
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	var req EmbeddingRequest
	var decodeErr error
	s.record(r, func(body []byte, rec *Request) {
		if decodeErr = json.Unmarshal(body, &req); decodeErr == nil {
			req.Deployment = r.PathValue("deployment")
			rec.Embedding = &req
		}
	})
	switch {
	case !s.authorized(r):
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
		return
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "We could not parse the JSON body of your request.")
		return
	case req.Model == "":
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_model", "You must provide a model parameter.")
		return
	case len(req.Input) == 0:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_input", "'$.input' is invalid.")
		return
	}
	for _, in := range req.Input {
		if in == "" {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_input", "'$.input' is invalid.")
			return
		}
	}

	s.mu.Lock()
	var reply Reply
	if s.down != nil {
		reply = *s.down
	} else if len(s.embedQueue) > 0 {
		reply, s.embedQueue = s.embedQueue[0], s.embedQueue[1:]
	} else if f := s.embedScript; f != nil {
		s.mu.Unlock()
		reply = f(req)
		s.mu.Lock()
	}
	dim := cmp.Or(req.Dimensions, s.dim)
	s.mu.Unlock()

	if s.fault(w, r, reply) {
		return
	}
	resp := EmbeddingList{Object: "list", Model: cmp.Or(reply.Model, req.Model), Data: []Embedding{}}
	words := 0
	for i, in := range req.Input {
		words += len(strings.Fields(in))
		var v []float32
		if i < len(reply.Vectors) {
			v = reply.Vectors[i]
		} else if reply.Vectors == nil {
			v = Vector(in, dim)
		} else {
			break // a scripted short answer: fewer vectors than inputs
		}
		var enc any = v
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			enc = base64.StdEncoding.EncodeToString(buf)
		}
		resp.Data = append(resp.Data, Embedding{Object: "embedding", Index: i, Embedding: enc})
	}
	resp.Usage = Usage{PromptTokens: words, TotalTokens: words}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	writeJSON(w, http.StatusOK, ModelList{Object: "list", Data: []Model{model("fake-chat"), model("fake-embedding")}})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	writeJSON(w, http.StatusOK, model(r.PathValue("model")))
}

func model(id string) Model {
	return Model{ID: id, Object: "model", Created: created, OwnedBy: "llmtest"}
}

// fault applies the fault fields of reply and reports whether it answered
// the request.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, reply Reply) bool {
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return true
		case <-s.done:
			return true
		}
	}
	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return true
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	status := cmp.Or(reply.Status, http.StatusOK)
	if reply.Body != "" {
		w.Header().Set("Content-Type", cmp.Or(reply.ContentType, "application/json"))
		w.WriteHeader(status)
		io.WriteString(w, reply.Body)
		return true
	}
	if status == http.StatusOK {
		return false
	}
	typ, code := "server_error", "server_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case status == http.StatusUnauthorized:
		typ, code = "invalid_request_error", "invalid_api_key"
	case status < 500:
		typ, code = "invalid_request_error", "invalid_request"
	}
	writeError(w, status, typ, code, fmt.Sprintf("Scripted failure: %d %s.", status, http.StatusText(status)))
	return true
}

func writeError(w http.ResponseWriter, status int, typ, code, message string) {
	writeJSON(w, status, ErrorBody{Error: ErrorDetail{Message: message, Type: typ, Code: &code}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func promptWords(msgs []ChatMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(strings.Fields(m.Content))
	}
	return n
}
