package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/reembed"
)

// ExportUser writes everything stored for the user to w as one JSON
// object in the shape of agentmem.UserExport, each thread as it is read,
// so that memory stays bounded by the largest thread rather than the
// user. Nothing is written before the user is resolved and the first read
// succeeded; an error after the first write leaves w with a truncated
// document, which the caller must not present as complete.
func (s *Service) ExportUser(ctx context.Context, userID string, opt agentmem.ExportOptions, w io.Writer) error {
	if err := agentmem.CheckExportFormat(opt.Format); err != nil {
		return err
	}
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return err
	}
	release, err := s.admit(ctx, WorkBulk)
	if err != nil {
		return err
	}
	defer release()
	if opt.Format == agentmem.ExportMarkdown {
		// Markdown is for reading: the export is built whole, then written.
		var buf bytes.Buffer
		if err := s.exportJSON(ctx, u, opt, &buf); err != nil {
			return err
		}
		var x agentmem.UserExport
		if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
			return fmt.Errorf("export markdown: %w", err)
		}
		_, err := io.WriteString(w, x.Markdown())
		return err
	}
	return s.exportJSON(ctx, u, opt, w)
}

// exportJSON writes the JSON export of u; see ExportUser.
func (s *Service) exportJSON(ctx context.Context, u user, opt agentmem.ExportOptions, w io.Writer) error {
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
	var threads []string // their reflections follow
	err := agentmem.ExportUser(ctx, s.store, u.id, opt, func(x *agentmem.ThreadExport) error {
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		threads = append(threads, x.Thread.ID)
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
		err = s.exportRest(ctx, w, u, opt, threads)
	}
	if err == nil {
		_, err = w.Write([]byte("}\n"))
	}
	return err
}

// exportRest writes the rest of a user's export after its threads, each
// a list streamed item by item: the sessions of the user's agents, every
// version of their notes, every memory (invalidated ones too) with its
// history, every profile version, every entity with its references, and
// the reflections of the threads exported.
//
// The export is whole, so that it imports (an import refuses a record
// that points at nothing): what points at a thread that is not in it (a
// soft-deleted one left out, or one deleted for good) leaves that out:
// sessions and references of it are not written, nor a memory's
// provenance (thread_id, seq_from, seq_to) or sources of it, nor a
// memory's superseded_by that names a memory since deleted.
func (s *Service) exportRest(ctx context.Context, w io.Writer, u user, opt agentmem.ExportOptions, threads []string) error {
	agents, err := s.store.FindAgentIDs(ctx, u.id)
	if err != nil {
		return err
	}
	exported := make(map[string]bool, len(threads))
	for _, id := range threads {
		exported[id] = true
	}
	for _, l := range []struct {
		name string
		each func(emit func(any) error) error
	}{
		{"sessions", func(emit func(any) error) error { return s.exportSessions(ctx, u, agents, exported, emit) }},
		{"notes", func(emit func(any) error) error { return s.exportNotes(ctx, u, agents, emit) }},
		{"memories", func(emit func(any) error) error { return s.exportMemories(ctx, u, exported, emit) }},
		{"profiles", func(emit func(any) error) error {
			return pages(func(cursor string) ([]*agentmem.Profile, string, error) {
				return s.store.FindProfiles(ctx, u.id, agentmem.MaxPageSize, cursor)
			}, func(p *agentmem.Profile) error { return emit(p) })
		}},
		{"entities", func(emit func(any) error) error { return s.exportEntities(ctx, u, opt, exported, emit) }},
		{"reflections", func(emit func(any) error) error { return s.exportReflections(ctx, u, threads, emit) }},
	} {
		if err := writeList(w, u, l.name, l.each); err != nil {
			return err
		}
	}
	return nil
}

// writeList writes ,"name":[…] with the items each emits.
func writeList(w io.Writer, u user, name string, each func(emit func(v any) error) error) error {
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

// pages calls fn with each item of every page that page returns.
func pages[T any](page func(cursor string) ([]T, string, error), fn func(T) error) error {
	for cursor := ""; ; {
		items, next, err := page(cursor)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if cursor = next; next == "" {
			return nil
		}
	}
}

func (s *Service) exportSessions(ctx context.Context, u user, agents []string, exported map[string]bool, emit func(any) error) error {
	for _, a := range agents {
		sess, err := s.store.FindSession(ctx, u.id, a)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		if !exported[sess.ThreadID] {
			continue // a thread created since the threads were written
		}
		if err := emit(sess); err != nil {
			return err
		}
	}
	return nil
}

// exportNotes emits every version of each agent's notes, oldest first.
func (s *Service) exportNotes(ctx context.Context, u user, agents []string, emit func(any) error) error {
	for _, a := range agents {
		var versions []*agentmem.Notes
		err := pages(func(cursor string) ([]*agentmem.Notes, string, error) {
			return s.store.FindNotesHistory(ctx, u.id, a, agentmem.NotesFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
		}, func(n *agentmem.Notes) error { versions = append(versions, n); return nil })
		if err != nil {
			return err
		}
		slices.Reverse(versions) // the history is newest first
		for _, n := range versions {
			if err := emit(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// exportMemories emits every memory with its history, without the
// provenance or superseded_by that name what is not in the export (see
// exportRest).
func (s *Service) exportMemories(ctx context.Context, u user, exported map[string]bool, emit func(any) error) error {
	return pages(func(cursor string) ([]*agentmem.Memory, string, error) {
		return s.store.FindMemories(ctx, u.id, agentmem.MemoryFilter{IncludeInvalid: true, Limit: agentmem.MaxPageSize, Cursor: cursor})
	}, func(m *agentmem.Memory) error {
		h, err := s.store.FindMemoryHistory(ctx, u.id, m.ID)
		if err != nil {
			return err
		}
		if !exported[m.ThreadID] {
			m.ThreadID, m.SeqFrom, m.SeqTo = "", 0, 0
		}
		m.Sources = slices.DeleteFunc(m.Sources, func(r agentmem.ThreadRange) bool { return !exported[r.ThreadID] })
		if m.SupersededBy != "" {
			if _, err := s.store.FindMemoryByID(ctx, u.id, m.SupersededBy); agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
				m.SupersededBy = ""
			} else if err != nil {
				return err
			}
		}
		u.show(m)
		return emit(&agentmem.MemoryExport{Memory: m, History: h})
	})
}

// exportEntities emits every entity with its references to the threads
// exported (those of soft-deleted threads with opt.IncludeDeleted).
func (s *Service) exportEntities(ctx context.Context, u user, opt agentmem.ExportOptions, exported map[string]bool, emit func(any) error) error {
	return pages(func(cursor string) ([]*agentmem.Entity, string, error) {
		return s.store.FindEntities(ctx, u.id, agentmem.EntityFilter{Limit: agentmem.MaxPageSize, Cursor: cursor})
	}, func(e *agentmem.Entity) error {
		var refs []*agentmem.EntityRef
		err := pages(func(cursor string) ([]*agentmem.EntityRef, string, error) {
			return s.store.FindEntityRefs(ctx, u.id, agentmem.EntityRefFilter{EntityID: e.ID, IncludeDeleted: opt.IncludeDeleted, Limit: agentmem.MaxPageSize, Cursor: cursor})
		}, func(r *agentmem.EntityRef) error {
			if exported[r.ThreadID] {
				r.Entity = nil
				refs = append(refs, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		u.show(e)
		return emit(&agentmem.EntityExport{Entity: e, References: refs})
	})
}

// exportReflections emits the reflections of the threads exported, in
// their order, soft-deleted threads' too.
func (s *Service) exportReflections(ctx context.Context, u user, threads []string, emit func(any) error) error {
	for len(threads) > 0 {
		batch := threads[:min(len(threads), agentmem.MaxPageSize)]
		threads = threads[len(batch):]
		rs, err := s.store.FindThreadReflections(ctx, u.id, batch)
		if err != nil {
			return err
		}
		byThread := make(map[string]*agentmem.Reflection, len(rs))
		for _, r := range rs {
			byThread[r.ThreadID] = r
		}
		for _, id := range batch {
			if r := byThread[id]; r != nil {
				if err := emit(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ImportUser implements agentmem.UserService: x is restored as the
// user's in one transaction (see agentmem.ImportStore.ImportUser), with
// the jobs that index the imported threads and memories again (vectors,
// windows, chunks; memories are re-embedded), since exports hold no
// vectors: an import is never left unindexed, even by a crash.
func (s *Service) ImportUser(ctx context.Context, userID string, x *agentmem.UserExport, opt agentmem.ImportOptions) (*agentmem.ImportResult, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	release, err := s.admit(ctx, WorkBulk)
	if err != nil {
		return nil, err
	}
	defer release()
	opt.Jobs = nil // only the service asks for jobs
	if ix := s.opt.Indexer; ix != nil && ix.Jobs != nil {
		opt.Jobs = func(res *agentmem.ImportResult) [][]*agentmem.Job {
			jobs := ix.ImportJobs(res)
			if len(res.MemoryIDs) > 0 {
				jobs = append(jobs, []*agentmem.Job{reembed.UserJob()})
			}
			return jobs
		}
	}
	return s.store.ImportUser(ctx, u.id, x, opt)
}
