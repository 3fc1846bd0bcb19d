package core

import (
	"context"

	"github.com/agentmem/agentmem"
)

// FindUserJobs implements agentmem.UserService: the jobs of the user the
// caller names, whatever f.UserID says.
func (s *Service) FindUserJobs(ctx context.Context, userID string, f agentmem.JobFilter) ([]*agentmem.Job, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	f.UserID = &u.id
	jobs, next, err := s.store.FindJobs(ctx, f)
	u.show(jobs)
	return jobs, next, err
}

// RetryJob implements agentmem.UserService; the retry is recorded in the
// audit log.
func (s *Service) RetryJob(ctx context.Context, userID, id string) (*agentmem.Job, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("job_id", id); err != nil {
		return nil, err
	}
	j, err := s.store.RetryJob(ctx, u.id, id)
	if err != nil {
		return nil, err
	}
	s.audit(ctx, agentmem.AuditJobRetry, u, j.ID, map[string]string{"kind": j.Kind})
	u.show(j)
	return j, nil
}
