package httpapi

import (
	"log/slog"
	"mime"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleExportThread exports a thread with its messages and elements:
// ?format=json (the default; the format ImportThread takes) or
// ?format=markdown (seed 002's layout, as an attachment).
func handleExportThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handleQuery(log, []string{"format"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		format := r.URL.Query().Get("format")
		if err := agentmem.CheckExportFormat(format); err != nil {
			return err
		}
		x, err := svc.ExportThread(r.Context(), p.user, p.thread)
		if err != nil {
			return err
		}
		if format != agentmem.ExportMarkdown {
			encode(w, r, log, http.StatusOK, x)
			return nil
		}
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		// FormatMediaType quotes the name, or encodes it (RFC 2231) when
		// it is not plain ASCII; IDs may hold quotes and any letter.
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "thread-" + x.Thread.ID + ".md"}))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(x.Markdown()))
		return nil
	}).
		writes(http.StatusOK, reflect.TypeFor[agentmem.ThreadExport]()).
		writesMedia(http.StatusOK, "text/markdown", markdown)
}

// markdown is the schema of an export as Markdown.
var markdown = &jsonSchema{Type: "string", Description: "Markdown, to read; the JSON export is what an import takes."}

// handleImportThread stores a JSON thread export as a new thread of the
// user and answers 201 with it. The export must fit in MaxBodyBytes.
func handleImportThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		x, err := decode[agentmem.ThreadExport](r)
		if err != nil {
			return err
		}
		t, err := svc.ImportThread(r.Context(), p.user, &x)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusCreated, t)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.ThreadExport]()).
		writes(http.StatusCreated, reflect.TypeFor[agentmem.Thread]())
}

// handleExportUser streams everything stored for the user as one JSON
// object in the shape of agentmem.UserExport, or with ?format=markdown as
// Markdown; soft-deleted threads with ?include_deleted=true.
//
// An error before the first byte is answered as usual. After it, the
// status is sent and cannot change, so the response is aborted
// (http.ErrAbortHandler): the client sees a broken connection or stream,
// never a truncated export that parses as complete.
func handleExportUser(log *slog.Logger, svc agentmem.UserService) http.Handler {
	return handleQuery(log, []string{"format", "include_deleted"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		opt := agentmem.ExportOptions{Format: q.Get("format")}
		if opt.IncludeDeleted, err = queryBool(q, "include_deleted"); err != nil {
			return err
		}
		out := &startWriter{w: w, start: func() {
			if opt.Format == agentmem.ExportMarkdown {
				w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(http.StatusOK)
		}}
		err = svc.ExportUser(r.Context(), p.user, opt, out)
		switch {
		case err == nil:
			return nil
		case !out.started:
			return err
		default:
			if r.Context().Err() == nil { // not merely a client that left
				log.ErrorContext(r.Context(), "user export failed after it began; aborting the response",
					"route", routeLabel(r.Pattern), "request_id", requestID(r.Context()), agentmem.LogErr, err)
			}
			panic(http.ErrAbortHandler) // the documented way to abort a begun response
		}
	}).
		writes(http.StatusOK, reflect.TypeFor[agentmem.UserExport]()).
		writesMedia(http.StatusOK, "text/markdown", markdown)
}

// handleImportUser restores a user's export (the body, an
// agentmem.UserExport) as the user's, all of it or nothing, and answers
// 200 with what it did. ?on_conflict=fail (default), skip or replace says
// what becomes of records the user already has; with fail, a clash is 409
// naming them. The export must fit in MaxBodyBytes.
func handleImportUser(log *slog.Logger, svc agentmem.UserService) http.Handler {
	return handleQuery(log, []string{"on_conflict"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		x, err := decode[agentmem.UserExport](r)
		if err != nil {
			return err
		}
		res, err := svc.ImportUser(r.Context(), p.user, &x, agentmem.ImportOptions{OnConflict: r.URL.Query().Get("on_conflict")})
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, res)
		return nil
	}).
		reads(reflect.TypeFor[agentmem.UserExport]()).
		writes(http.StatusOK, reflect.TypeFor[agentmem.ImportResult]())
}

// startWriter calls start before its first write.
type startWriter struct {
	w       http.ResponseWriter
	start   func()
	started bool
}

func (s *startWriter) Write(b []byte) (int, error) {
	if !s.started {
		s.started = true
		s.start()
	}
	return s.w.Write(b)
}
