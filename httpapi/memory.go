package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// memoryPath reads the {user} and {memory} of the path.
func memoryPath(r *http.Request) (user, id string, err error) {
	p, err := readPath(r)
	if err != nil {
		return "", "", err
	}
	id = r.PathValue("memory")
	return p.user, id, agentmem.ValidateID("memory_id", id)
}

// handleCreateMemory stores a memory written by the client (no
// consolidation: the client says what is true) and makes it searchable.
func handleCreateMemory(log *slog.Logger, memories agentmem.MemoryStore, ix *extract.Indexer) http.Handler {
	type request struct {
		ID         string          `json:"id"`
		Kind       string          `json:"kind"`
		Text       string          `json:"text"`
		Category   string          `json:"category"`
		Confidence *float64        `json:"confidence"`
		Importance *float64        `json:"importance"`
		AgentID    string          `json:"agent_id"`
		ThreadID   string          `json:"thread_id"`
		SeqFrom    int64           `json:"seq_from"`
		SeqTo      int64           `json:"seq_to"`
		ValidFrom  time.Time       `json:"valid_from"`
		Metadata   json.RawMessage `json:"metadata"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req request
		if err == nil {
			req, err = decode[request](r)
		}
		m := &agentmem.Memory{UserID: p.user, ID: req.ID, Kind: req.Kind, Text: req.Text, Category: req.Category, Confidence: 1, Importance: 0.5,
			AgentID: req.AgentID, ThreadID: req.ThreadID, SeqFrom: req.SeqFrom, SeqTo: req.SeqTo, Source: agentmem.SourceAPI,
			ValidFrom: req.ValidFrom, Metadata: req.Metadata}
		if req.Confidence != nil {
			m.Confidence = *req.Confidence
		}
		if req.Importance != nil {
			m.Importance = *req.Importance
		}
		if err == nil {
			err = memories.CreateMemory(r.Context(), m)
		}
		if err == nil {
			err = ix.EmbedMemory(r.Context(), m)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusCreated, m)
	})
}

// handleListMemories lists the user's memories, newest updated first.
// Query: kind, category, agent_id, thread_id, include_invalid, limit,
// cursor.
func handleListMemories(log *slog.Logger, memories agentmem.MemoryStore) http.Handler {
	type response struct {
		Data       []*agentmem.Memory `json:"data"`
		NextCursor string             `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		q := r.URL.Query()
		f := agentmem.MemoryFilter{Cursor: q.Get("cursor")}
		for name, ptr := range map[string]**string{"kind": &f.Kind, "category": &f.Category, "agent_id": &f.AgentID, "thread_id": &f.ThreadID} {
			if q.Has(name) {
				v := q.Get(name)
				*ptr = &v
			}
		}
		if err == nil {
			f.IncludeInvalid, err = queryBool(q, "include_invalid")
		}
		if err == nil && q.Has("processed") {
			var processed bool
			processed, err = queryBool(q, "processed")
			f.Processed = &processed
		}
		var limit int64
		if err == nil {
			limit, err = queryInt(q, "limit")
			f.Limit = int(min(limit, agentmem.MaxPageSize+1))
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = memories.FindMemories(r.Context(), p.user, f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if resp.Data == nil {
			resp.Data = []*agentmem.Memory{}
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}

func handleGetMemory(log *slog.Logger, memories agentmem.MemoryStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, id, err := memoryPath(r)
		var m *agentmem.Memory
		if err == nil {
			m, err = memories.FindMemoryByID(r.Context(), user, id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, m)
	})
}

// handleUpdateMemory edits a memory: its next version, recorded in its
// history.
func handleUpdateMemory(log *slog.Logger, memories agentmem.MemoryStore, ix *extract.Indexer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, id, err := memoryPath(r)
		var upd agentmem.MemoryUpdate
		if err == nil {
			upd, err = decode[agentmem.MemoryUpdate](r)
		}
		var m *agentmem.Memory
		if err == nil {
			m, err = memories.UpdateMemory(r.Context(), user, id, upd)
		}
		if err == nil && upd.Text != nil {
			err = ix.EmbedMemory(r.Context(), m)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, m)
	})
}

// handleDeleteMemory removes a memory with its history and vectors.
func handleDeleteMemory(log *slog.Logger, memories agentmem.MemoryStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, id, err := memoryPath(r)
		if err == nil {
			err = memories.DeleteMemory(r.Context(), user, id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func handleMemoryHistory(log *slog.Logger, memories agentmem.MemoryStore) http.Handler {
	type response struct {
		Data []*agentmem.MemoryChange `json:"data"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, id, err := memoryPath(r)
		var resp response
		if err == nil {
			resp.Data, err = memories.FindMemoryHistory(r.Context(), user, id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}
