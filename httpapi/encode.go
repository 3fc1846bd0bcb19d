package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/httpx"
)

// encode writes v as the JSON response with the given status. It marshals
// before writing, so that a value that cannot be encoded (metadata that is
// not JSON, read from a damaged database) becomes a logged 500 rather than
// a half-written body; hence the logger.
func encode(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, r, log, fmt.Errorf("encode response: %w", err))
		return
	}
	writeJSON(w, status, append(b, '\n'))
}

// encodeSelf is encode for a value that marshals itself with json.Marshal
// (agentmem.Context): its bytes, compact and HTML-escaped as encode's
// would be, are written as they are. json.Marshal of such a value checks
// and compacts them again, which costs twice the marshalling itself (the
// messages of a 30,000-token context: 0.9 of 1.5 ms).
func encodeSelf(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, v json.Marshaler) {
	b, err := v.MarshalJSON()
	if err != nil {
		writeError(w, r, log, fmt.Errorf("encode response: %w", err))
		return
	}
	// The newline written after, not appended: b is exactly as long as
	// the JSON, and appending would copy it whole.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write(newline)
}

var newline = []byte{'\n'}

// encodeList writes a page of a list, {"data":[…],"next_cursor":"…"}
// (data [] rather than null when empty), with 200.
func encodeList[T any](w http.ResponseWriter, r *http.Request, log *slog.Logger, data []T, next string) error {
	if data == nil {
		data = []T{}
	}
	encode(w, r, log, http.StatusOK, page[T]{data, next})
	return nil
}

// page is a page of a list as encodeList writes it: its items, and the
// cursor of the next page ("" on the last).
type page[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
}

// schemaName names the document's schema of a page after its items:
// ThreadPage.
func (page[T]) schemaName() string { return derefType(reflect.TypeFor[T]()).Name() + "Page" }

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body) // a failed write means the client left; nothing to tell it
}

// retryAfterUnavailable is the Retry-After of a 503, in seconds.
const retryAfterUnavailable = "1"

// statusClientClosedRequest is nginx's status for a request whose client
// went away before the answer; nobody reads it, but logs and metrics then
// do not count the disconnect as a server error.
const statusClientClosedRequest = 499

// writeError answers with err as {"error":{"code","message"}}: the status
// follows agentmem.ErrorCode(err) and the message is
// agentmem.ErrorMessage(err), so internal text never reaches the client;
// a 503 (EUNAVAILABLE: the database or the model is down or busy) says
// when to retry in Retry-After.
// This is where a failed request's error is logged, at Error and only for
// 5xx; client errors are the client's business.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := agentmem.ErrorCode(err)
	msg := agentmem.ErrorMessage(err)
	status := httpx.StatusOf(code)
	if code == agentmem.EINTERNAL && r.Context().Err() != nil {
		if errors.Is(r.Context().Err(), context.Canceled) {
			log.DebugContext(r.Context(), "client went away", agentmem.LogMethod, r.Method, agentmem.LogRoute, routeLabel(r.Pattern), "request_id", requestID(r.Context()), agentmem.LogErr, err)
			w.WriteHeader(statusClientClosedRequest)
			return
		}
		code, msg, status = agentmem.EUNAVAILABLE, "The request timed out.", http.StatusServiceUnavailable
	}
	if status == http.StatusServiceUnavailable {
		// A dependency is down or busy: the request failed fast and did
		// nothing, so it may be sent again (an append with its
		// Idempotency-Key) once the outage, usually seconds, is over.
		w.Header().Set("Retry-After", retryAfterUnavailable)
	}
	if status >= 500 {
		log.ErrorContext(r.Context(), "request failed", agentmem.LogMethod, r.Method, agentmem.LogRoute, routeLabel(r.Pattern), "request_id", requestID(r.Context()),
			"status", status, "code", code, agentmem.LogErr, err)
	}
	writeErrorBody(w, r, status, code, msg)
}

// writeErrorBody answers an error as {"error":{"code","message"}}, or in
// OpenAI's shape to a request of the proxy's (OpenAIPrefix).
func writeErrorBody(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	if isOpenAI(r) {
		httpx.NewOpenAIError(status, code, message).Write(w)
		return
	}
	b, _ := json.Marshal(errorBody{errorDetail{code, message}}) // strings only: cannot fail
	writeJSON(w, status, append(b, '\n'))
}

// errorBody is the body of every error the API answers.
type errorBody struct {
	Error errorDetail `json:"error"`
}

func (errorBody) schemaName() string { return "Error" }

// errorDetail is an error: its code (agentmem.ErrorCode), which decides
// the status (StatusOf), and its message for people.
type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (errorDetail) schemaName() string { return "ErrorDetail" }

