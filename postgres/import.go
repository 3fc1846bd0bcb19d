package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agentmem/agentmem"
	"github.com/jackc/pgx/v5"
)

// ImportUser implements agentmem.ImportStore. The user's row, locked
// first, keeps the user's records still while the import looks for
// clashes and writes.
func (s *Store) ImportUser(ctx context.Context, userID string, x *agentmem.UserExport, opt agentmem.ImportOptions) (*agentmem.ImportResult, error) {
	if err := agentmem.PrepareUserImport(userID, x, opt, s.now(), s.tokens()); err != nil {
		return nil, err
	}
	var res *agentmem.ImportResult
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := insertUser(ctx, tx, userID, s.now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE user_id = $1 FOR UPDATE`, userID); err != nil {
			return fmt.Errorf("lock user: %w", err)
		}
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
		if err := importRecords(ctx, tx, userID, p); err != nil {
			return err
		}
		if opt.Jobs != nil {
			for _, alts := range opt.Jobs(p.Result) {
				if _, _, err := enqueuePicked(ctx, tx, userID, alts, s.now()); err != nil {
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

func orEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// findExisting reads what the user has of x's records.
func findExisting(ctx context.Context, tx pgx.Tx, userID string, x *agentmem.UserExport) (agentmem.ImportExisting, error) {
	k := x.ImportKeys()
	have := agentmem.NewImportExisting()
	sets := []struct {
		q    string
		args []any
		put  func(a, b string)
	}{
		{`SELECT id, last_seq::text FROM threads WHERE user_id = $1 AND id = ANY($2)`, []any{userID, orEmpty(k.Threads)}, func(a, b string) {
			have.Threads[a] = true
			have.LastSeqs[a], _ = strconv.ParseInt(b, 10, 64)
		}},
		{`SELECT id, thread_id FROM messages WHERE user_id = $1 AND id = ANY($2)`, []any{userID, orEmpty(k.Messages)}, func(a, b string) { have.Messages[a] = b }},
		{`SELECT id, thread_id FROM elements WHERE user_id = $1 AND id = ANY($2)`, []any{userID, orEmpty(k.Elements)}, func(a, b string) { have.Elements[a] = b }},
		{`SELECT agent_id, '' FROM sessions WHERE user_id = $1`, []any{userID}, func(a, _ string) { have.Sessions[a] = true }},
		{`SELECT DISTINCT agent_id, '' FROM notes WHERE user_id = $1`, []any{userID}, func(a, _ string) { have.NotesAgents[a] = true }},
		{`SELECT id, '' FROM memories WHERE user_id = $1 AND id = ANY($2)`, []any{userID, orEmpty(k.Memories)}, func(a, _ string) { have.Memories[a] = true }},
		{`SELECT id, name_key FROM entities WHERE user_id = $1 AND (id = ANY($2) OR name_key = ANY($3))`, []any{userID, orEmpty(k.Entities), orEmpty(k.NameKeys)},
			func(a, b string) { have.Entities[a], have.EntityNames[b] = true, a }},
		{`SELECT thread_id, '' FROM reflections WHERE user_id = $1 AND thread_id = ANY($2)`, []any{userID, orEmpty(k.Threads)}, func(a, _ string) { have.Reflections[a] = true }},
		{`SELECT 'profiles', '' FROM profiles WHERE user_id = $1 LIMIT 1`, []any{userID}, func(string, string) { have.Profiles = true }},
	}
	for _, set := range sets {
		rows, err := tx.Query(ctx, set.q, set.args...)
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
		rows.Close()
		if err := rows.Err(); err != nil {
			return have, fmt.Errorf("find existing records: %w", err)
		}
	}
	return have, nil
}

// applyDeletes deletes what an import replaces.
func applyDeletes(ctx context.Context, tx pgx.Tx, userID string, p *agentmem.ImportPlan) error {
	if len(p.DeleteThreads) > 0 {
		if _, err := deleteThreads(ctx, tx, userID, p.DeleteThreads); err != nil {
			return err
		}
	}
	if len(p.DeleteMemories) > 0 {
		if err := lockVectorVersions(ctx, tx, userID); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM memories WHERE user_id = $1 AND id = ANY($2)`, `DELETE FROM memory_history WHERE user_id = $1 AND memory_id = ANY($2)`,
			`DELETE FROM memory_sources WHERE user_id = $1 AND memory_id = ANY($2)`} {
			if _, err := tx.Exec(ctx, q, userID, p.DeleteMemories); err != nil {
				return fmt.Errorf("delete memories: %w", err)
			}
		}
		if err := deleteVectors(ctx, tx, userID, agentmem.ScopeMemories, p.DeleteMemories); err != nil {
			return err
		}
	}
	if len(p.DeleteEntities) > 0 {
		for _, q := range []string{`DELETE FROM entity_names WHERE user_id = $1 AND entity_id = ANY($2)`,
			`DELETE FROM entity_refs WHERE user_id = $1 AND entity_id = ANY($2)`, `DELETE FROM entities WHERE user_id = $1 AND id = ANY($2)`} {
			if _, err := tx.Exec(ctx, q, userID, p.DeleteEntities); err != nil {
				return fmt.Errorf("delete entities: %w", err)
			}
		}
	}
	if len(p.DeleteNotes) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM notes WHERE user_id = $1 AND agent_id = ANY($2)`, userID, p.DeleteNotes); err != nil {
			return fmt.Errorf("delete notes: %w", err)
		}
	}
	if p.DeleteProfiles {
		if _, err := tx.Exec(ctx, `DELETE FROM profiles WHERE user_id = $1`, userID); err != nil {
			return fmt.Errorf("delete profiles: %w", err)
		}
	}
	return nil
}

// importRecords inserts the records of an import plan.
func importRecords(ctx context.Context, tx pgx.Tx, userID string, p *agentmem.ImportPlan) error {
	for _, t := range p.Threads {
		if err := importThread(ctx, tx, userID, t, t.Thread); err != nil {
			return err
		}
	}
	for _, s := range p.Sessions {
		if _, err := tx.Exec(ctx, `INSERT INTO sessions (user_id, agent_id, thread_id, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id, agent_id) DO UPDATE SET thread_id = excluded.thread_id, updated_at = excluded.updated_at`,
			userID, s.AgentID, s.ThreadID, s.UpdatedAt); err != nil {
			return fmt.Errorf("import session: %w", err)
		}
	}
	for _, n := range p.Notes {
		_, err := tx.Exec(ctx, `INSERT INTO notes (`+notesColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			userID, n.AgentID, n.Version, n.Operation, n.Content, n.UpdatedAt)
		if isUniqueViolation(err) {
			return agentmem.Errorf(agentmem.EINVALID, "The notes of agent %q have version %d twice.", n.AgentID, n.Version)
		} else if err != nil {
			return fmt.Errorf("import notes: %w", err)
		}
	}
	for _, pr := range p.Profiles {
		_, err := tx.Exec(ctx, `INSERT INTO profiles (`+profileColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			userID, pr.Version, pr.Text, pr.Method, pr.Model, pr.Sources, pr.CreatedAt)
		if isUniqueViolation(err) {
			return agentmem.Errorf(agentmem.EINVALID, "Profile version %d appears twice.", pr.Version)
		} else if err != nil {
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
		_, err := tx.Exec(ctx, `INSERT INTO entities (`+entityColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			userID, e.ID, e.Name, agentmem.EntityKey(e.Name), e.Type, e.Aliases, e.CreatedAt, e.UpdatedAt)
		if isUniqueViolation(err) {
			return agentmem.Errorf(agentmem.EINVALID, "Entity %q appears twice, by ID or name.", e.ID)
		} else if err != nil {
			return fmt.Errorf("import entity: %w", err)
		}
		if err := writeEntityNames(ctx, tx, e.Entity); err != nil {
			return err
		}
		for _, r := range e.References {
			if _, err := tx.Exec(ctx, `INSERT INTO entity_refs (user_id, entity_id, thread_id, action, seq, at) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (user_id, entity_id, thread_id, action) DO UPDATE SET seq = excluded.seq, at = excluded.at`,
				userID, r.EntityID, r.ThreadID, r.Action, r.Seq, r.At); err != nil {
				return fmt.Errorf("import entity reference: %w", err)
			}
		}
	}
	for _, r := range p.Reflections {
		if _, err := tx.Exec(ctx, `INSERT INTO reflections (`+reflectionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (user_id, thread_id) DO UPDATE SET status = excluded.status, through_seq = excluded.through_seq,
			topics = excluded.topics, insights = excluded.insights, reason = excluded.reason, updated_at = excluded.updated_at`,
			userID, r.ThreadID, r.Status, r.ThroughSeq, r.Topics, r.Insights, r.Reason, r.UpdatedAt); err != nil {
			return fmt.Errorf("import reflection: %w", err)
		}
	}
	return nil
}

// FindAgentIDs implements agentmem.ImportStore.
func (s *Store) FindAgentIDs(ctx context.Context, userID string) ([]string, error) {
	ids := []string{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT agent_id FROM threads WHERE user_id = $1 AND agent_id <> ''
			UNION SELECT agent_id FROM sessions WHERE user_id = $1 UNION SELECT agent_id FROM notes WHERE user_id = $1 ORDER BY 1`, userID)
		if err != nil {
			return fmt.Errorf("find agents: %w", err)
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("find agents: %w", err)
		}
		return nil
	})
	return ids, err
}

// FindThreadReflections implements agentmem.ImportStore.
func (s *Store) FindThreadReflections(ctx context.Context, userID string, threadIDs []string) ([]*agentmem.Reflection, error) {
	if len(threadIDs) > agentmem.MaxPageSize {
		return nil, agentmem.Errorf(agentmem.EINVALID, "At most %d threads may be asked for, not %d.", agentmem.MaxPageSize, len(threadIDs))
	}
	var out []*agentmem.Reflection
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+reflectionColumns+` FROM reflections WHERE user_id = $1 AND thread_id = ANY($2)`, userID, orEmpty(threadIDs))
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
