package httpapi

import (
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmem/agentmem"
)

// maxEntityQuery bounds the q of an entity lookup, in bytes.
const maxEntityQuery = 1000

// entityPath reads the {user} and {entity} of the path.
func entityPath(r *http.Request) (user, id string, err error) {
	p, err := readPath(r)
	if err != nil {
		return "", "", err
	}
	id = r.PathValue("entity")
	return p.user, id, agentmem.ValidateID("entity_id", id)
}

// handleListEntities lists the user's entities, newest updated first; q
// resolves a name or alias instead (see agentmem.QueryKeys): the entity
// of that name first, then those with that alias. Query: q, type, limit,
// cursor.
func handleListEntities(log *slog.Logger, entities agentmem.EntityStore) http.Handler {
	type response struct {
		Data       []*agentmem.Entity `json:"data"`
		NextCursor string             `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		q := r.URL.Query()
		f := agentmem.EntityFilter{Cursor: q.Get("cursor")}
		if err == nil && q.Has("q") {
			f.Keys, err = entityQuery(q.Get("q"))
		}
		if q.Has("type") {
			v := q.Get("type")
			f.Type = &v
		}
		if err == nil {
			f.Limit, err = queryLimit(q)
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = entities.FindEntities(r.Context(), p.user, f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}

// entityQuery returns the keys that q looks up.
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

// queryLimit reads the limit of a list (0 when absent).
func queryLimit(q url.Values) (int, error) {
	limit, err := queryInt(q, "limit")
	return int(min(limit, agentmem.MaxPageSize+1)), err
}

// handlePutEntity sets an entity through the API: it creates the user's
// entity of that name, or merges into it (a type given replaces its type,
// aliases are added; see agentmem.EntityStore.PutEntities), and answers
// with the entity as stored. With thread_id it also records that the
// thread refers to it (action: created, modified or discussed, the
// default; seq and at optional), as seed 004's agent does after a tool
// created or changed a workflow.
func handlePutEntity(log *slog.Logger, store interface {
	agentmem.ThreadStore
	agentmem.EntityStore
}) http.Handler {
	type request struct {
		ID       string    `json:"id"`
		Name     string    `json:"name"`
		Type     string    `json:"type"`
		Aliases  []string  `json:"aliases"`
		ThreadID string    `json:"thread_id"`
		Action   string    `json:"action"`
		Seq      int64     `json:"seq"`
		At       time.Time `json:"at"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req request
		if err == nil {
			req, err = decode[request](r)
		}
		e := &agentmem.Entity{UserID: p.user, ID: req.ID, Name: req.Name, Type: req.Type, Aliases: req.Aliases}
		var ref *agentmem.EntityRef
		if err == nil {
			err = e.Validate()
		}
		if err == nil && req.ThreadID != "" {
			// The reference is checked before the entity is written: a
			// bad reference writes nothing.
			ref = &agentmem.EntityRef{ThreadID: req.ThreadID, Action: req.Action, Seq: req.Seq, At: req.At}
			check := *ref
			check.EntityID = "pending" // the entity's ID is known once it is put
			if err = check.Validate(time.Now()); err == nil {
				_, err = store.FindThreadByID(r.Context(), p.user, req.ThreadID)
			}
		} else if err == nil && (req.Action != "" || req.Seq != 0 || !req.At.IsZero()) {
			err = agentmem.Errorf(agentmem.EINVALID, "action, seq and at describe a reference: they need thread_id.")
		}
		if err == nil {
			err = store.PutEntities(r.Context(), p.user, []*agentmem.Entity{e})
		}
		if err == nil && ref != nil {
			ref.EntityID = e.ID
			err = store.PutEntityRefs(r.Context(), p.user, []*agentmem.EntityRef{ref})
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, e)
	})
}

func handleGetEntity(log *slog.Logger, entities agentmem.EntityStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, id, err := entityPath(r)
		var e *agentmem.Entity
		if err == nil {
			e, err = entities.FindEntityByID(r.Context(), user, id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, e)
	})
}

// handleUpdateEntity renames an entity, changes its type or replaces its
// aliases (see agentmem.Entity.ApplyUpdate).
func handleUpdateEntity(log *slog.Logger, entities agentmem.EntityStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, id, err := entityPath(r)
		var upd agentmem.EntityUpdate
		if err == nil {
			upd, err = decode[agentmem.EntityUpdate](r)
		}
		var e *agentmem.Entity
		if err == nil {
			e, err = entities.UpdateEntity(r.Context(), user, id, upd)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, e)
	})
}

// handleDeleteEntity removes an entity with its references.
func handleDeleteEntity(log *slog.Logger, entities agentmem.EntityStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, id, err := entityPath(r)
		if err == nil {
			err = entities.DeleteEntity(r.Context(), user, id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleListEntityRefs lists the references of an entity (the threads
// that mention it) or of a thread (the entities it mentions, each with
// its entity), newest first. Query: action, limit, cursor.
func handleListEntityRefs(log *slog.Logger, entities agentmem.EntityStore) http.Handler {
	type response struct {
		Data       []*agentmem.EntityRef `json:"data"`
		NextCursor string                `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var (
			f    agentmem.EntityRefFilter
			user string
			err  error
		)
		if r.PathValue("entity") != "" {
			user, f.EntityID, err = entityPath(r)
		} else {
			var p pathIDs
			p, err = readPath(r)
			user, f.ThreadID = p.user, p.thread
		}
		q := r.URL.Query()
		f.Cursor = q.Get("cursor")
		if q.Has("action") {
			v := q.Get("action")
			f.Action = &v
		}
		if err == nil {
			f.Limit, err = queryLimit(q)
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = entities.FindEntityRefs(r.Context(), user, f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}
