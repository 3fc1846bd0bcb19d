package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/internal/testutil"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/google/go-cmp/cmp"
)

// The fuzz targets of this file feed arbitrary input to the real handler
// over a real SQLite store and check what the API promises for any input:
// never a 5xx (nor a panic, which recoverPanics would turn into a 500), a
// 4xx in the JSON error shape, a 2xx with a JSON body, and what a 2xx
// stored can be read back. Run one with, for example,
//
//	go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 90s -fuzzminimizetime 0 -parallel 1 ./httpapi
//
// -fuzzminimizetime 0 because SQLite's instrumented code makes most inputs
// that reach the store new coverage, and minimising each of them would
// take most of the time. (A bare "context deadline exceeded" failure at
// the end of -fuzztime, with no input written, is Go 1.26's
// golang.org/issue/75804, not a finding.) Inputs that once failed are kept
// in testdata/fuzz/<FuzzName>/.

// fuzzServer is the handler and store shared by every input of a fuzz
// target: opening SQLite per input would leave little time to fuzz. Inputs
// that write use a user of their own (newUser), so that an input's answer
// does not depend on the inputs before it.
type fuzzServer struct {
	store   agentmem.Store
	handler http.Handler
	logs    *lockedBuffer // what the handler logged for the current input
	users   atomic.Int64
}

func newFuzzServer(f *testing.F) *fuzzServer {
	f.Helper()
	store := testutil.MustOpenSQLite(f)
	logs := &lockedBuffer{}
	// Warn and above: the handler logs a 5xx at Error and its request at
	// Warn, which is what a failure report needs; Debug would slow fuzzing.
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &fuzzServer{store: store, handler: httpapi.NewHandler(log, core.New(store, core.Options{Log: log}), httpapi.Options{}), logs: logs}
}

// newUser returns a user ID that no other input of this process uses.
func (s *fuzzServer) newUser(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, s.users.Add(1))
}

// mustImport stores x for user directly in the store.
func (s *fuzzServer) mustImport(tb testing.TB, user string, x *agentmem.ThreadExport) {
	tb.Helper()
	if _, err := s.store.ImportThread(context.Background(), user, x); err != nil {
		tb.Fatalf("import for %s: %v", user, err)
	}
}

// fuzzResponse is an answer of the handler.
type fuzzResponse struct {
	method, target string
	status         int
	aborted        bool // the handler aborted the response (http.ErrAbortHandler)
	header         http.Header
	body           []byte
}

func (r *fuzzResponse) String() string {
	return fmt.Sprintf("%s %.300s: status %d, body %.2000s", r.method, r.target, r.status, r.body)
}

