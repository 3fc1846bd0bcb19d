package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"time"

	"github.com/agentmem/agentmem"
)

// handleExportThread exports a thread with its messages and elements:
// ?format=json (the default; the format ImportThread takes) or
// ?format=markdown (seed 002's layout, as an attachment).
func handleExportThread(log *slog.Logger, store agentmem.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		format := r.URL.Query().Get("format")
		if err == nil && format != "" && format != "json" && format != "markdown" {
			err = agentmem.Errorf(agentmem.EINVALID, "format must be json or markdown, not %q.", format)
		}
		var x *agentmem.ThreadExport
		if err == nil {
			x, err = agentmem.ExportThread(r.Context(), store, p.user, p.thread)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if format != "markdown" {
			encode(w, r, log, http.StatusOK, x)
			return
		}
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		// FormatMediaType quotes the name, or encodes it (RFC 2231) when
		// it is not plain ASCII; IDs may hold quotes and any letter.
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "thread-" + x.Thread.ID + ".md"}))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(x.Markdown()))
	})
}

// handleImportThread stores a JSON thread export as a new thread of the
// user and answers 201 with it. The export must fit in MaxBodyBytes.
func handleImportThread(log *slog.Logger, imports agentmem.ImportStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var x agentmem.ThreadExport
		if err == nil {
			x, err = decode[agentmem.ThreadExport](r)
		}
		var t *agentmem.Thread
		if err == nil {
			t, err = imports.ImportThread(r.Context(), p.user, &x)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusCreated, t)
	})
}

// handleExportUser streams everything stored for the user as one JSON
// object in the shape of agentmem.UserExport, encoding each thread as
// agentmem.ExportUser reads it, so that memory stays bounded by the
// largest thread rather than the user.
//
// sessions is always empty: the store has no call that lists a user's
// sessions (FindSession needs the agent, and a session's agent need not be
// the agent of its thread).
//
// An error before the first byte is answered as usual. After it, the
// status is sent and cannot change, so the response is aborted
// (http.ErrAbortHandler): the client sees a broken connection or stream,
// never a truncated export that parses as complete.
func handleExportUser(log *slog.Logger, store agentmem.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		started := false
		start := func() error {
			started = true
			head, err := json.Marshal(struct {
				Version    int       `json:"version"`
				UserID     string    `json:"user_id"`
				ExportedAt time.Time `json:"exported_at"`
			}{agentmem.ExportVersion, p.user, agentmem.Timestamp(time.Now())})
			if err != nil {
				return err
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			// Splice "threads" into the object: drop its closing brace.
			head = clientUserIDs(r, head)
			_, err = fmt.Fprintf(w, "%s,\"threads\":[", head[:len(head)-1])
			return err
		}
		n := 0
		var agents []string // of the user's threads: their sessions and notes follow
		err = agentmem.ExportUser(r.Context(), store, p.user, func(x *agentmem.ThreadExport) error {
			if !started {
				if err := start(); err != nil {
					return err
				}
			}
			if a := x.Thread.AgentID; a != "" && !slices.Contains(agents, a) {
				agents = append(agents, a)
			}
			if n > 0 {
				if _, err := w.Write([]byte(",")); err != nil {
					return err
				}
			}
			n++
			b, err := json.Marshal(x)
			if err == nil {
				_, err = w.Write(clientUserIDs(r, b))
			}
			return err
		})
		if err == nil && !started {
			err = start()
		}
		if err == nil {
			_, err = w.Write([]byte("]"))
		}
		if err == nil {
			err = exportRest(r, w, store, p.user, agents)
		}
		if err == nil {
			_, err = w.Write([]byte("}\n"))
		}
		switch {
		case err == nil:
		case !started:
			writeError(w, r, log, err)
		default:
			if r.Context().Err() == nil { // not merely a client that left
				log.ErrorContext(r.Context(), "user export failed after it began; aborting the response",
					"route", routeLabel(r.Pattern), "request_id", requestID(r.Context()), "threads_sent", n, "err", err)
			}
			panic(http.ErrAbortHandler) // the documented way to abort a begun response
		}
	})
}

// exportRest writes the rest of a user's export after its threads, each
// a list streamed item by item: the sessions and notes of the agents of
// the user's threads, every memory (invalidated ones too), every profile
// version and every entity.
func exportRest(r *http.Request, w io.Writer, store agentmem.Store, userID string, agents []string) error {
	ctx := r.Context()
	list := func(name string, each func(emit func(v any) error) error) error {
		if _, err := fmt.Fprintf(w, ",%q:[", name); err != nil {
			return err
		}
		first := true
		err := each(func(v any) error {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if !first {
				if _, err := w.Write([]byte(",")); err != nil {
					return err
				}
			}
			first = false
			_, err = w.Write(clientUserIDs(r, b))
			return err
		})
		if err != nil {
			return err
		}
		_, err = w.Write([]byte("]"))
		return err
	}
	for _, l := range []struct {
		name string
		each func(emit func(any) error) error
	}{
		{"sessions", func(emit func(any) error) error {
			for _, a := range agents {
				s, err := store.FindSession(ctx, userID, a)
				if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
					continue
				} else if err != nil {
					return err
				}
				if err := emit(s); err != nil {
					return err
				}
			}
			return nil
		}},
		{"notes", func(emit func(any) error) error {
			for _, a := range agents {
				n, err := store.FindNotes(ctx, userID, a)
				if err != nil {
					return err
				}
				if n.Version > 0 {
					if err := emit(n); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"memories", func(emit func(any) error) error {
			f := agentmem.MemoryFilter{IncludeInvalid: true, Limit: agentmem.MaxPageSize}
			for {
				page, next, err := store.FindMemories(ctx, userID, f)
				if err != nil {
					return err
				}
				for _, m := range page {
					if err := emit(m); err != nil {
						return err
					}
				}
				if f.Cursor = next; next == "" {
					return nil
				}
			}
		}},
		{"profiles", func(emit func(any) error) error {
			for cursor := ""; ; {
				page, next, err := store.FindProfiles(ctx, userID, agentmem.MaxPageSize, cursor)
				if err != nil {
					return err
				}
				for _, p := range page {
					if err := emit(p); err != nil {
						return err
					}
				}
				if cursor = next; next == "" {
					return nil
				}
			}
		}},
		{"entities", func(emit func(any) error) error {
			f := agentmem.EntityFilter{Limit: agentmem.MaxPageSize}
			for {
				page, next, err := store.FindEntities(ctx, userID, f)
				if err != nil {
					return err
				}
				for _, e := range page {
					if err := emit(e); err != nil {
						return err
					}
				}
				if f.Cursor = next; next == "" {
					return nil
				}
			}
		}},
	} {
		if err := list(l.name, l.each); err != nil {
			return err
		}
	}
	return nil
}
