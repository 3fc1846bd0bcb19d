package core

import (
	"context"
	"time"

	"github.com/agentmem/agentmem"
)

// EraseUser implements agentmem.AdminService: an admin or the user's
// tenant may erase a user; the user's own key may not (EFORBIDDEN).
func (s *Service) EraseUser(ctx context.Context, userID string) (agentmem.Counts, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return agentmem.Counts{}, err
	}
	if id := agentmem.IdentityFromContext(ctx); id != nil && id.Scope.Kind == agentmem.ScopeUser {
		return agentmem.Counts{}, agentmem.Errorf(agentmem.EFORBIDDEN, "Erasing a user needs an admin or tenant key.")
	}
	c, err := s.store.DeleteUser(ctx, u.id)
	if err != nil {
		return agentmem.Counts{}, err
	}
	// What this process keeps in memory of the user goes too.
	s.opt.Searcher.Forget(u.id)
	s.opt.Window.Forget(u.id)
	s.audit(ctx, agentmem.AuditUserErase, u, "", c)
	return c, nil
}

// Cleanup implements agentmem.AdminService.
func (s *Service) Cleanup(ctx context.Context, cutoff time.Time, dryRun bool) (*agentmem.CleanupResult, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	res := &agentmem.CleanupResult{Cutoff: agentmem.Timestamp(cutoff), DryRun: dryRun}
	const page = 500
	for after := ""; ; {
		ids, err := s.store.FindUserIDs(ctx, after, page)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			c, err := s.store.DeleteThreadsBefore(ctx, id, cutoff, dryRun)
			if err != nil {
				return nil, err
			}
			if c.Threads > 0 {
				res.Users++
			}
			res.Deleted.Add(c)
		}
		if len(ids) < page {
			break
		}
		after = ids[len(ids)-1]
	}
	if !dryRun {
		b, _ := jsonMarshal(map[string]any{"cutoff": res.Cutoff, "users": res.Users, "deleted": res.Deleted})
		e := &agentmem.AuditEvent{Actor: actor(agentmem.IdentityFromContext(ctx)), Action: agentmem.AuditCleanup, Detail: b}
		if err := s.store.CreateAuditEvent(ctx, e); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// CreateKey implements agentmem.AdminService.
func (s *Service) CreateKey(ctx context.Context, in agentmem.KeyInput) (*agentmem.NewKey, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	sc, err := agentmem.ParseScope(in.Scope)
	if err != nil {
		return nil, err
	}
	ttl, err := agentmem.ParseKeyLifetime("expires_in", in.ExpiresIn)
	if err != nil {
		return nil, err
	}
	token, k, err := agentmem.NewAPIKey(sc, in.Name, s.opt.Now(), ttl)
	if err != nil {
		return nil, err
	}
	k.CreatedBy = actor(agentmem.IdentityFromContext(ctx))
	if err := s.store.CreateKey(ctx, k); err != nil {
		return nil, err
	}
	s.audit(ctx, agentmem.AuditKeyCreate, scopeUser(sc), k.ID, map[string]string{"scope": sc.String(), "name": in.Name})
	return &agentmem.NewKey{Key: k, Token: token}, nil
}

// scopeUser is the user a key's scope names, for the audit log.
func scopeUser(sc agentmem.Scope) user {
	return user{id: sc.StoredUserID(sc.UserID), name: sc.UserID}
}

// FindKeys implements agentmem.AdminService.
func (s *Service) FindKeys(ctx context.Context, f agentmem.KeyFilter) ([]*agentmem.APIKey, string, error) {
	if err := admin(ctx); err != nil {
		return nil, "", err
	}
	return s.store.FindKeys(ctx, f)
}

// RevokeKey implements agentmem.AdminService.
func (s *Service) RevokeKey(ctx context.Context, id string) (*agentmem.APIKey, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("key", id); err != nil {
		return nil, err
	}
	k, err := s.store.RevokeKey(ctx, id)
	if err != nil {
		return nil, err
	}
	s.audit(ctx, agentmem.AuditKeyRevoke, scopeUser(k.Scope), k.ID, map[string]string{"scope": k.Scope.String()})
	return k, nil
}

// FindAuditEvents implements agentmem.AdminService.
func (s *Service) FindAuditEvents(ctx context.Context, f agentmem.AuditFilter) ([]*agentmem.AuditEvent, string, error) {
	if err := admin(ctx); err != nil {
		return nil, "", err
	}
	return s.store.FindAuditEvents(ctx, f)
}

// FindJobs implements agentmem.AdminService. A tenant's user is named as
// an admin addresses them (tenant:T/user:U), as FindUsers names them, so
// that a job's user_id leads to the user's routes (a retry).
func (s *Service) FindJobs(ctx context.Context, f agentmem.JobFilter) ([]*agentmem.Job, string, error) {
	if err := admin(ctx); err != nil {
		return nil, "", err
	}
	jobs, next, err := s.store.FindJobs(ctx, f)
	for _, j := range jobs {
		j.UserID = nameOf(ctx, j.UserID)
	}
	return jobs, next, err
}

// Stats implements agentmem.AdminService.
func (s *Service) Stats(ctx context.Context) (*agentmem.Stats, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	return s.store.Stats(ctx)
}

// FindUsers implements agentmem.AdminService: a tenant's user is named as
// an admin addresses them, "tenant:T/user:U" (see nameOf), never by the
// stored ID, in the answer and in f.UserID.
func (s *Service) FindUsers(ctx context.Context, f agentmem.UserFilter) ([]*agentmem.UserSummary, string, error) {
	if err := admin(ctx); err != nil {
		return nil, "", err
	}
	if f.UserID != nil {
		u, err := s.resolve(ctx, *f.UserID)
		if err != nil {
			return nil, "", err
		}
		f.UserID = &u.id
	}
	users, next, err := s.store.FindUsers(ctx, f)
	if err != nil {
		return nil, "", err
	}
	for _, u := range users {
		u.UserID = nameOf(ctx, u.UserID)
	}
	return users, next, nil
}