// serve sends a request through the handler in process (no network, which
// keeps inputs fast). The query is set raw, after parsing the path, so
// that it may hold anything.
func (s *fuzzServer) serve(method, path, rawQuery string, body []byte) *fuzzResponse {
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(method, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	r.URL.RawQuery = rawQuery
	r.Host = "localhost" // httptest's example.com is no loopback name: refused without authentication
	w := httptest.NewRecorder()
	aborted := false
	func() {
		// An http.Server turns this panic into a dropped connection; the
		// check below reports it.
		defer func() {
			if v := recover(); v == http.ErrAbortHandler {
				aborted = true
			} else if v != nil {
				panic(v)
			}
		}()
		s.handler.ServeHTTP(w, r)
	}()
	target := path
	if rawQuery != "" {
		target += "?" + rawQuery
	}
	return &fuzzResponse{method: method, target: target, status: w.Code, aborted: aborted, header: w.Header(), body: w.Body.Bytes()}
}

// check fails tb unless resp keeps the API's promises for any input: a 2xx
// with a JSON body (or a Markdown export, or an empty 204), or a 4xx with
// the body {"error":{"code","message"}} and a message; never a 5xx.
func (s *fuzzServer) check(tb testing.TB, resp *fuzzResponse) {
	tb.Helper()
	switch {
	case resp.aborted:
		tb.Fatalf("%s; the response was aborted\nlogs:\n%s", resp, s.logs)
	case resp.status >= 500:
		tb.Fatalf("%s; want no 5xx for client input\nlogs:\n%s", resp, s.logs)
	case resp.status == http.StatusNoContent:
		if len(resp.body) != 0 {
			tb.Fatalf("%s; want an empty body with 204", resp)
		}
	case resp.status >= 200 && resp.status < 300:
		switch ct := resp.header.Get("Content-Type"); {
		case ct == "application/json":
			if !json.Valid(resp.body) {
				tb.Fatalf("%s; want a JSON body", resp)
			}
		case strings.HasPrefix(ct, "text/markdown"):
			if !utf8.Valid(resp.body) {
				tb.Fatalf("%s; want UTF-8 Markdown", resp)
			}
		default:
			tb.Fatalf("%s; Content-Type=%q, want application/json", resp, ct)
		}
	case resp.status >= 400 && resp.status < 500:
		if ct := resp.header.Get("Content-Type"); ct != "application/json" {
			tb.Fatalf("%s; Content-Type=%q, want application/json", resp, ct)
		}
		var e struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		dec := json.NewDecoder(bytes.NewReader(resp.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" {
			tb.Fatalf(`%s; want {"error":{"code","message"}} with a code and a message (decode: %v)`, resp, err)
		}
	default:
		tb.Fatalf("%s; want a 2xx or a 4xx", resp)
	}
}

// mustGet gets path and wants 200 (and a body that passes check).
func (s *fuzzServer) mustGet(tb testing.TB, path, rawQuery string) *fuzzResponse {
	tb.Helper()
	resp := s.serve("GET", path, rawQuery, nil)
	s.check(tb, resp)
	if resp.status != http.StatusOK {
		tb.Fatalf("%s; want 200\nlogs:\n%s", resp, s.logs)
	}
	return resp
}

// checkReadable reads back everything stored for user through the API, as
// a client would after a write that succeeded: whatever the API accepted
// it must be able to answer.
func (s *fuzzServer) checkReadable(tb testing.TB, user string) {
	tb.Helper()
	u := "/v1/users/" + pathID(user)
	threads := MustDecode[list[agentmem.Thread]](tb, s.mustGet(tb, u+"/threads", "limit=1000").body)
	for _, t := range threads.Data {
		path := u + "/threads/" + pathID(t.ID)
		s.mustGet(tb, path, "")
		s.mustGet(tb, path+"/messages", "limit=1000")
		s.mustGet(tb, path+"/messages", "limit=1000&order=desc")
		s.mustGet(tb, path+"/elements", "limit=1000")
		s.mustGet(tb, path+"/export", "")
		s.mustGet(tb, path+"/export", "format=markdown")
	}
	s.mustGet(tb, u+"/export", "")
}

// pathID returns id as one segment of a URL path. "." and ".." are valid
// IDs that a path can only carry escaped (the handler refuses them as
// plain segments).
func pathID(id string) string {
	if id == "." || id == ".." {
		return strings.Repeat("%2E", len(id))
	}
	return url.PathEscape(id)
}

// lockedBuffer is a bytes.Buffer safe for the handler's logger.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fuzzThread returns the thread that routes needing one find: t1 of agent
// a1 with message m1.
func fuzzThread() *agentmem.ThreadExport {
	return &agentmem.ThreadExport{
		Thread:   &agentmem.Thread{ID: "t1", AgentID: "a1", Title: "Fuzz"},
		Messages: []*agentmem.Message{{ID: "m1", Role: agentmem.RoleUser, Content: "hello"}},
	}
}

// decodeRoutes are the routes whose request body is JSON. {user} is
// replaced by a user of the input's own; the others find fuzzThread's
// thread t1 and message m1 when needsThread.
var decodeRoutes = []struct {
	method, path string
	needsThread  bool
}{
	{"POST", "/v1/users/{user}/threads/t1/messages", true},
	{"POST", "/v1/users/{user}/threads", false},
	{"PATCH", "/v1/users/{user}/threads/t1", true},
	{"POST", "/v1/users/{user}/threads/t1/elements", true},
	{"PUT", "/v1/users/{user}/agents/a1/session", true},
	{"POST", "/v1/users/{user}/threads/import", false},
}

// decodeSeeds are bodies worth trying on every route: the edge cases of
// decode.
var decodeSeeds = []string{
	"",
	"   \r\n\t",
	"null",
	"true",
	"42",
	`"{}"`,
	"[]",
	`[{"title":"x"}]`,
	"{}",
	"{",
	`{"title":"x"`,
	`{"title":"x",}`,
	"{}{}",
	"{} trailing",
	`{"unknown":1}`,
	`{"title":"a","title":"b"}`,
	"\xef\xbb\xbf{}", // a byte order mark
	"{\"title\":\"a\x00b\"}",
	`{"title":"a\u0000b"}`,
	"{\"title\":\"\xff\xfe\"}",
	"{\"ti\xfftle\":1}",
	`{"title":"\ud800"}`,
	`{"title":1e400}`,
	`{"title":99999999999999999999999}`,
	`{"title":{"nested":{"deeper":[[[[{}]]]]}}}`,
	`{"metadata":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"metadata":{"a":{"b":{"c":[1,2,{"d":null}]}}}}`,
	`{"metadata":{"k":"v","k":"w"}}`,
	`{"metadata":{"n":1e999999}}`,
	`{"metadata":"not an object"}`,
	`{"metadata":null}`,
	`{"tags":"x"}`,
	`{"tags":[null]}`,
	`{"messages":{}}`,
	`{"messages":[[]]}`,
	`{"messages":null}`,
	`{"thread":[]}`,
	`{"thread_id":["t1"]}`,
}

// FuzzDecode sends arbitrary bodies to the routes that decode a JSON body.
func FuzzDecode(f *testing.F) {
	valid := map[int][]string{
		0: {
			`{"messages":[{"role":"user","content":"hi"}]}`,
			`{"messages":[{"id":"c1","role":"assistant","content":"","tool_calls":[{"id":"call1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"id":"c2","role":"tool","tool_call_id":"call1","content":"ok","name":"f"}]}`,
			`{"messages":[{"role":"user","content":"x","metadata":{"k":[1,2]},"created_at":"2024-05-01T12:00:00.123456789+02:00"}]}`,
			`{"messages":[{"role":"user","content":"x","created_at":"9999-12-31T23:59:59-01:00"}]}`,
			`{"messages":[{"role":"user","content":"x","created_at":"0001-01-01T00:30:00+01:00"}]}`,
			`{"messages":[{"role":"user","content":"x","seq":-1,"token_count":99999999999,"thread_id":"t1"}]}`,
			`{"messages":[{"role":"user","content":"x","thread_id":"other"}]}`,
			`{"messages":[{"id":"m1","role":"user","content":"hello"}]}`,
			`{"messages":[{"id":"d","role":"user","content":"a"},{"id":"d","role":"user","content":"b"}]}`,
			`{"messages":[null]}`,
			`{"messages":[]}`,
			`{"messages":[{"role":"robot","content":"x"}]}`,
			`{"messages":[{"role":"tool","content":"x"}]}`,
			`{"messages":[{"role":"user","content":"x","created_at":"yesterday"}]}`,
			`{"messages":[{"role":"user","content":"x","created_at":12}]}`,
		},
		1: {
			`{"id":"x","agent_id":"a","title":"t","metadata":{"k":1},"tags":["a"," a ","b"]}`,
			`{"id":"..","title":"dots"}`,
			`{"id":"."}`,
			`{"id":"a/b"}`,
			`{"id":"a%2Fb?c#d"}`,
			`{"id":"` + strings.Repeat("x", 201) + `"}`,
			`{"title":"` + strings.Repeat("é", 501) + `"}`,
			`{"tags":[""]}`,
			`{"user_id":"someone"}`,
		},
		2: {
			`{"title":"new","status":"ended","tags":[],"metadata":null,"agent_id":""}`,
			`{"status":"active"}`,
			`{"status":"open"}`,
			`{"title":null}`,
			`{"metadata":{"k":"v"}}`,
			`{"agent_id":"a b"}`,
		},
		3: {
			`{"type":"citation","name":"n","content":"c","url":"http://x","mime_type":"text/plain","display":"inline","message_id":"m1","metadata":{}}`,
			`{"name":"n"}`,
			`{"message_id":"missing"}`,
			`{"id":"e1","thread_id":"t1","created_at":"2020-01-01T00:00:00Z"}`,
			`{"thread_id":"other"}`,
			`{"created_at":"9999-12-31T23:59:59-01:00"}`,
		},
		4: {
			`{"thread_id":"t1"}`,
			`{"thread_id":"missing"}`,
			`{"thread_id":""}`,
			`{"thread_id":null}`,
		},
		5: {
			`{"version":1,"thread":{"id":"imp","title":"Imported","status":"ended","tags":["x"]},"messages":[{"id":"i1","role":"user","content":"a"},{"role":"assistant","content":"b"}],"elements":[{"id":"ie","message_id":"i1","name":"n"}]}`,
			`{"thread":{}}`,
			`{"thread":null}`,
			`{"version":2,"thread":{}}`,
			`{"version":-1,"thread":{}}`,
			`{"thread":{"user_id":"someone-else"}}`,
			`{"thread":{"created_at":"9999-12-31T23:59:59-01:00"}}`,
			`{"thread":{"status":"ended","ended_at":"0001-01-01T00:00:00+00:01"}}`,
			`{"thread":{},"messages":[{"role":"user","content":"a","seq":5},{"role":"user","content":"b","seq":2}]}`,
			`{"thread":{},"elements":[{"message_id":"nowhere"}]}`,
			`{"thread":{},"elements":[null]}`,
		},
	}
	for route := range decodeRoutes {
		for _, body := range valid[route] {
			f.Add(uint8(route), []byte(body))
		}
		for _, body := range decodeSeeds {
			f.Add(uint8(route), []byte(body))
		}
	}

	srv := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		srv.logs.Reset()
		rt := decodeRoutes[int(route)%len(decodeRoutes)]
		user := srv.newUser("decode")
		if rt.needsThread {
			srv.mustImport(t, user, fuzzThread())
		}
		resp := srv.serve(rt.method, strings.Replace(rt.path, "{user}", user, 1), "", body)
		srv.check(t, resp)
		if resp.status >= 300 {
			return
		}
		srv.checkReadable(t, user)
		if rt.method == "PUT" {
			srv.mustGet(t, "/v1/users/"+user+"/agents/a1/session", "")
		}
	})
}

