package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// handleGetProfile answers the user's newest profile; 404 until one was
// synthesised.
func handleGetProfile(log *slog.Logger, profiles agentmem.ProfileStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var profile *agentmem.Profile
		if err == nil {
			profile, err = profiles.FindProfile(r.Context(), p.user)
		}
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			err = agentmem.Errorf(agentmem.ENOTFOUND, "User %q has no profile yet: it is synthesised after a thread ends, or by POST …/profile/refresh.", p.user)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, profile)
	})
}

// handleRefreshProfile synthesises the user's profile now and answers the
// newest version: 404 when nothing is known about the user yet, 409 when
// another refresh stored a version meanwhile.
func handleRefreshProfile(log *slog.Logger, profiler *extract.Profiler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var profile *agentmem.Profile
		if err == nil {
			profile, err = profiler.Refresh(r.Context(), p.user)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, profile)
	})
}

// handleListProfiles lists the user's profile versions, newest first.
func handleListProfiles(log *slog.Logger, profiles agentmem.ProfileStore) http.Handler {
	type response struct {
		Data       []*agentmem.Profile `json:"data"`
		NextCursor string              `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		q := r.URL.Query()
		var limit int64
		if err == nil {
			limit, err = queryInt(q, "limit")
		}
		var resp response
		if err == nil {
			resp.Data, resp.NextCursor, err = profiles.FindProfiles(r.Context(), p.user, int(min(limit, agentmem.MaxPageSize+1)), q.Get("cursor"))
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, resp)
	})
}

// handleGetReflection answers where a thread stands in reflection; 404
// until it has ended.
func handleGetReflection(log *slog.Logger, reflections agentmem.ReflectionStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := readPath(r)
		var ref *agentmem.Reflection
		if err == nil {
			ref, err = reflections.FindReflection(r.Context(), p.user, p.thread)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, r, log, http.StatusOK, ref)
	})
}
