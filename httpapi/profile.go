package httpapi

import (
	"log/slog"
	"net/http"
	"reflect"

	"github.com/agentmem/agentmem"
)

// handleGetProfile returns the user's newest profile; 404 before the first.
func handleGetProfile(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		profile, err := svc.FindProfile(r.Context(), p.user)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, profile)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Profile]())
}

// handleRefreshProfile synthesises the profile now and answers with it.
func handleRefreshProfile(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		profile, err := svc.RefreshProfile(r.Context(), p.user)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, profile)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Profile]())
}

// handleListProfiles lists the profile's versions, newest first. Query:
// limit, cursor.
func handleListProfiles(log *slog.Logger, svc agentmem.KnowledgeService) http.Handler {
	return handleQuery(log, []string{"limit", "cursor"}, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		limit, err := queryLimit(q)
		if err != nil {
			return err
		}
		data, next, err := svc.FindProfiles(r.Context(), p.user, limit, q.Get("cursor"))
		if err != nil {
			return err
		}
		return encodeList(w, r, log, data, next)
	}).writes(http.StatusOK, pageOf[*agentmem.Profile]())
}

// handleGetReflection returns what reflection found in a thread.
func handleGetReflection(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		ref, err := svc.FindReflection(r.Context(), p.user, p.thread)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusOK, ref)
		return nil
	}).writes(http.StatusOK, reflect.TypeFor[agentmem.Reflection]())
}

// handleRetryReflection queues again a thread's failed reflection and
// answers 202 with it, pending; 409 when it is pending or done, or the
// thread is active.
func handleRetryReflection(log *slog.Logger, svc agentmem.ThreadService) http.Handler {
	return handle(log, func(w http.ResponseWriter, r *http.Request) error {
		p, err := readPath(r)
		if err != nil {
			return err
		}
		ref, err := svc.RetryReflection(r.Context(), p.user, p.thread)
		if err != nil {
			return err
		}
		encode(w, r, log, http.StatusAccepted, ref)
		return nil
	}).writes(http.StatusAccepted, reflect.TypeFor[agentmem.Reflection]())
}