// The user whose data FuzzQuery reads: threads of agents a1 and a2, one
// without an agent, one ended, one deleted, and thread t1 with
// queryMessages messages and three elements, so that every list has pages.
const (
	queryUser     = "reader"
	queryMessages = 7
)

// queryRoutes are the routes that read query parameters. {user} is
// queryUser, except for the routes marked fresh, which write: they get a
// user of the input's own, with fuzzThread's thread. The user export reads
// none (and fails for queryUser, whose deleted thread it cannot read; see
// TestHandler_ExportUser/SoftDeletedThread).
var queryRoutes = []struct {
	method, path string
	fresh        bool
}{
	{"GET", "/v1/users/{user}/threads", false},
	{"GET", "/v1/users/{user}/threads/t1/messages", false},
	{"GET", "/v1/users/{user}/threads/t1/elements", false},
	{"GET", "/v1/users/{user}/threads/t1/export", false},
	{"GET", "/v1/users/{user}/agents/a1/session", true},
	{"DELETE", "/v1/users/{user}/threads/t1", true},
}

func seedQueryUser(tb testing.TB, s agentmem.Store) {
	tb.Helper()
	ctx := context.Background()
	x := &agentmem.ThreadExport{Thread: &agentmem.Thread{ID: "t1", AgentID: "a1", Title: "Paged"}}
	for i := range queryMessages {
		x.Messages = append(x.Messages, &agentmem.Message{ID: fmt.Sprintf("m%d", i+1), Role: agentmem.RoleUser, Content: fmt.Sprintf("message %d", i+1)})
	}
	for i, msg := range []string{"", "m1", "m2"} {
		x.Elements = append(x.Elements, &agentmem.Element{ID: fmt.Sprintf("e%d", i+1), MessageID: msg, Name: "element"})
	}
	if _, err := s.ImportThread(ctx, queryUser, x); err != nil {
		tb.Fatalf("import: %v", err)
	}
	for i, agent := range []string{"a1", "a2", "a2", ""} {
		MustCreateThread(tb, s, &agentmem.Thread{UserID: queryUser, ID: fmt.Sprintf("t%d", i+2), AgentID: agent})
	}
	if _, err := s.EndThread(ctx, queryUser, "t3"); err != nil {
		tb.Fatalf("end thread: %v", err)
	}
	if err := s.DeleteThread(ctx, queryUser, "t4", false); err != nil {
		tb.Fatalf("delete thread: %v", err)
	}
}

