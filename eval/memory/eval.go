package memory

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/agentmem/agentmem"
)

// Options tune Run. The zero value works.
type Options struct {
	// UserPrefix is put before a conversation's id to name its user
	// ("memeval-" when empty); Run needs users that do not exist yet.
	UserPrefix string
	// Pipeline describes what is evaluated, for the report.
	Pipeline string
	// Wait bounds how long Run waits for a session's background jobs
	// (5 minutes when 0); Poll is how often it looks (50 ms when 0).
	Wait time.Duration
	Poll time.Duration
	// Progress, when set, receives a line per conversation scored.
	Progress io.Writer
	// SessionDone, when set, is called after each session is stored and
	// its background jobs have run, with the sessions done so far and
	// those of all the conversations.
	SessionDone func(done, total int)
}

// WithDefaults returns o with its zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	o.UserPrefix = cmp.Or(o.UserPrefix, "memeval-")
	o.Pipeline = cmp.Or(o.Pipeline, "unnamed")
	o.Wait = cmp.Or(o.Wait, 5*time.Minute)
	o.Poll = cmp.Or(o.Poll, 50*time.Millisecond)
	if o.SessionDone == nil {
		o.SessionDone = func(int, int) {}
	}
	return o
}

// SessionDates says how Run dates the sessions.
const SessionDates = "each message carries its session's date as created_at (plus a second per turn, keeping their order); " +
	"threads, memories and jobs are stamped with the time of the run"

// Run stores each conversation as a new user of svc and scores what svc
// then knows of it (see Score). For each session in order it creates a
// thread ("session-N"), appends the turns, each with the session's date
// (plus a second per turn) as its created_at, ends the thread, and waits
// until the user has no background job due (extraction, consolidation,
// summaries, reflection, profile): svc's workers must be running. Then it
// reads the user's memories and profile, and for each question searches
// the memories, searches the default scopes (top TopK each), and builds
// a text context for a new thread ("questions") with the question as
// input.
func Run(ctx context.Context, svc agentmem.Service, convs []*Conversation, opt Options) (*Report, error) {
	opt = opt.WithDefaults()
	rep := &Report{Pipeline: opt.Pipeline, SessionDates: SessionDates}
	begin := time.Now()
	total, done := 0, 0
	for _, c := range convs {
		total += len(c.Sessions)
	}
	for _, c := range convs {
		r, err := runConversation(ctx, svc, c, opt, func() { done++; opt.SessionDone(done, total) })
		if err != nil {
			return nil, fmt.Errorf("conversation %s: %w", c.ID, err)
		}
		rep.Conversations = append(rep.Conversations, r)
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "%s: facts %d/%d, changes %d/%d, %.1f s\n", c.ID, r.Recalled, r.Facts, r.Handled, r.Changes, r.Timing.Seconds)
		}
	}
	rep.summarize()
	rep.Timing.Seconds = time.Since(begin).Seconds()
	return rep, nil
}

// runConversation stores, indexes and scores one conversation, calling
// sessionDone after each session has settled.
func runConversation(ctx context.Context, svc agentmem.Service, c *Conversation, opt Options, sessionDone func()) (*Result, error) {
	user := opt.UserPrefix + c.ID
	r := &Result{ID: c.ID, Style: c.Style, User: user, Sessions: len(c.Sessions), Messages: c.Messages()}
	var ingest, jobs time.Duration
	for i, s := range c.Sessions {
		t0 := time.Now()
		thread := &agentmem.Thread{ID: "session-" + strconv.Itoa(i+1)}
		if err := svc.CreateThread(ctx, user, thread); err != nil {
			return nil, fmt.Errorf("session %d: %w", i+1, err)
		}
		msgs := make([]*agentmem.Message, len(s.Turns))
		for j, t := range s.Turns {
			msgs[j] = &agentmem.Message{Role: t.Role, Content: t.Content, CreatedAt: s.Date.Add(time.Duration(j) * time.Second)}
		}
		for start := 0; start < len(msgs); start += agentmem.MaxBatchMessages {
			batch := msgs[start:min(start+agentmem.MaxBatchMessages, len(msgs))]
			if _, err := svc.AppendMessages(ctx, user, thread.ID, batch, ""); err != nil {
				return nil, fmt.Errorf("session %d: %w", i+1, err)
			}
		}
		if _, err := svc.EndThread(ctx, user, thread.ID); err != nil {
			return nil, fmt.Errorf("session %d: %w", i+1, err)
		}
		t1 := time.Now()
		done, err := settle(ctx, svc, user, opt)
		if err != nil {
			return nil, fmt.Errorf("session %d: %w", i+1, err)
		}
		ingest, jobs = ingest+t1.Sub(t0), jobs+max(done.Sub(t1), 0)
		sessionDone()
	}

	t0 := time.Now()
	obs, err := observe(ctx, svc, user, c)
	if err != nil {
		return nil, err
	}
	r.Counts, r.Misses = Score(c, obs)
	if err := countJobs(ctx, svc, user, r); err != nil {
		return nil, err
	}
	r.Timing = Timing{IngestSeconds: ingest.Seconds(), JobsSeconds: jobs.Seconds(), ScoreSeconds: time.Since(t0).Seconds()}
	r.Timing.Seconds = r.Timing.IngestSeconds + r.Timing.JobsSeconds + r.Timing.ScoreSeconds
	if d := (ingest + jobs).Seconds(); d > 0 {
		r.Timing.MessagesPerSecond = float64(r.Messages) / d
	}
	return r, nil
}

