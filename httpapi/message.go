package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleListMessages lists a thread's messages in seq order. Query:
// after_seq, before_seq, limit, cursor, order=asc|desc.
func handleListMessages(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handleQuery(log, []string{"after_seq", "before_seq", "order", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := agentmem.MessageFilter{Cursor: q.Get("cursor")}
		if f.AfterSeq, err = queryInt(q, "after_seq"); err != nil {
			return err
		}
		if f.BeforeSeq, err = queryInt(q, "before_seq"); err != nil {
			return err
		}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		switch order := q.Get("order"); order {
		case "", "asc":
		case "desc":
			f.Desc = true
		default:
			return agentmem.Errorf(agentmem.EINVALID, "order must be asc or desc, not %q.", order)
		}
		data, next, err := svc.FindMessages(r.Context(), p.user, p.thread, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Message]())
}

// handleAppendMessages appends a batch {"messages":[…]} atomically, with an
// optional Idempotency-Key header, and answers 201 {"messages":[…]} with
// the stored messages (ids, seqs, token counts, times).
//
// Messages have the shape the API returns, so a client may send back what
// it read: seq and token_count are assigned by the store and ignored, and
// thread_id must be empty or name the thread of the path.
//
// A retry that the store recognises (same key and batch, or the same
// client message IDs) is answered 201 with the body of the original
// answer, not 200: the store does not tell a retry from a first write, and
// a client whose first answer was lost must get that answer.
func handleAppendMessages(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	type request struct {
		Messages []*agentmem.Message `json:"messages"`
	}
	type response struct {
		Messages []*agentmem.Message `json:"messages"`
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
		stored, err := svc.AppendMessages(r.Context(), p.user, p.thread, req.Messages, r.Header.Get("Idempotency-Key"))
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusCreated, response{stored})
		return nil
	}).
		reads(reflect.TypeFor[request](), "messages").
		readsHeader("Idempotency-Key").
		writes(http.StatusCreated, reflect.TypeFor[response]())
}
