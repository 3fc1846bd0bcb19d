package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// handleListMessages lists a thread's messages in seq order. Query:
// after_seq, before_seq, limit, cursor, order=asc|desc.
func handleListMessages(log *slog.Logger, messages agentmem.MessageStore) http.Handler {
	type response struct {
		Data       []*agentmem.Message `json:"data"`
		NextCursor string              `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		q := r.URL.Query()
		f := agentmem.MessageFilter{Cursor: q.Get("cursor")}
		if err == nil {
			f.AfterSeq, err = queryInt(q, "after_seq")
		}
		if err == nil {
			f.BeforeSeq, err = queryInt(q, "before_seq")
		}
		if err == nil {
			var limit int64
			limit, err = queryInt(q, "limit")
			f.Limit = int(min(limit, agentmem.MaxPageSize+1)) // the store rejects what is above the maximum
		}
		if err == nil {
			switch order := q.Get("order"); order {
			case "", "asc":
			case "desc":
				f.Desc = true
			default:
				err = agentmem.Errorf(agentmem.EINVALID, "order must be asc or desc, not %q.", order)
			}
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = messages.FindMessages(r.Context(), p.user, p.thread, f)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if resp.Data == nil {
			resp.Data = []*agentmem.Message{}
		}
		encode(w, r, log, http.StatusOK, resp)
	})
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
func handleAppendMessages(log *slog.Logger, messages agentmem.MessageStore, ix *extract.Indexer, maxBatch int) http.Handler {
	type request struct {
		Messages []*agentmem.Message `json:"messages"`
	}
	type response struct {
		Messages []*agentmem.Message `json:"messages"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var req request
		if err == nil {
			req, err = decode[request](r)
		}
		if err == nil && len(req.Messages) > maxBatch {
			err = agentmem.Errorf(agentmem.ETOOLARGE, "messages has %d entries; the limit is %d per request.", len(req.Messages), maxBatch)
		}
		for i, m := range req.Messages {
			if err == nil && m != nil && m.ThreadID != "" && m.ThreadID != p.thread {
				err = agentmem.Errorf(agentmem.EINVALID, "messages[%d].thread_id %q is not the thread of the path.", i, m.ThreadID)
			}
		}
		var resp response
		if err == nil {
			// Indexing the messages (search, memories) is background work,
			// whose job is stored with them: an append that returns has it.
			opt, enqueued := ix.AppendJobs(agentmem.AppendOptions{IdempotencyKey: r.Header.Get("Idempotency-Key")})
			if resp.Messages, err = messages.AppendMessages(r.Context(), p.user, p.thread, req.Messages, opt); err == nil {
				enqueued()
			}
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusCreated, resp)
	})
}