// observe reads what svc knows of user: every memory, the profile, and
// the answers to c's questions.
func observe(ctx context.Context, svc agentmem.Service, user string, c *Conversation) (*Observation, error) {
	obs := &Observation{}
	for f := (agentmem.MemoryFilter{IncludeInvalid: true, Limit: agentmem.MaxPageSize}); ; {
		page, next, err := svc.FindMemories(ctx, user, f)
		if err != nil {
			return nil, fmt.Errorf("memories: %w", err)
		}
		obs.Memories = append(obs.Memories, page...)
		if f.Cursor = next; next == "" {
			break
		}
	}
	p, err := svc.FindProfile(ctx, user)
	switch {
	case err == nil:
		obs.Profile = p.Text
	case agentmem.ErrorCode(err) != agentmem.ENOTFOUND:
		return nil, fmt.Errorf("profile: %w", err)
	}
	thread := &agentmem.Thread{ID: "questions"}
	if err := svc.CreateThread(ctx, user, thread); err != nil {
		return nil, fmt.Errorf("questions thread: %w", err)
	}
	for _, q := range c.Questions {
		var a Answer
		for _, s := range []struct {
			scopes []string
			out    *[]agentmem.SearchResult
		}{{[]string{agentmem.ScopeMemories}, &a.Memories}, {nil, &a.Default}} {
			res, err := svc.Search(ctx, user, agentmem.SearchRequest{Query: q.Question, Scopes: s.scopes, TopK: TopK})
			if err != nil {
				return nil, fmt.Errorf("search %q: %w", q.Question, err)
			}
			*s.out = res.Results
		}
		cx, err := svc.BuildContext(ctx, user, thread.ID, agentmem.ContextRequest{Input: q.Question, Format: agentmem.FormatText})
		if err != nil {
			return nil, fmt.Errorf("context %q: %w", q.Question, err)
		}
		a.Context = cx.Text
		obs.Answers = append(obs.Answers, a)
	}
	return obs, nil
}

// settle waits until user has no background job queued or running,
// twice in a row, so that a job the last one queued had its chance, and
// returns when the last job done finished (the zero time if none did), so
// that the time spent polling is not counted. A failing job is waited
// for through its retries' back-off until it is dead (about 15 s with
// the worker's defaults), so that the outcome does not depend on timing.
func settle(ctx context.Context, svc agentmem.Service, user string, opt Options) (time.Time, error) {
	deadline := time.Now().Add(opt.Wait)
	for quiet := 0; quiet < 2; {
		busy := false
		for _, status := range []string{agentmem.JobRunning, agentmem.JobQueued} {
			jobs, _, err := svc.FindUserJobs(ctx, user, agentmem.JobFilter{Status: &status, Limit: agentmem.MaxPageSize})
			if err != nil {
				return time.Time{}, fmt.Errorf("jobs: %w", err)
			}
			busy = busy || len(jobs) > 0
		}
		if quiet++; busy {
			quiet = 0
		}
		if quiet == 2 {
			break
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("background jobs still running after %v", opt.Wait)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(opt.Poll):
		}
	}
	done := agentmem.JobDone
	last, _, err := svc.FindUserJobs(ctx, user, agentmem.JobFilter{Status: &done, Limit: 1}) // newest updated first
	if err != nil || len(last) == 0 {
		return time.Time{}, err
	}
	return last[0].UpdatedAt, nil
}

// countJobs records the user's dead jobs, and those still queued (none
// after settle, unless a job queued one for later).
func countJobs(ctx context.Context, svc agentmem.Service, user string, r *Result) error {
	for _, status := range []string{agentmem.JobDead, agentmem.JobQueued} {
		jobs, _, err := svc.FindUserJobs(ctx, user, agentmem.JobFilter{Status: &status, Limit: agentmem.MaxPageSize})
		if err != nil {
			return fmt.Errorf("jobs: %w", err)
		}
		for _, j := range jobs {
			if status == agentmem.JobDead {
				r.JobsDead++
			} else {
				r.JobsDeferred++
			}
			r.Misses.Jobs = append(r.Misses.Jobs, fmt.Sprintf("%s %s (attempts %d, run at %s): %s", status, j.Kind, j.Attempts, j.RunAt.Format(time.RFC3339), j.LastError))
		}
	}
	return nil
}
