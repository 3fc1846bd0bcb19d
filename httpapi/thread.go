package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleListThreads lists the user's threads, newest updated first. Query:
// agent_id (present but empty: threads without an agent), status,
// deleted (true: the soft-deleted threads only, which POST …/restore
// brings back; false, the default: the others), tag (repeatable: threads
// with every tag given; tags may hold commas, so a list is given by
// repeating the parameter), q (threads whose title contains it, in any
// case; % and _ are literal), since and until (RFC 3339 times bounding
// updated_at, the time the list is ordered by: since inclusive, until
// exclusive), limit, cursor.
func handleListThreads(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handleQuery(log, []string{"agent_id", "status", "deleted", "tag*", "q", "since", "until", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := agentmem.ThreadFilter{Cursor: q.Get("cursor")}
		if q.Has("agent_id") {
			agent := q.Get("agent_id")
			if agent != "" {
				if err := agentmem.ValidateID("agent_id", agent); err != nil {
					return err
				}
			}
			f.AgentID = &agent
		}
		if status := q.Get("status"); status != "" {
			if status != agentmem.ThreadActive && status != agentmem.ThreadEnded {
				return agentmem.Errorf(agentmem.EINVALID, "status must be %q or %q, not %q.", agentmem.ThreadActive, agentmem.ThreadEnded, status)
			}
			f.Status = &status
		}
		if f.Deleted, err = queryBool(q, "deleted"); err != nil {
			return err
		}
		f.Tags = q["tag"]
		if q.Has("q") {
			title := q.Get("q")
			f.Title = &title
		}
		if f.UpdatedSince, err = queryTime(q, "since"); err != nil {
			return err
		}
		if f.UpdatedBefore, err = queryTime(q, "until"); err != nil {
			return err
		}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindThreads(r.Context(), p.user, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Thread]())
}

// handleCreateThread creates a thread of the user of the path; a user_id
// in the body is an unknown field.
func handleCreateThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	type request struct {
		ID       string          `json:"id"`
		AgentID  string          `json:"agent_id"`
		Title    string          `json:"title"`
		Metadata json.RawMessage `json:"metadata"`
		Tags     []string        `json:"tags"`
	}
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		req, err := decode[request](r)
		if err != nil {
			return err
		}
		t := &agentmem.Thread{ID: req.ID, AgentID: req.AgentID, Title: req.Title, Metadata: req.Metadata, Tags: req.Tags}
		if err := svc.CreateThread(r.Context(), p.user, t); err != nil {
			return err
		}
		encode(w, r, log, http.StatusCreated, t)
		return nil
	}).
		reads(reflect.TypeFor[request]()).
		writes(http.StatusCreated, reflect.TypeFor[agentmem.Thread]())
}

// handleGetThread returns one thread.
func handleGetThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		t, err := svc.FindThreadByID(r.Context(), p.user, p.thread)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, t)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Thread]())
}

// handleUpdateThread applies an agentmem.ThreadUpdate: absent or null
// fields stay as they are.
func handleUpdateThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		upd, err := decode[agentmem.ThreadUpdate](r)
		if err != nil {
			return err
		}
		t, err := svc.UpdateThread(r.Context(), p.user, p.thread, upd)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, t)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.ThreadUpdate]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Thread]())
}

// handleDeleteThread soft-deletes a thread, or removes it for good with
// ?permanent=true.
func handleDeleteThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handleQuery(log, []string{"permanent"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		permanent, err := queryBool(r.URL.Query(), "permanent")
		if err != nil {
			return err
		}
		if err := svc.DeleteThread(r.Context(), p.user, p.thread, permanent); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}).writes(http.StatusNoContent, nil)
}

// handleRestoreThread brings back a soft-deleted thread and answers with
// it; a thread that is not deleted is answered as it is.
func handleRestoreThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		t, err := svc.RestoreThread(r.Context(), p.user, p.thread)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, t)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Thread]())
}

// handleEndThread ends a thread (idempotent).
func handleEndThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		t, err := svc.EndThread(r.Context(), p.user, p.thread)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, t)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Thread]())
}
