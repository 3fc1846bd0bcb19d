package httpapi_test

import (
	"testing"

	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
)

// TestHandler_ImportStatuses: an import whose file is at fault is a 400
// naming the record and the field (a version out of range, a record that
// points at nothing, one record twice with different contents), never a
// 404, 409 or 500; 409 is a clash with what the user has, with
// on_conflict=fail; an identical repeat is imported once and counted as a
// duplicate.
func TestHandler_ImportStatuses(t *testing.T) {
	store := testutil.MustOpenSQLite(t)
	seed(t, store)
	srv := MustServe(t, store, httpapi.Options{})
	const thread = `{"thread":{"id":"t"},"messages":[{"id":"a","role":"user","content":"hi"}]`
	runScenarios(t, srv.URL, []scenario{
		// Item 7: ranges.
		{name: "NotesVersionMax", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"notes":[{"agent_id":"bot","version":9223372036854775807,"content":"x"}]}`,
			wantStatus: 400, wantBody: `notes[0].version must be between 1 and 1073741824, not 9223372036854775807.`},
		{name: "MemoryVersionMax", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"memories":[{"text":"x","version":9223372036854775807}]}`,
			wantStatus: 400, wantBody: `memories[0].version must be between 1 and`},
		{name: "ProfileVersionMax", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"profiles":[{"version":2147483648,"text":"x","method":"llm"}]}`,
			wantStatus: 400, wantBody: `profiles[0].version must be between 1 and`},
		{name: "HistoryVersionTwice", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"memories":[{"text":"x","version":1,"history":[{"version":1,"op":"add","text":"x"},{"version":1,"op":"update","text":"x"}]}]}`,
			wantStatus: 400, wantBody: `memories[0].history[1].version 1 is not after`},
		{name: "NotesOperation", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"notes":[{"agent_id":"bot","version":1,"operation":"shred","content":"x"}]}`,
			wantStatus: 400, wantBody: `notes[0].operation`},

		// Item 8: records that point at nothing, and the file's faults.
		{name: "ReflectionOfNoThread", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"reflections":[{"thread_id":"ghost","status":"processed"}]}`,
			wantStatus: 400, wantBody: `reflections[0].thread_id \"ghost\" names no thread of the export or of the user.`},
		{name: "SupersededByNoMemory", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"memories":[{"id":"m","text":"x","invalid_at":"2026-01-01T00:00:00Z","superseded_by":"ghost"}]}`,
			wantStatus: 400, wantBody: `memories[0].superseded_by \"ghost\" names no memory`},
		{name: "MemoryOfNoThread", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"memories":[{"text":"x","thread_id":"ghost","seq_from":1,"seq_to":1}]}`,
			wantStatus: 400, wantBody: `memories[0].thread_id \"ghost\"`},
		{name: "ElementOfNoMessage", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"threads":[` + thread + `,"elements":[{"message_id":"ghost","name":"n"}]}]}`,
			wantStatus: 400, wantBody: `threads[0]: elements[0].message_id \"ghost\" names no message of the thread.`},
		{name: "ThreadImportElementOfNoMessage", method: "POST", url: "/v1/users/imp/threads/import", body: `{"version":2,` + thread[1:] + `,"elements":[{"message_id":"ghost","name":"n"}]}`,
			wantStatus: 400, wantBody: `elements[0].message_id \"ghost\"`},
		{name: "MessageInTwoThreads", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"threads":[` + thread + `},{"thread":{"id":"u"},"messages":[{"id":"a","role":"user","content":"ho"}]}]}`,
			wantStatus: 400, wantBody: `threads[1].messages[0].id \"a\" is also the ID of a message of threads[0].`},
		{name: "MemoryTwice", method: "POST", url: "/v1/users/imp/import", body: `{"version":2,"memories":[{"id":"m","text":"x"},{"id":"m","text":"y"}]}`,
			wantStatus: 400, wantBody: `memories[1].id \"m\" is also that of memories[0], with other contents`},
		{name: "NothingImported", method: "GET", url: "/v1/users/imp/memories?include_invalid=true", wantStatus: 200, wantBody: `{"data":[],`},

		// An identical repeat is a duplicate.
		{name: "Duplicates", method: "POST", url: "/v1/users/imp2/import", body: `{"version":2,"memories":[{"id":"m","text":"x"},{"id":"m","text":"x"}],"threads":[` + thread + `},` + thread + `}]}`,
			wantStatus: 200, wantBody: `"imported":{"threads":1,"messages":1,"sessions":0,"notes":0,"memories":1,"profiles":0,"entities":0,"reflections":0},` +
				`"skipped":{"threads":0,"messages":0,"sessions":0,"notes":0,"memories":0,"profiles":0,"entities":0,"reflections":0},` +
				`"replaced":{"threads":0,"messages":0,"sessions":0,"notes":0,"memories":0,"profiles":0,"entities":0,"reflections":0},` +
				`"duplicates":{"threads":1,"messages":1,"sessions":0,"notes":0,"memories":1,"profiles":0,"entities":0,"reflections":0}`},

		// A clash with what the user has: 409 with fail, handled with skip.
		{name: "ClashThread", method: "POST", url: "/v1/users/alice/import", body: `{"version":2,"threads":[{"thread":{"id":"t1"}}]}`,
			wantStatus: 409, wantBody: `thread \"t1\"`},
		{name: "ClashElement", method: "POST", url: "/v1/users/alice/import", body: `{"version":2,"threads":[{"thread":{"id":"new"},"elements":[{"id":"e1","name":"n"}]}]}`,
			wantStatus: 409, wantBody: `thread \"new\"`},
		{name: "ClashElementSkip", method: "POST", url: "/v1/users/alice/import?on_conflict=skip", body: `{"version":2,"threads":[{"thread":{"id":"new"},"elements":[{"id":"e1","name":"n"}]}]}`,
			wantStatus: 200, wantBody: `"skipped":{"threads":1`},
	})
}