// FuzzQuery sends arbitrary query strings to the routes that read query
// parameters. When a list answers with a next cursor, the cursor must
// work too.
func FuzzQuery(f *testing.F) {
	threads := agentmem.ListOf(agentmem.ListThreads, queryUser)
	asc := agentmem.ListOf(agentmem.ListMessages, queryUser, "t1")
	desc := agentmem.ListOf(agentmem.ListMessagesDesc, queryUser, "t1")
	elements := agentmem.ListOf(agentmem.ListElements, queryUser, "t1")
	seeds := map[int][]string{
		0: {"limit=2", "tag=a&tag=b", "tag=", "since=2024-01-01T00:00:00Z", "until=notatime", "since=9999-12-31T23:59:59.9999999Z", "bogus=1", "limit=0", "limit=1000", "limit=1001", "limit=-1", "limit=1e3", "limit=99999999999999999999", "limit=%20", "limit=1&limit=x",
			"agent_id=a1", "agent_id=", "agent_id=a%20b", "agent_id=%FF", "status=active", "status=ended", "status=open", "status=",
			"cursor=" + agentmem.EncodeCursor(threads, agentmem.ThreadCursor{UpdatedAt: 1 << 62, ID: "zz"}),
			"cursor=" + agentmem.EncodeCursor(threads, agentmem.ThreadCursor{UpdatedAt: -1 << 63, ID: "\x00"}),
			"cursor=" + agentmem.EncodeCursor(asc, agentmem.SeqCursor{Seq: 3}),
			"cursor=" + agentmem.EncodeCursor(threads, nil), "cursor=!!!", "cursor=e30", "cursor=%00", "cursor=&cursor=x"},
		1: {"limit=3", "limit=3&order=desc", "order=asc", "order=DESC", "order=", "after_seq=2", "before_seq=5", "after_seq=5&before_seq=2",
			"after_seq=-1", "before_seq=9223372036854775807", "after_seq=9223372036854775808", "after_seq=0x10",
			"cursor=" + agentmem.EncodeCursor(desc, agentmem.SeqCursor{Seq: 4}) + "&order=desc",
			"cursor=" + agentmem.EncodeCursor(desc, agentmem.SeqCursor{Seq: -5}) + "&order=desc",
			"cursor=" + agentmem.EncodeCursor(asc, agentmem.SeqCursor{Seq: 1<<63 - 1}),
			"cursor=" + agentmem.EncodeCursor(asc, map[string]any{"s": 1.5}),
			"cursor=" + agentmem.EncodeCursor(asc, map[string]any{"s": "1"}),
			"cursor=" + agentmem.EncodeCursor(threads, agentmem.ThreadCursor{ID: "t1"}), "cursor=" + agentmem.EncodeCursor(desc, agentmem.SeqCursor{Seq: 2}),
			"limit=1;order=desc", "%zz=1", "&&&", "=", "tag=x", "limit=1&limit=2"},
		2: {"limit=1", "message_id=m1", "message_id=", "message_id=a/b",
			"cursor=" + agentmem.EncodeCursor(elements, agentmem.TimeIDCursor{Time: 0, ID: "e1"}),
			"cursor=" + agentmem.EncodeCursor(elements, agentmem.TimeIDCursor{Time: 1 << 62}),
			"cursor=" + agentmem.EncodeCursor(elements, []int{1})},
		3: {"format=json", "format=markdown", "format=pdf", "format=", "format=markdown&format=json"},
		4: {"create=true", "create=1", "create=false", "create=0", "create=", "create", "create=yes", "create=TRUE"},
		5: {"permanent=true", "permanent=false", "permanent=", "permanent=maybe", "permanent=1&permanent=0"},
	}
	for route := range queryRoutes {
		for _, q := range seeds[route] {
			f.Add(uint8(route), q)
		}
	}

	srv := newFuzzServer(f)
	seedQueryUser(f, srv.store)
	f.Fuzz(func(t *testing.T, route uint8, query string) {
		srv.logs.Reset()
		rt := queryRoutes[int(route)%len(queryRoutes)]
		user := queryUser
		if rt.fresh {
			user = srv.newUser("query")
			srv.mustImport(t, user, fuzzThread())
		}
		path := strings.Replace(rt.path, "{user}", user, 1)
		resp := srv.serve(rt.method, path, query, nil)
		srv.check(t, resp)
		if resp.status != http.StatusOK || rt.method != "GET" {
			return
		}
		// Follow a next cursor, keeping the other parameters.
		var page struct {
			NextCursor *string `json:"next_cursor"`
		}
		if json.Unmarshal(resp.body, &page) != nil || page.NextCursor == nil || *page.NextCursor == "" {
			return
		}
		q, _ := url.ParseQuery(query)
		if q == nil {
			q = url.Values{}
		}
		q.Set("cursor", *page.NextCursor)
		srv.mustGet(t, path, q.Encode())
	})
}

