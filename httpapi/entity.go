package httpapi

import (
	"log/slog"
	"net/http"
	"net/url"
	"reflect"

	"github.com/agentmem/agentmem"
)

// maxEntityQuery bounds ?q= of GET …/entities.
const maxEntityQuery = 1000

// handleListEntities lists the user's entities; ?q= resolves a name or an
// alias (the entity of that name first, then those with that alias).
// Query: q, type, limit, cursor.
func handleListEntities(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handleQuery(log, []string{"q", "type", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := agentmem.EntityFilter{Cursor: q.Get("cursor")}
		if q.Has("q") {
			if f.Keys, err = entityQuery(q.Get("q")); err != nil {
				return err
			}
		}
		if q.Has("type") {
			v := q.Get("type")
			f.Type = &v
		}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindEntities(r.Context(), p.user, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Entity]())
}

// entityQuery returns the name keys ?q= asks for.
func entityQuery(q string) ([]string, error) {
	if len(q) > maxEntityQuery {
		return nil, agentmem.Errorf(agentmem.EINVALID, "q is longer than %d bytes.", maxEntityQuery)
	}
	if err := agentmem.ValidateText("q", q); err != nil {
		return nil, err
	}
	keys := agentmem.QueryKeys(q)
	if len(keys) == 0 {
		return nil, agentmem.Errorf(agentmem.EINVALID, "q must contain a letter or a digit.")
	}
	return keys, nil
}

// queryLimit returns ?limit=, capped just above the largest page so that
// the store names the limit in its error.
func queryLimit(q url.Values) (int, error) {
	limit, err := queryInt(q, "limit")
	return int(min(limit, agentmem.MaxPageSize+1)), err
}

// handlePutEntity creates an entity or merges it into the user's entity of
// the same name (an agentmem.EntityInput), recording the reference of
// thread_id when given, and answers with the entity.
func handlePutEntity(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		in, err := decode[agentmem.EntityInput](r)
		if err != nil {
			return err
		}
		e, err := svc.PutEntity(r.Context(), p.user, in)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, e)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.EntityInput]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Entity]())
}

// handleGetEntity returns one entity.
func handleGetEntity(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		e, err := svc.FindEntityByID(r.Context(), p.user, r.PathValue("entity"))
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, e)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Entity]())
}

// handleUpdateEntity applies an agentmem.EntityUpdate (a rename keeps the
// old name as an alias).
func handleUpdateEntity(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		upd, err := decode[agentmem.EntityUpdate](r)
		if err != nil {
			return err
		}
		e, err := svc.UpdateEntity(r.Context(), p.user, r.PathValue("entity"), upd)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, e)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.EntityUpdate]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Entity]())
}

// handleDeleteEntity deletes an entity and its references.
func handleDeleteEntity(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		if err := svc.DeleteEntity(r.Context(), p.user, r.PathValue("entity")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}).writes(http.StatusNoContent, nil)
}

// handleListEntityRefs lists references newest first: an entity's threads
// (…/entities/{entity}/threads) or a thread's entities
// (…/threads/{thread}/entities). Query: action, limit, cursor.
func handleListEntityRefs(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handleQuery(log, []string{"action", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := agentmem.EntityRefFilter{Cursor: q.Get("cursor"), ThreadID: p.thread}
		if id := r.PathValue("entity"); id != "" || p.thread == "" {
			if err := agentmem.ValidateID("entity_id", id); err != nil {
				return err
			}
			f.EntityID = id
		}
		if q.Has("action") {
			v := q.Get("action")
			f.Action = &v
		}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindEntityRefs(r.Context(), p.user, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.EntityRef]())
}
