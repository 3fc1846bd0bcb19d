package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentmem/agentmem"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// CreateThread implements agentmem.ThreadService.
func (s *Service) CreateThread(ctx context.Context, userID string, t *agentmem.Thread) error {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return err
	}
	t.UserID = u.id
	if err := s.store.CreateThread(ctx, t); err != nil {
		return err
	}
	u.show(t)
	return nil
}

// FindThreadByID implements agentmem.ThreadService.
func (s *Service) FindThreadByID(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	t, err := s.store.FindThreadByID(ctx, u.id, threadID)
	u.show(t)
	return t, err
}

// FindThreads implements agentmem.ThreadService.
func (s *Service) FindThreads(ctx context.Context, userID string, f agentmem.ThreadFilter) ([]*agentmem.Thread, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	ts, next, err := s.store.FindThreads(ctx, u.id, f)
	u.show(ts)
	return ts, next, err
}

// UpdateThread implements agentmem.ThreadService. A status set to ended
// ends the thread as EndThread does.
func (s *Service) UpdateThread(ctx context.Context, userID, threadID string, upd agentmem.ThreadUpdate) (*agentmem.Thread, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	var marked *endMark
	if upd.Status != nil && *upd.Status == agentmem.ThreadEnded {
		before, err := s.store.FindThreadByID(ctx, u.id, threadID)
		if err != nil {
			return nil, err
		}
		if before.Status != agentmem.ThreadEnded {
			marked = s.ending(ctx, before)
		}
	}
	upd.EndJobs = s.endJobs
	t, err := s.store.UpdateThread(ctx, u.id, threadID, upd)
	if err == nil {
		s.ended(ctx, t, marked)
	}
	u.show(t)
	return t, err
}

// DeleteThread implements agentmem.ThreadService.
func (s *Service) DeleteThread(ctx context.Context, userID, threadID string, permanent bool) error {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return err
	}
	if err := s.store.DeleteThread(ctx, u.id, threadID, permanent); err != nil {
		return err
	}
	if permanent {
		s.audit(ctx, agentmem.AuditThreadErase, u, threadID, nil)
	}
	return nil
}

// RestoreThread implements agentmem.ThreadService.
func (s *Service) RestoreThread(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	t, err := s.store.RestoreThread(ctx, u.id, threadID)
	u.show(t)
	return t, err
}

// EndThread implements agentmem.ThreadService: the thread ends, and its
// last turns are indexed (the last chunk) and it is reflected on. Ending
// an ended thread changes nothing and queues nothing (appending reopens
// a thread, so an ended thread has no turns since it ended), unless its
// reflection failed: that is queued again.
func (s *Service) EndThread(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	t, err := s.endThread(ctx, u.id, threadID)
	u.show(t)
	return t, err
}

// endThread ends a thread of a stored user ID; see EndThread.
func (s *Service) endThread(ctx context.Context, userID, threadID string) (*agentmem.Thread, error) {
	before, err := s.store.FindThreadByID(ctx, userID, threadID)
	if err != nil {
		return nil, err
	}
	if before.Status == agentmem.ThreadEnded {
		if s.opt.Reflector != nil && before.LastSeq > 0 {
			if _, err := s.opt.Reflector.RetryFailed(ctx, userID, threadID); err != nil {
				s.log.WarnContext(ctx, "ended thread: failed reflection not queued again", agentmem.LogThread, threadID, agentmem.LogErr, err)
			}
		}
		return before, nil
	}
	marked := s.ending(ctx, before)
	// Another call (another replica's) may end it at the same time: the
	// store queues the end's jobs (endJobs) only for the call whose update
	// ended it (JustEnded), in that update's transaction, or the thread
	// would be reflected on twice.
	ended := agentmem.ThreadEnded
	t, err := s.store.UpdateThread(ctx, userID, threadID, agentmem.ThreadUpdate{Status: &ended, EndJobs: s.endJobs})
	if err == nil {
		s.ended(ctx, t, marked)
	}
	return t, err
}

// endJobs are the jobs of a thread that ends, which the store queues with
// the end, in its transaction (agentmem.ThreadUpdate.EndJobs): an index
// job, which writes its last turns into a chunk, and its reflection
// (summary, topics, insights). A process that dies right after the end
// leaves them queued, never the thread ended without them.
func (s *Service) endJobs(t *agentmem.Thread) [][]*agentmem.Job {
	if t.LastSeq == 0 {
		return nil
	}
	var jobs [][]*agentmem.Job
	if alts := s.opt.Indexer.EndJobs(t); len(alts) > 0 {
		jobs = append(jobs, alts)
	}
	if s.opt.Reflector != nil {
		jobs = append(jobs, s.opt.Reflector.EndJobs(t))
	}
	return jobs
}

