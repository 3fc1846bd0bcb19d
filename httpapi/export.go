package httpapi

import (
	"log/slog"
	"mime"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
)

// handleExportThread exports a thread with its messages and elements:
// ?format=json (the default; the format ImportThread takes) or
// ?format=markdown (seed 002's layout, as an attachment).
func handleExportThread(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		format := r.URL.Query().Get("format")
		if format != "" && format != "json" && format != "markdown" {
			return agentmem.Errorf(agentmem.EINVALID, "format must be json or markdown, not %q.", format)
		}
		x, err := svc.ExportThread(r.Context(), p.user, p.thread)
		if err != nil {
			return err
		}
		if format != "markdown" {
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
	})
}

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
	})
}

// handleExportUser streams everything stored for the user as one JSON
// object in the shape of agentmem.UserExport (core.Service.ExportUser).
//
// An error before the first byte is answered as usual. After it, the
// status is sent and cannot change, so the response is aborted
// (http.ErrAbortHandler): the client sees a broken connection or stream,
// never a truncated export that parses as complete.
func handleExportUser(log *slog.Logger, svc *core.Service) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		out := &startWriter{w: w, start: func() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
		}}
		err = svc.ExportUser(r.Context(), p.user, out)
		switch {
		case err == nil:
			return nil
		case !out.started:
			return err
		default:
			if r.Context().Err() == nil { // not merely a client that left
				log.ErrorContext(r.Context(), "user export failed after it began; aborting the response",
					"route", routeLabel(r.Pattern), "request_id", requestID(r.Context()), "err", err)
			}
			panic(http.ErrAbortHandler) // the documented way to abort a begun response
		}
	})
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