// FuzzImport imports arbitrary JSON, and an export built from arbitrary
// IDs, text and times (which byte mutations of JSON rarely keep valid). An
// export accepted with 201 must survive the round trip: see checkImport.
func FuzzImport(f *testing.F) {
	for _, body := range []string{
		`{"version":1,"thread":{"id":"t","title":"Imported","agent_id":"a","status":"ended","metadata":{"k":[1,{"x":null}]},"tags":["a","b"],` +
			`"created_at":"2024-01-02T03:04:05.123456Z","updated_at":"2024-01-03T00:00:00Z","ended_at":"2024-01-03T00:00:00Z"},` +
			`"messages":[{"id":"m1","role":"system","content":"Be brief."},{"id":"m2","role":"user","content":"Weather?","created_at":"2024-01-02T03:04:06Z"},` +
			`{"id":"m3","role":"assistant","content":"","tool_calls":[{"id":"c1","function":{"name":"weather","arguments":"{}"}}]},` +
			`{"id":"m4","role":"tool","tool_call_id":"c1","name":"weather","content":"sunny","metadata":{"src":"api"}}],` +
			`"elements":[{"id":"e1","message_id":"m4","type":"citation","name":"forecast","url":"https://example.com","display":"side"},{"name":"thread note"}]}`,
		`{"thread":{}}`,
		`{"thread":{},"messages":[{"role":"user","content":""}]}`,
		`{"thread":{"id":".."},"messages":[{"id":".","role":"user","content":"dots"}]}`,
		`{"thread":{"id":"%2E%2E?#"},"messages":[{"id":"a%b","role":"user","content":"escapes"}]}`,
		`{"thread":{"id":"日本"},"messages":[{"role":"user","content":"日本語 🎌 \u2028 \ud83c\udf8c"}]}`,
		`{"thread":{},"messages":[{"role":"user","content":"\ud800 lone surrogate"}]}`,
		`{"thread":{},"messages":[{"role":"user","content":"a\u0000b"}]}`,
		`{"thread":{},"messages":[{"role":"user","content":"\t\r\n  spaced  "}]}`,
		`{"thread":{"created_at":"9999-12-31T23:59:59-01:00"}}`,
		`{"thread":{"created_at":"0001-01-01T00:30:00+01:00"}}`,
		`{"thread":{},"messages":[{"role":"user","content":"x","created_at":"9999-12-31T23:59:59.999999999-00:01"}]}`,
		`{"thread":{"status":"ended"}}`,
		`{"thread":{"status":"active","ended_at":"2024-01-01T00:00:00Z","deleted_at":"2024-01-01T00:00:00Z"}}`,
		`{"thread":{"message_count":99,"last_seq":-4},"messages":[{"role":"user","content":"a","seq":10,"token_count":-1}]}`,
		`{"thread":{},"messages":[{"role":"user","content":"a","seq":3},{"role":"user","content":"b"},{"role":"user","content":"c","seq":1}]}`,
		`{"thread":{},"messages":[{"id":"same","role":"user","content":"a"},{"id":"same","role":"user","content":"b"}]}`,
		`{"thread":{},"elements":[{"id":"e","name":"a"},{"id":"e","name":"b"}]}`,
		`{"thread":{},"messages":[{"id":"m","role":"user","content":"a","thread_id":"elsewhere"}],"elements":[{"message_id":"m","thread_id":"elsewhere"}]}`,
		`{"thread":{"metadata":{"a":1,"a":2}},"messages":[{"role":"user","content":"x","metadata":{"n":1e400}}]}`,
		`{"thread":{"tags":[" x","x ","x"]}}`,
		`{"thread":{},"messages":null,"elements":null}`,
		`{"thread":{},"version":1,"version":0}`,
		`{"thread":{}} {"thread":{}}`,
		`null`,
		`[]`,
	} {
		f.Add([]byte(body), "id", "content", int64(1700000000123456), int16(0))
	}
	for _, built := range []struct {
		id, content string
		micros      int64
		zone        int16 // minutes east of UTC
	}{
		{"", "", 0, 0},
		{"..", "dots", -1, 60},
		{"%2E?#&=+", "a\u2028b \U0001F30D é", 1, -1},
		{"日本", "\xed\xa0\x80 \xff", 253402300799999999, 0}, // invalid UTF-8; the last microsecond of 9999
		{"x", "y", 253402300800000000, -60},                // year 10000 in UTC, 9999 where written
		{"x", "y", -62135596800000001, 60},                 // year 0 in UTC, 1 where written
		{"x", "y", -62135596800000000, 0},                  // time.Time's zero: unset
		{"x", "y", -62135596799999999, -1439},
		{"x", strings.Repeat("long ", 200), 1 << 62, 0},
		{"x", "nul \x00", 0, 1439},
	} {
		f.Add([]byte(`{"thread":{}}`), built.id, built.content, built.micros, built.zone)
	}

	srv := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, id, content string, micros int64, zone int16) {
		srv.logs.Reset()
		srv.checkImport(t, body)

		at := time.UnixMicro(micros).In(time.FixedZone("", int(zone)*60))
		x := &agentmem.ThreadExport{
			Version:  agentmem.ExportVersion,
			Thread:   &agentmem.Thread{ID: id, Status: agentmem.ThreadEnded, CreatedAt: at, UpdatedAt: at, EndedAt: &at},
			Messages: []*agentmem.Message{{ID: id, Role: agentmem.RoleUser, Content: content, Name: content, CreatedAt: at}, {Role: agentmem.RoleAssistant, Content: content}},
			Elements: []*agentmem.Element{{ID: id, MessageID: id, Name: content, Content: content, CreatedAt: at}},
		}
		if utf8.RuneCountInString(content) <= agentmem.MaxTitleRunes {
			x.Thread.Title = content
		}
		built, err := json.Marshal(x)
		if err != nil {
			return // a time that JSON cannot carry
		}
		srv.checkImport(t, built)
	})
}