// ending records, as an active thread t is about to be ended, that its
// reflection is pending: before the end, whose transaction queues the
// reflect job (endJobs), so that the job, done, is never marked pending
// again after it ran. A failure is logged, not returned: the job is
// queued with the end whatever the status says.
//
// It returns the mark (nil when it made none), for ended.
func (s *Service) ending(ctx context.Context, t *agentmem.Thread) *endMark {
	if t.LastSeq == 0 || s.opt.Reflector == nil {
		return nil
	}
	before, err := s.opt.Reflector.MarkEnded(ctx, t.UserID, t.ID)
	if err != nil {
		s.log.WarnContext(ctx, "ending thread: reflection not marked pending", agentmem.LogThread, t.ID, agentmem.LogErr, err)
		return nil
	}
	return &endMark{before: before}
}

// endMark is a reflection marked pending by ending: before is the
// reflection as it was (nil when there was none).
type endMark struct{ before *agentmem.Reflection }

// ended follows an update that was to end t, with marked what ending
// returned: when another call ended t first, its reflect job may have
// run before this call marked the reflection pending, and that mark would
// stay for good (Reflector.Unmark undoes it).
func (s *Service) ended(ctx context.Context, t *agentmem.Thread, marked *endMark) {
	if t.JustEnded || marked == nil {
		return
	}
	if err := s.opt.Reflector.Unmark(ctx, t.UserID, t.ID, marked.before); err != nil {
		s.log.WarnContext(ctx, "ending thread: a concurrent end's reflection not restored", agentmem.LogThread, t.ID, agentmem.LogErr, err)
	}
}

// EndIdleThreads ends the threads of any user idle since idleSince (at
// most a page of them per call) as EndThread does, and returns how many
// it ended: the idle sweep of serve. It is the owner's (no identity, or
// an admin).
func (s *Service) EndIdleThreads(ctx context.Context, idleSince time.Time) (int, error) {
	if err := admin(ctx); err != nil {
		return 0, err
	}
	idle, err := s.store.FindIdleThreads(ctx, idleSince, agentmem.MaxPageSize)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, th := range idle {
		t, err := s.endThread(ctx, th.UserID, th.ID)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			continue // deleted meanwhile
		} else if err != nil {
			return n, err
		}
		if t.JustEnded { // not if another replica's sweep ended it meanwhile
			n++
		}
	}
	return n, nil
}

// AppendMessages implements agentmem.ThreadService. The index job of the
// batch is stored in the append's transaction: an append that returns has
// it, even if the process dies right after.
func (s *Service) AppendMessages(ctx context.Context, userID, threadID string, msgs []*agentmem.Message, idempotencyKey string) ([]*agentmem.Message, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if len(msgs) > s.opt.MaxBatchMessages {
		return nil, agentmem.Errorf(agentmem.ETOOLARGE, "messages has %d entries; the limit is %d per request.", len(msgs), s.opt.MaxBatchMessages)
	}
	for i, m := range msgs {
		if m != nil && m.ThreadID != "" && m.ThreadID != threadID {
			return nil, agentmem.Errorf(agentmem.EINVALID, "messages[%d].thread_id %q is not the thread %q.", i, m.ThreadID, threadID)
		}
	}
	opt := s.opt.Indexer.AppendJobs(agentmem.AppendOptions{IdempotencyKey: idempotencyKey})
	return s.store.AppendMessages(ctx, u.id, threadID, msgs, opt)
}

// FindMessages implements agentmem.ThreadService.
func (s *Service) FindMessages(ctx context.Context, userID, threadID string, f agentmem.MessageFilter) ([]*agentmem.Message, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	return s.store.FindMessages(ctx, u.id, threadID, f)
}

// CreateElement implements agentmem.ThreadService.
func (s *Service) CreateElement(ctx context.Context, userID, threadID string, e *agentmem.Element) error {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return err
	}
	if e.ThreadID != "" && e.ThreadID != threadID {
		return agentmem.Errorf(agentmem.EINVALID, "thread_id %q is not the thread %q.", e.ThreadID, threadID)
	}
	return s.store.CreateElement(ctx, u.id, threadID, e)
}

