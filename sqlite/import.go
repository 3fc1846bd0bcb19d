package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentmem/agentmem"
)

// ImportUser implements agentmem.ImportStore.
func (s *Store) ImportUser(ctx context.Context, userID string, x *agentmem.UserExport, opt agentmem.ImportOptions) (*agentmem.ImportResult, error) {
	if err := agentmem.PrepareUserImport(userID, x, opt, s.now(), s.tokens()); err != nil {
		return nil, err
	}
	var res *agentmem.ImportResult
	err := s.write(ctx, func(tx *sql.Tx) error {
		have, err := findExisting(ctx, tx, userID, x)
		if err != nil {
			return err
		}
		p, err := agentmem.PlanImport(x, have, opt)
		if err != nil {
			return err
		}
		if err := applyDeletes(ctx, tx, userID, p); err != nil {
			return err
		}
		if err := insertUser(ctx, tx, userID, s.now()); err != nil {
			return err
		}
		if err := importRecords(ctx, tx, userID, p); err != nil {
			return err
		}
		if opt.Jobs != nil {
			for _, alts := range opt.Jobs(p.Result) {
				if err := s.enqueueAlternatives(ctx, tx, userID, alts, s.now()); err != nil {
					return err
				}
			}
		}
		res = p.Result
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// inJSON is the condition of a column in a list, passed as one JSON array.
const inJSON = ` IN (SELECT value FROM json_each(?))`

func jsonList(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// findExisting reads what the user has of x's records.
func findExisting(ctx context.Context, tx *sql.Tx, userID string, x *agentmem.UserExport) (agentmem.ImportExisting, error) {
	k := x.ImportKeys()
	have := agentmem.NewImportExisting()
	sets := []struct {
		q    string
		args []any
		put  func(a, b string)
	}{
		{`SELECT id, CAST(last_seq AS TEXT) FROM threads WHERE user_id = ? AND id` + inJSON, []any{userID, jsonList(k.Threads)}, func(a, b string) {
			have.Threads[a] = true
			have.LastSeqs[a], _ = strconv.ParseInt(b, 10, 64)
		}},
		{`SELECT id, thread_id FROM messages WHERE user_id = ? AND id` + inJSON, []any{userID, jsonList(k.Messages)}, func(a, b string) { have.Messages[a] = b }},
		{`SELECT id, thread_id FROM elements WHERE user_id = ? AND id` + inJSON, []any{userID, jsonList(k.Elements)}, func(a, b string) { have.Elements[a] = b }},
		{`SELECT agent_id, '' FROM sessions WHERE user_id = ?`, []any{userID}, func(a, _ string) { have.Sessions[a] = true }},
		{`SELECT DISTINCT agent_id, '' FROM notes WHERE user_id = ?`, []any{userID}, func(a, _ string) { have.NotesAgents[a] = true }},
		{`SELECT id, '' FROM memories WHERE user_id = ? AND id` + inJSON, []any{userID, jsonList(k.Memories)}, func(a, _ string) { have.Memories[a] = true }},
		{`SELECT id, name_key FROM entities WHERE user_id = ? AND (id` + inJSON + ` OR name_key` + inJSON + `)`, []any{userID, jsonList(k.Entities), jsonList(k.NameKeys)},
			func(a, b string) { have.Entities[a], have.EntityNames[b] = true, a }},
		{`SELECT thread_id, '' FROM reflections WHERE user_id = ? AND thread_id` + inJSON, []any{userID, jsonList(k.Threads)}, func(a, _ string) { have.Reflections[a] = true }},
		{`SELECT 'profiles', '' FROM profiles WHERE user_id = ? LIMIT 1`, []any{userID}, func(string, string) { have.Profiles = true }},
	}
	for _, set := range sets {
		rows, err := tx.QueryContext(ctx, set.q, set.args...)
		if err != nil {
			return have, fmt.Errorf("find existing records: %w", err)
		}
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				rows.Close()
				return have, fmt.Errorf("find existing records: %w", err)
			}
			set.put(a, b)
		}
		if err := rows.Close(); err != nil {
			return have, fmt.Errorf("find existing records: %w", err)
		}
	}
	return have, nil
}

// applyDeletes deletes what an import replaces.
func applyDeletes(ctx context.Context, tx *sql.Tx, userID string, p *agentmem.ImportPlan) error {
	if len(p.DeleteThreads) > 0 {
		if _, err := deleteThreads(ctx, tx, userID, `id`+inJSON, jsonList(p.DeleteThreads)); err != nil {
			return err
		}
	}
	for _, id := range p.DeleteMemories {
		for _, q := range []string{`DELETE FROM memories WHERE user_id = ? AND id = ?`, `DELETE FROM memory_history WHERE user_id = ? AND memory_id = ?`,
			`DELETE FROM memory_sources WHERE user_id = ? AND memory_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, userID, id); err != nil {
				return fmt.Errorf("delete memory: %w", err)
			}
		}
		if err := deleteVectors(ctx, tx, userID, agentmem.ScopeMemories, []string{id}); err != nil {
			return err
		}
	}
	for _, id := range p.DeleteEntities {
		for _, table := range []string{"entity_names", "entity_refs"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE user_id = ? AND entity_id = ?`, userID, id); err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM entities WHERE user_id = ? AND id = ?`, userID, id); err != nil {
			return fmt.Errorf("delete entity: %w", err)
		}
	}
	for _, agent := range p.DeleteNotes {
		if _, err := tx.ExecContext(ctx, `DELETE FROM notes WHERE user_id = ? AND agent_id = ?`, userID, agent); err != nil {
			return fmt.Errorf("delete notes: %w", err)
		}
	}
	if p.DeleteProfiles {
		if _, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("delete profiles: %w", err)
		}
	}
	return nil
}

// importRecords inserts the records of an import plan.
func importRecords(ctx context.Context, tx *sql.Tx, userID string, p *agentmem.ImportPlan) error {
	for _, t := range p.Threads {
		if err := importThread(ctx, tx, userID, t, t.Thread); err != nil {
			return err
		}
	}
	for _, s := range p.Sessions {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (user_id, agent_id, thread_id, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, agent_id) DO UPDATE SET thread_id = excluded.thread_id, updated_at = excluded.updated_at`,
			userID, s.AgentID, s.ThreadID, micros(s.UpdatedAt)); err != nil {
			return fmt.Errorf("import session: %w", err)
		}
	}
	for _, n := range p.Notes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO notes (`+notesColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			userID, n.AgentID, n.Version, n.Operation, n.Content, micros(n.UpdatedAt)); err != nil {
			if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
				return agentmem.Errorf(agentmem.EINVALID, "The notes of agent %q have version %d twice.", n.AgentID, n.Version)
			}
			return fmt.Errorf("import notes: %w", err)
		}
	}
	for _, pr := range p.Profiles {
		sources, _ := json.Marshal(pr.Sources)
		if _, err := tx.ExecContext(ctx, `INSERT INTO profiles (`+profileColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			userID, pr.Version, pr.Text, pr.Method, pr.Model, string(sources), micros(pr.CreatedAt)); err != nil {
			if agentmem.ErrorCode(formatError(err)) == agentmem.ECONFLICT {
				return agentmem.Errorf(agentmem.EINVALID, "Profile version %d appears twice.", pr.Version)
			}
			return fmt.Errorf("import profile: %w", err)
		}
	}
	for _, m := range p.Memories {
		if err := insertMemoryRow(ctx, tx, m.Memory); err != nil {
			return err
		}
		for _, c := range m.History {
			if err := insertChange(ctx, tx, userID, c); err != nil {
				return err
			}
		}
	}
	for _, e := range p.Entities {
		if err := writeEntity(ctx, tx, e.Entity, false); err != nil {
			return err
		}
		for _, r := range e.References {
			if _, err := tx.ExecContext(ctx, `INSERT INTO entity_refs (user_id, entity_id, thread_id, action, seq, at) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (user_id, entity_id, thread_id, action) DO UPDATE SET seq = excluded.seq, at = excluded.at`,
				userID, r.EntityID, r.ThreadID, r.Action, r.Seq, micros(r.At)); err != nil {
				return fmt.Errorf("import entity reference: %w", err)
			}
		}
	}
	for _, r := range p.Reflections {
		topics, _ := json.Marshal(r.Topics)
		insights, _ := json.Marshal(r.Insights)
		if _, err := tx.ExecContext(ctx, `INSERT INTO reflections (`+reflectionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, thread_id) DO UPDATE SET status = excluded.status, through_seq = excluded.through_seq,
			topics = excluded.topics, insights = excluded.insights, reason = excluded.reason, updated_at = excluded.updated_at`,
			userID, r.ThreadID, r.Status, r.ThroughSeq, string(topics), string(insights), r.Reason, micros(r.UpdatedAt)); err != nil {
			return fmt.Errorf("import reflection: %w", err)
		}
	}
	return nil
}

// FindAgentIDs implements agentmem.ImportStore.
func (s *Store) FindAgentIDs(ctx context.Context, userID string) ([]string, error) {
	ids := []string{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT agent_id FROM threads WHERE user_id = ?1 AND agent_id <> ''
			UNION SELECT agent_id FROM sessions WHERE user_id = ?1 UNION SELECT agent_id FROM notes WHERE user_id = ?1 ORDER BY 1`, userID)
		if err != nil {
			return fmt.Errorf("find agents: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("find agents: %w", err)
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	return ids, err
}

// FindThreadReflections implements agentmem.ImportStore.
func (s *Store) FindThreadReflections(ctx context.Context, userID string, threadIDs []string) ([]*agentmem.Reflection, error) {
	if len(threadIDs) > agentmem.MaxPageSize {
		return nil, agentmem.Errorf(agentmem.EINVALID, "At most %d threads may be asked for, not %d.", agentmem.MaxPageSize, len(threadIDs))
	}
	var out []*agentmem.Reflection
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+reflectionColumns+` FROM reflections WHERE user_id = ? AND thread_id`+inJSON, userID, jsonList(threadIDs))
		if err != nil {
			return fmt.Errorf("find reflections: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanReflection(rows)
			if err != nil {
				return fmt.Errorf("find reflections: %w", err)
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}
