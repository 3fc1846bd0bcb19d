package httpapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

// wantThreads checks that a list of threads holds the threads ids, in any
// order.
func wantThreads(ids ...string) func(*testing.T, *http.Response, []byte) {
	return func(t *testing.T, _ *http.Response, body []byte) {
		t.Helper()
		var got []string
		for _, th := range decodeJSON[struct{ Data []agentmem.Thread }](t, body).Data {
			got = append(got, th.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, ids) {
			t.Fatalf("threads %q, want %q: %s", got, ids, body)
		}
	}
}

// TestHandler_ThreadTitleSearch: GET …/threads?q= lists the threads whose
// title contains q in any case, % and _ taken literally, with the other
// filters; 400 names a bad q; another user's threads are not searched.
func TestHandler_ThreadTitleSearch(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		alice, _ := mustKey(t, s, "user:alice", time.Now(), 0)
		bob, _ := mustKey(t, s, "user:bob", time.Now(), 0)
		for id, title := range map[string]string{"trip": "Trip to Lisbon", "notes": "lisbon NOTES", "pct": "100% sure_thing", "words": "100 percent sure thing"} {
			MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: id, Title: title})
		}
		MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "bobs", Title: "Lisbon"})
		srv := MustServe(t, s, httpapi.Options{Auth: httpapi.Auth{Mode: httpapi.AuthAPIKey}})
		u := "/v1/users/alice/threads?q="
		runScenarios(t, srv.URL, []scenario{
			{name: "AnyCase", method: "GET", url: u + "LISBON", header: bearerHeader(alice), wantStatus: 200, check: wantThreads("notes", "trip")},
			{name: "Percent", method: "GET", url: u + url.QueryEscape("100%"), header: bearerHeader(alice), wantStatus: 200, check: wantThreads("pct")},
			{name: "Underscore", method: "GET", url: u + "e_t", header: bearerHeader(alice), wantStatus: 200, check: wantThreads("pct")},
			{name: "Empty", method: "GET", url: u, header: bearerHeader(alice), wantStatus: 200, check: wantThreads("notes", "pct", "trip", "words")},
			{name: "WithPaging", method: "GET", url: u + "lisbon&limit=1", header: bearerHeader(alice), wantStatus: 200,
				check: func(t *testing.T, _ *http.Response, body []byte) {
					if p := decodeJSON[struct {
						Data       []agentmem.Thread
						NextCursor string `json:"next_cursor"`
					}](t, body); len(p.Data) != 1 || p.NextCursor == "" {
						t.Fatalf("page of 1: %s", body)
					}
				}},
			{name: "OwnThreadsOnly", method: "GET", url: "/v1/users/bob/threads?q=lisbon", header: bearerHeader(bob), wantStatus: 200, check: wantThreads("bobs")},
			{name: "OtherUser", method: "GET", url: u + "lisbon", header: bearerHeader(bob), wantStatus: 404},
			{name: "TooLong", method: "GET", url: u + strings.Repeat("a", agentmem.MaxTitleRunes+1), header: bearerHeader(alice), wantStatus: 400,
				wantBody: `q is longer than 500 characters`},
			{name: "NUL", method: "GET", url: u + "a%00b", header: bearerHeader(alice), wantStatus: 400, wantBody: `q may not contain NUL characters.`},
			{name: "Twice", method: "GET", url: u + "a&q=b", header: bearerHeader(alice), wantStatus: 400, wantBody: `Query parameter \"q\" is given 2 times`},
		})
	})
}
