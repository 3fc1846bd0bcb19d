package core

import (
	"context"

	"github.com/agentmem/agentmem"
)

// FindProfile implements agentmem.KnowledgeService.
func (s *Service) FindProfile(ctx context.Context, userID string) (*agentmem.Profile, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	p, err := s.store.FindProfile(ctx, u.id)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return nil, agentmem.Errorf(agentmem.ENOTFOUND, "User %q has no profile yet: it is synthesised after a thread ends, or by a refresh (POST …/profile/refresh).", u.name)
	}
	u.show(p)
	return p, err
}

// FindProfiles implements agentmem.KnowledgeService.
func (s *Service) FindProfiles(ctx context.Context, userID string, limit int, cursor string) ([]*agentmem.Profile, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	ps, next, err := s.store.FindProfiles(ctx, u.id, limit, cursor)
	u.show(ps)
	return ps, next, err
}

// RefreshProfile implements agentmem.KnowledgeService.
func (s *Service) RefreshProfile(ctx context.Context, userID string) (*agentmem.Profile, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	// The profile's job may store a version while this refresh runs: the
	// caller asked for none in particular, so it refreshes on top of it.
	p, err := s.opt.Profiler.RefreshAgain(ctx, u.id)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return nil, agentmem.Errorf(agentmem.ENOTFOUND, "Nothing is known about user %q yet: no memories to build a profile from.", u.name)
	}
	u.show(p)
	return p, err
}

// FindNotes implements agentmem.KnowledgeService.
func (s *Service) FindNotes(ctx context.Context, userID, agentID string) (*agentmem.Notes, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("agent_id", agentID); err != nil {
		return nil, err
	}
	n, err := s.store.FindNotes(ctx, u.id, agentID)
	u.show(n)
	return n, err
}

// EditNotes implements agentmem.KnowledgeService.
func (s *Service) EditNotes(ctx context.Context, userID, agentID string, op agentmem.NotesOp) (*agentmem.Notes, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("agent_id", agentID); err != nil {
		return nil, err
	}
	if err := op.Validate(); err != nil {
		return nil, err
	}
	var n *agentmem.Notes
	if op.Operation == agentmem.NotesRead {
		n, err = s.store.FindNotes(ctx, u.id, agentID)
	} else {
		n, err = s.store.PutNotes(ctx, u.id, agentID, op)
	}
	u.show(n)
	return n, err
}

// FindNotesHistory implements agentmem.KnowledgeService.
func (s *Service) FindNotesHistory(ctx context.Context, userID, agentID string, f agentmem.NotesFilter) ([]*agentmem.Notes, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	if err := agentmem.ValidateID("agent_id", agentID); err != nil {
		return nil, "", err
	}
	ns, next, err := s.store.FindNotesHistory(ctx, u.id, agentID, f)
	u.show(ns)
	return ns, next, err
}

// PutEntity implements agentmem.KnowledgeService.
func (s *Service) PutEntity(ctx context.Context, userID string, in agentmem.EntityInput) (*agentmem.Entity, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	e := &agentmem.Entity{UserID: u.id, ID: in.ID, Name: in.Name, Type: in.Type, Aliases: in.Aliases}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	var ref *agentmem.EntityRef
	if in.ThreadID != "" {
		ref = &agentmem.EntityRef{ThreadID: in.ThreadID, Action: in.Action, Seq: in.Seq, At: in.At}
		check := *ref
		check.EntityID = "pending" // the entity's ID is known once it is put
		if err := check.Validate(s.opt.Now()); err != nil {
			return nil, err
		}
		if _, err := s.store.FindThreadByID(ctx, u.id, in.ThreadID); err != nil {
			return nil, err
		}
	} else if in.Action != "" || in.Seq != 0 || !in.At.IsZero() {
		return nil, agentmem.Errorf(agentmem.EINVALID, "action, seq and at describe a reference: they need thread_id.")
	}
	if err := s.store.PutEntities(ctx, u.id, []*agentmem.Entity{e}); err != nil {
		return nil, err
	}
	if ref != nil {
		ref.EntityID = e.ID
		if err := s.store.PutEntityRefs(ctx, u.id, []*agentmem.EntityRef{ref}); err != nil {
			return nil, err
		}
	}
	u.show(e)
	return e, nil
}

// FindEntityByID implements agentmem.KnowledgeService.
func (s *Service) FindEntityByID(ctx context.Context, userID, id string) (*agentmem.Entity, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("entity_id", id); err != nil {
		return nil, err
	}
	e, err := s.store.FindEntityByID(ctx, u.id, id)
	u.show(e)
	return e, err
}

// FindEntities implements agentmem.KnowledgeService.
func (s *Service) FindEntities(ctx context.Context, userID string, f agentmem.EntityFilter) ([]*agentmem.Entity, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	es, next, err := s.store.FindEntities(ctx, u.id, f)
	u.show(es)
	return es, next, err
}

// UpdateEntity implements agentmem.KnowledgeService.
func (s *Service) UpdateEntity(ctx context.Context, userID, id string, upd agentmem.EntityUpdate) (*agentmem.Entity, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("entity_id", id); err != nil {
		return nil, err
	}
	e, err := s.store.UpdateEntity(ctx, u.id, id, upd)
	u.show(e)
	return e, err
}

// DeleteEntity implements agentmem.KnowledgeService.
func (s *Service) DeleteEntity(ctx context.Context, userID, id string) error {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return err
	}
	if err := agentmem.ValidateID("entity_id", id); err != nil {
		return err
	}
	return s.store.DeleteEntity(ctx, u.id, id)
}

// FindEntityRefs implements agentmem.KnowledgeService.
func (s *Service) FindEntityRefs(ctx context.Context, userID string, f agentmem.EntityRefFilter) ([]*agentmem.EntityRef, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	refs, next, err := s.store.FindEntityRefs(ctx, u.id, f)
	u.show(refs)
	return refs, next, err
}
