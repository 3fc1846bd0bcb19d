package core

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/agentmem/agentmem"
)

// ExportUser writes everything stored for the user to w as one JSON
// object in the shape of agentmem.UserExport, each thread as it is read,
// so that memory stays bounded by the largest thread rather than the
// user. Nothing is written before the user is resolved and the first read
// succeeded; an error after the first write leaves w with a truncated
// document, which the caller must not present as complete.
func (s *Service) ExportUser(ctx context.Context, userID string, w io.Writer) error {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return err
	}
	started := false
	start := func() error {
		started = true
		head, err := json.Marshal(struct {
			Version    int       `json:"version"`
			UserID     string    `json:"user_id"`
			ExportedAt time.Time `json:"exported_at"`
		}{agentmem.ExportVersion, u.name, agentmem.Timestamp(s.opt.Now())})
		if err != nil {
			return err
		}
		// Splice "threads" into the object: drop its closing brace.
		_, err = fmt.Fprintf(w, "%s,\"threads\":[", head[:len(head)-1])
		return err
	}
	n := 0
	var agents []string // of the user's threads: their sessions and notes follow
	err = agentmem.ExportUser(ctx, s.store, u.id, func(x *agentmem.ThreadExport) error {
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
		u.show(x)
		b, err := json.Marshal(x)
		if err == nil {
			_, err = w.Write(b)
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
		err = s.exportRest(ctx, w, u, agents)
	}
	if err == nil {
		_, err = w.Write([]byte("}\n"))
	}
	return err
}

// exportRest writes the rest of a user's export after its threads, each
// a list streamed item by item: the sessions and notes of the agents of
// the user's threads, every memory (invalidated ones too), every profile
// version and every entity.
func (s *Service) exportRest(ctx context.Context, w io.Writer, u user, agents []string) error {
	list := func(name string, each func(emit func(v any) error) error) error {
		if _, err := fmt.Fprintf(w, ",%q:[", name); err != nil {
			return err
		}
		first := true
		err := each(func(v any) error {
			u.show(v)
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
			_, err = w.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		_, err = w.Write([]byte("]"))
		return err
	}
	store := s.store
	for _, l := range []struct {
		name string
		each func(emit func(any) error) error
	}{
		{"sessions", func(emit func(any) error) error {
			for _, a := range agents {
				s, err := store.FindSession(ctx, u.id, a)
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
				n, err := store.FindNotes(ctx, u.id, a)
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
				page, next, err := store.FindMemories(ctx, u.id, f)
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
				page, next, err := store.FindProfiles(ctx, u.id, agentmem.MaxPageSize, cursor)
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
				page, next, err := store.FindEntities(ctx, u.id, f)
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
