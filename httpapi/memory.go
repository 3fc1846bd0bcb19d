package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleCreateMemory stores a memory given by the client (an
// agentmem.MemoryInput) and answers 201 with it; it is embedded so that
// vector search finds it.
func handleCreateMemory(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		in, err := decode[agentmem.MemoryInput](r)
		if err != nil {
			return err
		}
		m, err := svc.CreateMemory(r.Context(), p.user, in)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusCreated, m)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.MemoryInput]()).
		writes(http.StatusCreated, reflect.TypeFor[agentmem.Memory]())
}

// handleListMemories lists the user's memories, newest updated first. Query: kind,
// category, agent_id, thread_id, include_invalid, processed, limit, cursor.
func handleListMemories(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handleQuery(log, []string{"kind", "category", "agent_id", "thread_id", "include_invalid", "processed", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := agentmem.MemoryFilter{Cursor: q.Get("cursor")}
		for name, ptr := range map[string]**string{"kind": &f.Kind, "category": &f.Category, "agent_id": &f.AgentID, "thread_id": &f.ThreadID} {
			if q.Has(name) {
				v := q.Get(name)
				*ptr = &v
			}
		}
		if f.IncludeInvalid, err = queryBool(q, "include_invalid"); err != nil {
			return err
		}
		if q.Has("processed") {
			processed, err := queryBool(q, "processed")
			if err != nil {
				return err
			}
			f.Processed = &processed
		}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindMemories(r.Context(), p.user, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Memory]())
}

// handleGetMemory returns one memory.
func handleGetMemory(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		m, err := svc.FindMemoryByID(r.Context(), p.user, r.PathValue("memory"))
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, m)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Memory]())
}

// handleUpdateMemory applies an agentmem.MemoryUpdate: a new version.
func handleUpdateMemory(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		upd, err := decode[agentmem.MemoryUpdate](r)
		if err != nil {
			return err
		}
		m, err := svc.UpdateMemory(r.Context(), p.user, r.PathValue("memory"), upd)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, m)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.MemoryUpdate]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Memory]())
}

// handleDeleteMemory deletes a memory and its history.
func handleDeleteMemory(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		if err := svc.DeleteMemory(r.Context(), p.user, r.PathValue("memory")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}).writes(http.StatusNoContent, nil)
}

// handleInvalidateMemory marks a memory as no longer holding: the body,
// optional, is an agentmem.MemoryInvalidation ({"superseded_by",
// "reason"}); 200 with the memory. An invalidated memory is answered as
// it is.
func handleInvalidateMemory(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		var inv agentmem.MemoryInvalidation
		if r.ContentLength != 0 {
			if inv, err = decode[agentmem.MemoryInvalidation](r); err != nil {
				return err
			}
		}
		m, err := svc.InvalidateMemory(r.Context(), p.user, r.PathValue("memory"), inv)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, m)
		return nil
	}).
		readsOptional(reflect.TypeFor[agentmem.MemoryInvalidation]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Memory]())
}

// handleMemoryHistory lists the changes of a memory.
func handleMemoryHistory(log *slog.Logger, svc agentmem.MemoryService) http.Handler {
	type response struct {
		Data []*agentmem.MemoryChange `json:"data"`
	}
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		data, err := svc.FindMemoryHistory(r.Context(), p.user, r.PathValue("memory"))
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, response{data})
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[response]())
}