// checkImport imports body for a new user. When the import answers 201,
// the stored messages must be the given ones in the given order (roles,
// content, and IDs where given), the export must show the thread the import
// answered, and importing that export under another user must reproduce it
// exactly (but for the user).
func (s *fuzzServer) checkImport(t *testing.T, body []byte) {
	t.Helper()
	userA, userB := s.newUser("import-a"), s.newUser("import-b")
	resp := s.serve("POST", "/v1/users/"+userA+"/threads/import", "", body)
	s.check(t, resp)
	if resp.status != http.StatusCreated {
		return
	}
	imported := MustDecode[agentmem.Thread](t, resp.body)
	// The JSON export below reads what the other routes read; checkReadable
	// would make this target too slow to fuzz.
	s.mustGet(t, "/v1/users/"+userA+"/threads/"+pathID(imported.ID)+"/export", "format=markdown")

	var in agentmem.ThreadExport
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatalf("the handler accepted %q, which encoding/json rejects: %v", body, err)
	}
	exportA := s.mustGet(t, "/v1/users/"+userA+"/threads/"+pathID(imported.ID)+"/export", "")
	xa := MustDecode[agentmem.ThreadExport](t, exportA.body)
	if len(xa.Messages) != len(in.Messages) {
		t.Fatalf("exported %d messages, imported %d", len(xa.Messages), len(in.Messages))
	}
	for i, m := range in.Messages {
		got := xa.Messages[i]
		if got.Role != m.Role || got.Content != m.Content || (m.ID != "" && got.ID != m.ID) || got.Seq != int64(i+1) {
			t.Fatalf("messages[%d] = {id %q, seq %d, role %q, content %q}, imported {id %q, role %q, content %q}",
				i, got.ID, got.Seq, got.Role, got.Content, m.ID, m.Role, m.Content)
		}
	}
	if diff := cmp.Diff(xa.Thread, &imported); diff != "" {
		t.Fatalf("exported thread differs from the import's answer (-export +import):\n%s", diff)
	}

	resp = s.serve("POST", "/v1/users/"+userB+"/threads/import", "", exportA.body)
	s.check(t, resp)
	if resp.status != http.StatusCreated {
		t.Fatalf("re-import of the export: %s\nlogs:\n%s", resp, s.logs)
	}
	exportB := s.mustGet(t, "/v1/users/"+userB+"/threads/"+pathID(imported.ID)+"/export", "")
	xb := MustDecode[agentmem.ThreadExport](t, exportB.body)
	xa.Thread.UserID = userB
	if diff := cmp.Diff(xa, xb); diff != "" {
		t.Fatalf("re-imported export differs (-first +second):\n%s", diff)
	}
}
