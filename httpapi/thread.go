package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// handleListThreads lists the user's threads, newest updated first. Query:
// agent_id (present but empty: threads without an agent), status, limit,
// cursor.
func handleListThreads(log *slog.Logger, threads agentmem.ThreadStore) http.Handler {
	type response struct {
		Data       []*agentmem.Thread `json:"data"`
		NextCursor string             `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		q := r.URL.Query()
		f := agentmem.ThreadFilter{Cursor: q.Get("cursor")}
		if err == nil && q.Has("agent_id") {
			agent := q.Get("agent_id")
			if agent != "" {
				err = agentmem.ValidateID("agent_id", agent)
			}
			f.AgentID = &agent
		}
		if status := q.Get("status"); err == nil && status != "" {
			if status != agentmem.ThreadActive && status != agentmem.ThreadEnded {
				err = agentmem.Errorf(agentmem.EINVALID, "status must be %q or %q, not %q.", agentmem.ThreadActive, agentmem.ThreadEnded, status)
			}
			f.Status = &status
		}
		var limit int64
		if err == nil {
			limit, err = queryInt(q, "limit")
			f.Limit = int(min(limit, agentmem.MaxPageSize+1)) // the store rejects what is above the maximum
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = threads.FindThreads(r.Context(), p.user, f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if resp.Data == nil {
			resp.Data = []*agentmem.Thread{}
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}

// handleCreateThread creates a thread of the user of the path; a user_id
// in the body is an unknown field.
func handleCreateThread(log *slog.Logger, threads agentmem.ThreadStore) http.Handler {
	type request struct {
		ID       string          `json:"id"`
		AgentID  string          `json:"agent_id"`
		Title    string          `json:"title"`
		Metadata json.RawMessage `json:"metadata"`
		Tags     []string        `json:"tags"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req request
		if err == nil {
			req, err = decode[request](r)
		}
		t := &agentmem.Thread{UserID: p.user, ID: req.ID, AgentID: req.AgentID, Title: req.Title, Metadata: req.Metadata, Tags: req.Tags}
		if err == nil {
			err = threads.CreateThread(r.Context(), t)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusCreated, t)
	})
}

// handleGetThread returns one thread.
func handleGetThread(log *slog.Logger, threads agentmem.ThreadStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var t *agentmem.Thread
		if err == nil {
			t, err = threads.FindThreadByID(r.Context(), p.user, p.thread)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, t)
	})
}

// handleUpdateThread applies an agentmem.ThreadUpdate: absent or null
// fields stay as they are.
func handleUpdateThread(log *slog.Logger, threads agentmem.ThreadStore, ix *extract.Indexer, rf *extract.Reflector) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var upd agentmem.ThreadUpdate
		if err == nil {
			upd, err = decode[agentmem.ThreadUpdate](r)
		}
		var t *agentmem.Thread
		if err == nil {
			t, err = threads.UpdateThread(r.Context(), p.user, p.thread, upd)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if upd.Status != nil && t.Status == agentmem.ThreadEnded {
			afterEnd(r, log, ix, rf, t)
		}
		encode(w, r, log, http.StatusOK, t)
	})
}

// handleDeleteThread soft-deletes a thread, or removes it for good with
// ?permanent=true.
func handleDeleteThread(log *slog.Logger, threads interface {
	agentmem.ThreadStore
	agentmem.AuditStore
}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var permanent bool
		if err == nil {
			permanent, err = queryBool(r.URL.Query(), "permanent")
		}
		if err == nil {
			err = threads.DeleteThread(r.Context(), p.user, p.thread, permanent)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if permanent {
			recordAudit(r, log, threads, agentmem.AuditThreadErase, p.user, p.thread, nil)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleEndThread marks a thread ended.
func handleEndThread(log *slog.Logger, threads agentmem.ThreadStore, ix *extract.Indexer, rf *extract.Reflector) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var t *agentmem.Thread
		if err == nil {
			t, err = threads.EndThread(r.Context(), p.user, p.thread)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		afterEnd(r, log, ix, rf, t)
		encode(w, r, log, http.StatusOK, t)
	})
}

// afterEnd asks for the jobs of an ended thread: an index job, which
// writes its last turns into a chunk (see extract.Indexer), and its
// reflection (summary, topics, insights; see extract.Reflector). The
// thread has ended whatever happens: a failure to enqueue is logged, not
// answered.
func afterEnd(r *http.Request, log *slog.Logger, ix *extract.Indexer, rf *extract.Reflector, t *agentmem.Thread) {
	if t.LastSeq == 0 {
		return
	}
	if err := ix.Enqueue(r.Context(), t.UserID, t.ID, t.LastSeq, t.LastSeq); err != nil {
		log.WarnContext(r.Context(), "ended thread: index job not enqueued", "thread", t.ID, "err", err)
	}
	if rf == nil {
		return
	}
	if err := rf.Enqueue(r.Context(), t.UserID, t.ID); err != nil {
		log.WarnContext(r.Context(), "ended thread: reflection not enqueued", "thread", t.ID, "err", err)
	}
}
