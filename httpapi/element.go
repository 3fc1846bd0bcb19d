package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// handleListElements lists a thread's elements in creation order. Query:
// message_id, limit, cursor.
func handleListElements(log *slog.Logger, elements agentmem.ElementStore) http.Handler {
	type response struct {
		Data       []*agentmem.Element `json:"data"`
		NextCursor string              `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		q := r.URL.Query()
		f := agentmem.ElementFilter{Cursor: q.Get("cursor")}
		if msg := q.Get("message_id"); err == nil && msg != "" {
			err = agentmem.ValidateID("message_id", msg)
			f.MessageID = &msg
		}
		if err == nil {
			var limit int64
			limit, err = queryInt(q, "limit")
			f.Limit = int(min(limit, agentmem.MaxPageSize+1)) // the store rejects what is above the maximum
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = elements.FindElements(r.Context(), p.user, p.thread, f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if resp.Data == nil {
			resp.Data = []*agentmem.Element{}
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}

// handleCreateElement attaches an element to the thread (and to its
// message_id when set) and answers 201 with it. As with messages, the body
// has the shape the API returns: thread_id must be empty or name the
// thread of the path.
func handleCreateElement(log *slog.Logger, elements agentmem.ElementStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var e agentmem.Element
		if err == nil {
			e, err = decode[agentmem.Element](r)
		}
		if err == nil && e.ThreadID != "" && e.ThreadID != p.thread {
			err = agentmem.Errorf(agentmem.EINVALID, "thread_id %q is not the thread of the path.", e.ThreadID)
		}
		if err == nil {
			err = elements.CreateElement(r.Context(), p.user, p.thread, &e)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusCreated, &e)
	})
}
