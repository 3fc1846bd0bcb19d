package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleGetNotes returns the agent's notes about the user (version 0 with
// no content when none were written).
func handleGetNotes(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		n, err := svc.FindNotes(r.Context(), p.user, p.agent)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, n)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Notes]())
}

// handlePutNotes overwrites the notes: {"content", "expected_version"}.
func handlePutNotes(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	type request struct {
		Content         *string `json:"content"`
		ExpectedVersion *int64  `json:"expected_version"`
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
		if req.Content == nil {
			return agentmem.Errorf(agentmem.EINVALID, `content is required ("" empties the notes).`)
		}
		n, err := svc.EditNotes(r.Context(), p.user, p.agent, agentmem.NotesOp{
			Operation: agentmem.NotesOverwrite, Content: *req.Content, ExpectedVersion: req.ExpectedVersion})
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, n)
		return nil
	}).
		reads(reflect.TypeFor[request](), "content").
		writes(http.StatusOK, reflect.TypeFor[agentmem.Notes]())
}

// handleNotesOp applies one of seed 003's operations (an agentmem.NotesOp;
// read when operation is empty) and answers with the notes.
func handleNotesOp(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		op, err := decode[agentmem.NotesOp](r)
		if err != nil {
			return err
		}
		n, err := svc.EditNotes(r.Context(), p.user, p.agent, op)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, n)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.NotesOp]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.Notes]())
}

// handleNotesHistory lists every version of the notes, newest first.
// Query: limit, cursor.
func handleNotesHistory(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handleQuery(log, []string{"limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := agentmem.NotesFilter{Cursor: q.Get("cursor")}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindNotesHistory(r.Context(), p.user, p.agent, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Notes]())
}
