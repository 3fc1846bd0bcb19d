package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleListElements lists a thread's elements, oldest first. Query:
// message_id, limit, cursor.
func handleListElements(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handleQuery(log, []string{"message_id", "limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := agentmem.ElementFilter{Cursor: q.Get("cursor")}
		if msg := q.Get("message_id"); msg != "" {
			if err := agentmem.ValidateID("message_id", msg); err != nil {
				return err
			}
			f.MessageID = &msg
		}
		if f.Limit, err = queryLimit(q); err != nil {
			return err
		}
		data, next, err := svc.FindElements(r.Context(), p.user, p.thread, f)
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Element]())
}

// handleCreateElement attaches an element to a thread or to one of its
// messages and answers 201 with it.
func handleCreateElement(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		e, err := decode[agentmem.Element](r)
		if err != nil {
			return err
		}
		if err := svc.CreateElement(r.Context(), p.user, p.thread, &e); err != nil {
			return err
		}
		encode(w, r, log, http.StatusCreated, &e)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.Element]()).
		writes(http.StatusCreated, reflect.TypeFor[agentmem.Element]())
}