// FindElements implements agentmem.ThreadService.
func (s *Service) FindElements(ctx context.Context, userID, threadID string, f agentmem.ElementFilter) ([]*agentmem.Element, string, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, "", err
	}
	return s.store.FindElements(ctx, u.id, threadID, f)
}

// FindSession implements agentmem.ThreadService.
func (s *Service) FindSession(ctx context.Context, userID, agentID string) (*agentmem.Session, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("agent_id", agentID); err != nil {
		return nil, err
	}
	sess, err := s.store.FindSession(ctx, u.id, agentID)
	u.show(sess)
	return sess, err
}

// OpenSession implements agentmem.ThreadService.
func (s *Service) OpenSession(ctx context.Context, userID, agentID string) (*agentmem.Session, bool, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, false, err
	}
	sess, created, err := s.store.OpenSession(ctx, u.id, agentID, &agentmem.Thread{})
	u.show(sess)
	return sess, created, err
}

// SetSession implements agentmem.ThreadService.
func (s *Service) SetSession(ctx context.Context, userID, agentID, threadID string) (*agentmem.Session, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := agentmem.ValidateID("thread_id", threadID); err != nil {
		return nil, err
	}
	sess, err := s.store.SetSession(ctx, u.id, agentID, threadID)
	u.show(sess)
	return sess, err
}

// BuildContext implements agentmem.ThreadService.
func (s *Service) BuildContext(ctx context.Context, userID, threadID string, req agentmem.ContextRequest) (*agentmem.Context, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	return s.opt.Window.Build(ctx, u.id, threadID, req)
}

// FindReflection implements agentmem.ThreadService: a reflection whose
// job was dead-lettered is failed (reflection.Reflector.Find).
func (s *Service) FindReflection(ctx context.Context, userID, threadID string) (*agentmem.Reflection, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	var r *agentmem.Reflection
	if s.opt.Reflector != nil {
		r, err = s.opt.Reflector.Find(ctx, u.id, threadID)
	} else {
		r, err = s.store.FindReflection(ctx, u.id, threadID)
	}
	u.show(r)
	return r, err
}

// RetryReflection implements agentmem.ThreadService
// (reflection.Reflector.Retry). Without a Reflector, nothing reflects:
// EUNAVAILABLE.
func (s *Service) RetryReflection(ctx context.Context, userID, threadID string) (*agentmem.Reflection, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	if s.opt.Reflector == nil {
		// The thread's own answer first (404, or 409 for an active one).
		if th, err := s.store.FindThreadByID(ctx, u.id, threadID); err != nil {
			return nil, err
		} else if th.Status != agentmem.ThreadEnded {
			return nil, agentmem.Errorf(agentmem.ECONFLICT, "Thread %q is active: it is reflected on when it ends.", threadID)
		}
		return nil, agentmem.Errorf(agentmem.EUNAVAILABLE, "Reflection is not configured on this server.")
	}
	r, err := s.opt.Reflector.Retry(ctx, u.id, threadID)
	u.show(r)
	return r, err
}

// ExportThread implements agentmem.ThreadService.
func (s *Service) ExportThread(ctx context.Context, userID, threadID string) (*agentmem.ThreadExport, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	release, err := s.admit(ctx, WorkBulk)
	if err != nil {
		return nil, err
	}
	defer release()
	x, err := agentmem.ExportThread(ctx, s.store, u.id, threadID)
	u.show(x)
	return x, err
}

// ImportThread implements agentmem.ThreadService: the imported messages
// are then indexed (windows, vectors, chunks, memories) by a job.
func (s *Service) ImportThread(ctx context.Context, userID string, x *agentmem.ThreadExport) (*agentmem.Thread, error) {
	u, err := s.resolve(ctx, userID)
	if err != nil {
		return nil, err
	}
	release, err := s.admit(ctx, WorkBulk)
	if err != nil {
		return nil, err
	}
	defer release()
	t, err := s.store.ImportThread(ctx, u.id, x)
	if err != nil {
		return nil, err
	}
	if t.LastSeq > 0 {
		if err := s.opt.Indexer.Enqueue(ctx, t.UserID, t.ID, 1, t.LastSeq); err != nil {
			s.log.WarnContext(ctx, "imported thread: index job not enqueued", agentmem.LogThread, t.ID, agentmem.LogErr, err)
		}
	}
	u.show(t)
	return t, nil
}