// decode reads the request body, one JSON object, into a new T. Every
// request body of this API is an object, so anything else is rejected, as
// are unknown fields, a wrong JSON type, invalid UTF-8 (which
// encoding/json would otherwise turn silently into U+FFFD), trailing data
// and an empty body. Errors are EINVALID naming the field or the position,
// or ETOOLARGE naming the limit; never internal.
func decode[T any](r *http.Request) (T, error) {
	var v T
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			return v, agentmem.Errorf(agentmem.ETOOLARGE, "The request body is larger than the limit of %d bytes.", tooLarge.Limit)
		}
		return v, agentmem.Errorf(agentmem.EINVALID, "The request body could not be read.")
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return v, agentmem.Errorf(agentmem.EINVALID, "A request body is required: a JSON object.")
	case !utf8.Valid(body):
		return v, invalidUTF8(body)
	case trimmed[0] != '{':
		return v, agentmem.Errorf(agentmem.EINVALID, "The request body must be a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, decodeError(body, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, agentmem.Errorf(agentmem.EINVALID, "The request body has data after the JSON object, at %s.", position(body, dec.InputOffset()))
	}
	if i := loneSurrogate(body); i >= 0 {
		escape := body[i : i+6]
		if path := pathAt(body, int64(i)); path != "" {
			return v, agentmem.Errorf(agentmem.EINVALID, "%s has %s, half of a UTF-16 surrogate pair without its other half; it is not a character.", path, escape)
		}
		return v, agentmem.Errorf(agentmem.EINVALID, "The request body has %s, half of a UTF-16 surrogate pair without its other half, at %s.", escape, position(body, int64(i)))
	}
	return v, nil
}

// loneSurrogate returns the offset in body, valid JSON, of the first
// \u escape of a UTF-16 surrogate that is not half of a pair (a high
// surrogate D800–DBFF escaped right before a low one DC00–DFFF), or -1.
// encoding/json decodes such an escape to U+FFFD without a word, which
// would store text other than what the client sent.
func loneSurrogate(body []byte) int {
	if !bytes.Contains(body, []byte(`\u`)) {
		return -1
	}
	// surrogate returns the code of the \uXXXX escape at i if it is a
	// surrogate, else 0.
	surrogate := func(i int) uint64 {
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
			return 0
		}
		r, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		if err != nil || r < 0xD800 || r > 0xDFFF {
			return 0
		}
		return r
	}
	inString := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			r := surrogate(i)
			switch {
			case r == 0:
				i++ // the escaped byte, or the u of a \uXXXX of no surrogate, whose digits follow harmlessly
			case r <= 0xDBFF && surrogate(i+6) >= 0xDC00:
				i += 11 // a pair
			default:
				return i
			}
		}
	}
	return -1
}

