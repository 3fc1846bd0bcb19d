package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
)

// handleGetNotes returns the notes of the user and agent: 200 with
// version 0 and empty content when none were written, never 404.
func handleGetNotes(log *slog.Logger, notes agentmem.NotesStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var n *agentmem.Notes
		if err == nil {
			n, err = notes.FindNotes(r.Context(), p.user, p.agent)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, n)
	})
}

// handlePutNotes overwrites the notes with {"content":…} ("" empties
// them) as their next version, if {"expected_version":…}, when given, is
// the current one (409 otherwise); 200 with the new version.
func handlePutNotes(log *slog.Logger, notes agentmem.NotesStore) http.Handler {
	type request struct {
		Content         *string `json:"content"`
		ExpectedVersion *int64  `json:"expected_version"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req request
		if err == nil {
			req, err = decode[request](r)
		}
		if err == nil && req.Content == nil {
			err = agentmem.Errorf(agentmem.EINVALID, `content is required ("" empties the notes).`)
		}
		var n *agentmem.Notes
		if err == nil {
			n, err = notes.PutNotes(r.Context(), p.user, p.agent, agentmem.NotesOp{
				Operation: agentmem.NotesOverwrite, Content: *req.Content, ExpectedVersion: req.ExpectedVersion})
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, n)
	})
}

// handleNotesOp applies one operation (agentmem.NotesOp: operation,
// content, section_header, expected_version) to the notes and answers 200
// with the notes afterwards; read (the default) writes nothing. A stale
// expected_version is 409, a section that is not there 422, notes that
// would grow beyond agentmem.MaxNotesBytes 413.
func handleNotesOp(log *slog.Logger, notes agentmem.NotesStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var op agentmem.NotesOp
		if err == nil {
			op, err = decode[agentmem.NotesOp](r)
		}
		if err == nil {
			err = op.Validate()
		}
		var n *agentmem.Notes
		if err == nil && op.Operation == agentmem.NotesRead {
			n, err = notes.FindNotes(r.Context(), p.user, p.agent)
		} else if err == nil {
			n, err = notes.PutNotes(r.Context(), p.user, p.agent, op)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, n)
	})
}

// handleNotesHistory lists every version of the notes, newest first.
// Query: limit, cursor.
func handleNotesHistory(log *slog.Logger, notes agentmem.NotesStore) http.Handler {
	type response struct {
		Data       []*agentmem.Notes `json:"data"`
		NextCursor string            `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		q := r.URL.Query()
		f := agentmem.NotesFilter{Cursor: q.Get("cursor")}
		var limit int64
		if err == nil {
			limit, err = queryInt(q, "limit")
			f.Limit = int(min(limit, agentmem.MaxPageSize+1)) // the store rejects what is above the maximum
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = notes.FindNotesHistory(r.Context(), p.user, p.agent, f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}
