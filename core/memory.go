package core

import (
	"context"
	"errors"

	"github.com/agentmem/agentmem"
)

// CreateMemory implements agentmem.MemoryService: the memory is stored,
// then embedded so that vector search finds it.
func (s *Service) CreateMemory(ctx context.Context, userID string, in agentmem.MemoryInput) (*agentmem.Memory, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	m := in.Memory(u.id)
	if err := s.store.CreateMemory(ctx, m); err != nil {
		return nil, err
	}
	if err := s.opt.Indexer.EmbedMemory(ctx, m); err != nil {
		// All or nothing: a memory the client is told was not created (the
		// embedder is down: 503, try again) must not be there when it
		// tries again, or the retry would make a second one.
		if derr := s.store.DeleteMemory(context.WithoutCancel(ctx), u.id, m.ID); derr != nil {
			return nil, errors.Join(err, derr)
		}
		return nil, err
	}
	u.show(m)
	return m, nil
}

// FindMemoryByID implements agentmem.MemoryService.
func (s *Service) FindMemoryByID(ctx context.Context, userID, id string) (*agentmem.Memory, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("memory_id", id); err != nil {
		return nil, err
	}
	m, err := s.store.FindMemoryByID(ctx, u.id, id)
	u.show(m)
	return m, err
}

// FindMemories implements agentmem.MemoryService.
func (s *Service) FindMemories(ctx context.Context, userID string, f agentmem.MemoryFilter) ([]*agentmem.Memory, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	ms, next, err := s.store.FindMemories(ctx, u.id, f)
	u.show(ms)
	return ms, next, err
}

// UpdateMemory implements agentmem.MemoryService: a new text is embedded.
func (s *Service) UpdateMemory(ctx context.Context, userID, id string, upd agentmem.MemoryUpdate) (*agentmem.Memory, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("memory_id", id); err != nil {
		return nil, err
	}
	m, err := s.store.UpdateMemory(ctx, u.id, id, upd)
	if err != nil {
		return nil, err
	}
	if upd.Text != nil {
		if err := s.opt.Indexer.EmbedMemory(ctx, m); err != nil {
			return nil, err
		}
	}
	u.show(m)
	return m, nil
}

// DeleteMemory implements agentmem.MemoryService.
func (s *Service) DeleteMemory(ctx context.Context, userID, id string) error {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return err
	}
	if err := agentmem.ValidateID("memory_id", id); err != nil {
		return err
	}
	return s.store.DeleteMemory(ctx, u.id, id)
}

// InvalidateMemory implements agentmem.MemoryService. The memory that
// supersedes it is not looked up (see agentmem.MemoryStore).
func (s *Service) InvalidateMemory(ctx context.Context, userID, id string, inv agentmem.MemoryInvalidation) (*agentmem.Memory, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("memory_id", id); err != nil {
		return nil, err
	}
	m, err := s.store.InvalidateMemory(ctx, u.id, id, inv.SupersededBy, inv.Reason)
	if err != nil {
		return nil, err
	}
	u.show(m)
	return m, nil
}

// FindMemoryHistory implements agentmem.MemoryService.
func (s *Service) FindMemoryHistory(ctx context.Context, userID, id string) ([]*agentmem.MemoryChange, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("memory_id", id); err != nil {
		return nil, err
	}
	return s.store.FindMemoryHistory(ctx, u.id, id)
}

// Search implements agentmem.MemoryService.
func (s *Service) Search(ctx context.Context, userID string, req agentmem.SearchRequest) (*agentmem.SearchResponse, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	return s.opt.Searcher.Search(ctx, u.id, req)
}

// Facts implements agentmem.MemoryService. A question without min_score
// takes the server's (Options.FactsMinScore).
func (s *Service) Facts(ctx context.Context, userID string, req agentmem.SearchRequest) (*agentmem.FactsResponse, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if req.MinScore == 0 {
		req.MinScore = s.opt.FactsMinScore
	}
	return s.opt.Searcher.Facts(ctx, s.opt.Chat, s.opt.ChatModel, u.id, req)
}