// invalidUTF8 names the JSON value of body holding its first invalid UTF-8
// byte.
func invalidUTF8(body []byte) error {
	bad := 0
	for bad < len(body) {
		r, size := utf8.DecodeRune(body[bad:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		bad += size
	}
	if path := pathAt(body, int64(bad)); path != "" {
		return agentmem.Errorf(agentmem.EINVALID, "%s is not valid UTF-8.", path)
	}
	return agentmem.Errorf(agentmem.EINVALID, "The request body is not valid UTF-8 (at %s).", position(body, int64(bad)))
}

// decodeError turns an encoding/json error about body into a client error.
func decodeError(body []byte, err error) error {
	var (
		syntax    *json.SyntaxError
		typ       *json.UnmarshalTypeError
		parseTime *time.ParseError
	)
	switch {
	case errors.As(err, &syntax):
		return agentmem.Errorf(agentmem.EINVALID, "The request body is not valid JSON at %s: %s.", position(body, syntax.Offset-1), syntax.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return agentmem.Errorf(agentmem.EINVALID, "The request body ends before its JSON object is complete.")
	case errors.As(err, &typ):
		// Offset is where the offending value ends; its path names the
		// field with array indexes, which typ.Field lacks.
		field := pathAt(body, typ.Offset-1)
		if field == "" {
			field = typ.Field
		}
		return agentmem.Errorf(agentmem.EINVALID, "%s must be %s, not %s.", field, jsonKind(typ.Type), typ.Value)
	case errors.As(err, &parseTime):
		return agentmem.Errorf(agentmem.EINVALID, "The request body has a time %q that is not in RFC 3339 format.", parseTime.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json gives this error no type; its text names the key.
		return agentmem.Errorf(agentmem.EINVALID, "The request body has an unknown field %s.", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	// What remains are errors of UnmarshalJSON methods, such as a time
	// that is not a string. They describe the input only.
	return agentmem.Errorf(agentmem.EINVALID, "The request body has an invalid value: %s.", err.Error())
}

// jsonKind names the JSON type that decodes into t.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// position describes the byte of body at offset as a line and column,
// both counted from 1.
func position(body []byte, offset int64) string {
	offset = min(max(offset, 0), int64(len(body)))
	before := body[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := offset - int64(bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// pathAt returns the path, like messages[0].content, of the innermost JSON
// value (or object key) of body whose text covers byte offset; "" for the
// top-level value or when body cannot be tokenised that far.
func pathAt(body []byte, offset int64) string {
	type frame struct {
		array bool
		index int    // of the current element, in an array
		key   string // of the current member, in an object
		isKey bool   // in an object, the next string is a key
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for i, f := range stack {
			if f.array {
				fmt.Fprintf(&b, "[%d]", f.index)
			} else {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		start := dec.InputOffset() // separators before a token count as part of it
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		end := dec.InputOffset()
		covers := offset >= start && offset < end
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if covers {
				return path()
			}
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			switch {
			case !top.array && top.isKey:
				top.key, _ = tok.(string)
				top.isKey = false
				if covers {
					return path()
				}
				continue
			case top.array:
				top.index++
			default:
				top.isKey = true // after this value comes the next key
			}
		}
		if covers {
			return path()
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{array: d == '[', index: -1, isKey: d == '{'})
		}
	}
}

// checkQuery checks a raw query string against the parameters a route
// takes (see handleQuery): every parameter is one of params, given once
// unless its name there ends in "*", and every value is text (see
// agentmem.ValidateText). Errors are EINVALID naming the parameter and,
// for an unknown one, those the route takes.
func checkQuery(raw string, params []string) error {
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return agentmem.Errorf(agentmem.EINVALID, "The query string is malformed: %s.", err.Error())
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names) // the same answer every time for the same query
	for _, name := range names {
		i := slices.IndexFunc(params, func(p string) bool { return strings.TrimSuffix(p, "*") == name })
		switch {
		case i < 0 && len(params) == 0:
			return agentmem.Errorf(agentmem.EINVALID, "Unknown query parameter %q; this route takes no query parameters.", name)
		case i < 0:
			takes := make([]string, len(params))
			for i, p := range params {
				takes[i] = strings.TrimSuffix(p, "*")
			}
			return agentmem.Errorf(agentmem.EINVALID, "Unknown query parameter %q; this route accepts: %s.", name, strings.Join(takes, ", "))
		case len(q[name]) > 1 && !strings.HasSuffix(params[i], "*"):
			return agentmem.Errorf(agentmem.EINVALID, "Query parameter %q is given %d times; it takes one value.", name, len(q[name]))
		}
		for _, v := range q[name] {
			if err := agentmem.ValidateText(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// queryTime returns the RFC 3339 time of the query parameter name, nil
// when it is absent or empty.
func queryTime(q url.Values, name string) (*time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, agentmem.Errorf(agentmem.EINVALID, "%s must be an RFC 3339 time such as 2024-05-01T12:00:00Z, not %q.", name, s)
	}
	return &t, agentmem.ValidateTime(name, t)
}

// queryInt returns the non-negative integer query parameter name, 0 when
// it is absent or empty.
func queryInt(q url.Values, name string) (int64, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, agentmem.Errorf(agentmem.EINVALID, "%s must be a non-negative integer, not %q.", name, s)
	}
	return n, nil
}

// queryBool returns the boolean query parameter name: true or 1, false or
// 0, false when absent. Anything else is EINVALID rather than a guess.
func queryBool(q url.Values, name string) (bool, error) {
	if !q.Has(name) {
		return false, nil
	}
	switch s := q.Get(name); s {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	default:
		return false, agentmem.Errorf(agentmem.EINVALID, "%s must be true or false, not %q.", name, s)
	}
}

// pathIDs are the identifiers of a request's path.
type pathIDs struct {
	user, thread, agent string
}

// readPath returns the {user}, {thread} and {agent} values of the route
// that matched, the thread and agent checked with agentmem.ValidateID
// before any store call sees them. The user is the service's to resolve
// (see core.Service), as the caller names it.
func readPath(r *http.Request) (pathIDs, error) {
	p := pathIDs{user: r.PathValue("user"), thread: r.PathValue("thread"), agent: r.PathValue("agent")}
	for _, f := range []struct{ wildcard, field, v string }{
		{"{thread}", "thread_id", p.thread}, {"{agent}", "agent_id", p.agent},
	} {
		if !strings.Contains(r.Pattern, f.wildcard) {
			continue
		}
		if err := agentmem.ValidateID(f.field, f.v); err != nil {
			return p, err
		}
	}
	return p, nil
}
