// Package reflection runs the reflect job (seed 001's session
// reflection): when a thread ends, its summary, its topics and the
// insights about the user that a model finds in it, stored as memories;
// threads without an insight are reflected on together once enough of
// them accumulate. Each reflection asks for the user's profile to be
// synthesised again (package profile).
package reflection

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/profile"
	"github.com/agentmem/agentmem/prompt"
)

// JobKind is the kind of the reflect jobs: a thread ended (summary,
// topics, insights), or the no-insight threads together.
const JobKind = "reflect"

// DefaultInsightCategories are the categories of insights unless
// configured otherwise: general ones, for any assistant.
var DefaultInsightCategories = []string{"identity", "goals", "preferences", "circumstances", "relationships", "work", "health", "concerns", "habits"}

// FinancialAdvisorCategories is seed 001's set, an example of a domain's
// configuration (see docs/reflection.md).
var FinancialAdvisorCategories = []string{"demographics", "financial_goals", "risk_profile", "current_situation", "concern", "preference"}

// DefaultInsightConfidence is seed 001's INSIGHT_CONFIDENCE_THRESHOLD:
// insights the model is less sure of are dropped.
const DefaultInsightConfidence = 0.7

//go:embed prompts/*.tmpl
var promptFS embed.FS

var reflectPrompt = template.Must(template.ParseFS(promptFS, "prompts/reflect.tmpl"))

// reflectPayload is a reflect job's payload: one thread, or the user's
// no-insight threads together.
type reflectPayload struct {
	ThreadID  string `json:"thread_id,omitempty"`
	Aggregate bool   `json:"aggregate,omitempty"`
}

// Reflector runs reflect jobs (seed 001's session reflection). When a
// thread ends, its job brings the thread's summary up to its end, notes
// its key topics and asks the model for insights about the user (JSON,
// validated): insights at or above MinConfidence become memories of kind
// insight and the thread's reflection is processed; otherwise it is
// no-insight and kept, and once MinNoInsightThreads of those accumulate
// they are reflected on together. Reflection and insights are stored in
// one transaction, so a job that fails (a model down, a malformed answer:
// retried, then a dead letter) leaves nothing half-written. Without a
// model a thread's reflection is no-insight and says why. Every
// reflection asks for the profile to be synthesised again
// (profile.JobKind).
type Reflector struct {
	Store interface {
		agentmem.ThreadStore
		agentmem.MessageStore
		agentmem.SummaryStore
		agentmem.ReflectionStore
		agentmem.JobStore
		agentmem.MemoryStore
		agentmem.VectorStore
	}
	Chat  agentmem.Chat // nil: no insights (the reflection says why)
	Model string
	Log   *slog.Logger
	// Summarize brings a thread's summary up to a seq
	// (window.Summarizer.SummarizeThrough); nil leaves summaries alone.
	Summarize func(ctx context.Context, userID, threadID string, throughSeq int64, lastAttempt bool) error
	// Embed makes an insight searchable by vector
	// (index.Indexer.EmbedMemory);
	// full-text search finds it without.
	Embed func(ctx context.Context, m *agentmem.Memory) error
	// Emb and Space (the vector space of the insights that Embed stores)
	// find a stored insight near-identical to a new one (see
	// MergeSimilarity); nil: only the same text, normalised, is merged.
	Emb   agentmem.Embedder
	Space string
	// Categories of insights (DefaultInsightCategories when empty).
	Categories []string
	// MinConfidence drops weaker insights (DefaultInsightConfidence when 0).
	MinConfidence float64
	// MaxPromptChars bounds the conversation sent
	// (prompt.DefaultMaxChars when 0): the newest turns are kept.
	MaxPromptChars int
	// ProfileManual: the profile is synthesised only when it is asked for
	// (agentmem.KnowledgeService.RefreshProfile), never because memories
	// or insights changed (EnqueueProfile does nothing).
	ProfileManual bool
}

// Enqueue asks for a thread's reflection, once it has ended: its
// reflection is pending (keeping what an earlier reflection of the thread
// found) until the job runs. The pending reflection is written anew each
// time, so that it is newer than any dead letter of an earlier job (see
// Find).
func (r *Reflector) Enqueue(ctx context.Context, userID, threadID string) error {
	_, err := r.enqueueThread(ctx, userID, threadID, endedReason)
	return err
}

func (r *Reflector) enqueueThread(ctx context.Context, userID, threadID, reason string) (*agentmem.Reflection, error) {
	ref, err := r.markPending(ctx, userID, threadID, reason)
	if err != nil {
		return nil, err
	}
	if _, err := agentmem.EnqueuePicked(ctx, r.Store, threadJobs(userID, threadID)); err != nil {
		return nil, err
	}
	return ref, nil
}

// aggregateKey is the key of the job that reflects on the user's
// no-insight threads together: with a slash, which no ID has, so that it
// is no thread's key (a thread may be called "aggregate").
const aggregateKey = "/aggregate"

// EndJobs returns the reflect job of a thread that ends, as alternatives
// (see agentmem.PickJob), for a caller that stores it in its own
// transaction (agentmem.ThreadUpdate.EndJobs, so that a thread never
// stays ended without it); MarkEnded then records the reflection as
// queued.
func (r *Reflector) EndJobs(t *agentmem.Thread) []*agentmem.Job {
	return threadJobs("", t.ID)
}

// threadJobs returns the alternatives (see agentmem.PickJob) of the
// reflect job of a thread that has ended: two keys, so that an end while
// the thread's job runs queues another. A queued job covers the end (it
// reads the thread after it), but a running one may have read the thread
// before it was reopened and ended again, and would leave the new turns
// unreflected: the other key is then queued, and runs after it (their
// Serial). The second key has a slash, which no ID has, so that it is no
// thread's first key (nor aggregateKey).
func threadJobs(userID, threadID string) []*agentmem.Job {
	b, _ := json.Marshal(reflectPayload{ThreadID: threadID}) // a struct of a string: cannot fail
	var alts []*agentmem.Job
	for _, key := range []string{threadID, threadID + "/next"} {
		alts = append(alts, &agentmem.Job{UserID: userID, Kind: JobKind, Key: key, Serial: JobKind, Payload: b})
	}
	return alts
}

// endedReason is the reason of a reflection MarkEnded marks pending.
const endedReason = "The thread ended; its reflection is queued."

// MarkEnded records that the reflection of a thread that is about to end
// is queued (its Job stored with the end): the status a client reads
// until the job has run. The job runs whether or not this is recorded. It
// returns the reflection as it was before (nil when there was none), for
// Unmark.
func (r *Reflector) MarkEnded(ctx context.Context, userID, threadID string) (before *agentmem.Reflection, err error) {
	_, before, err = r.markPendingFrom(ctx, userID, threadID, endedReason)
	return before, err
}

// Unmark undoes MarkEnded for an end that lost the race to end the thread
// to another call, whose reflect job may have run before the mark: that
// mark would then stay for good. With a reflect job of the thread queued
// or running, there is nothing to undo (it writes after the mark).
// Otherwise a reflection still pending by the mark goes back to before,
// the other call's job's, or, when before was pending itself (that job
// ran between MarkEnded's read and its write), the job is queued again.
func (r *Reflector) Unmark(ctx context.Context, userID, threadID string, before *agentmem.Reflection) error {
	if before == nil {
		return nil // the other call's job has written nothing yet: it writes after the mark
	}
	kind := JobKind
	for _, status := range []string{agentmem.JobQueued, agentmem.JobRunning} {
		jobs, _, err := r.Store.FindJobs(ctx, agentmem.JobFilter{Status: &status, Kind: &kind, UserID: &userID, Limit: agentmem.MaxPageSize})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.Key == threadID || j.Key == threadID+"/next" {
				return nil
			}
		}
	}
	now, err := r.Store.FindReflection(ctx, userID, threadID)
	if err != nil || now.Status != agentmem.ReflectionPending || now.Reason != endedReason {
		return err
	}
	if before.Status == agentmem.ReflectionPending {
		_, err := agentmem.EnqueuePicked(ctx, r.Store, threadJobs(userID, threadID))
		return err
	}
	return r.Store.PutReflections(ctx, userID, []*agentmem.Reflection{before}, nil)
}

// markPending records the thread's reflection as pending, for reason.
func (r *Reflector) markPending(ctx context.Context, userID, threadID, reason string) (*agentmem.Reflection, error) {
	ref, _, err := r.markPendingFrom(ctx, userID, threadID, reason)
	return ref, err
}

// markPendingFrom is markPending, returning the reflection before too
// (nil when there was none).
func (r *Reflector) markPendingFrom(ctx context.Context, userID, threadID, reason string) (ref, before *agentmem.Reflection, err error) {
	ref, err = r.Store.FindReflection(ctx, userID, threadID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		ref, err = &agentmem.Reflection{UserID: userID, ThreadID: threadID}, nil
	} else if err == nil {
		b := *ref
		before = &b
	}
	if err != nil {
		return nil, nil, err
	}
	ref.Status, ref.Reason = agentmem.ReflectionPending, reason
	if err := r.Store.PutReflections(ctx, userID, []*agentmem.Reflection{ref}, nil); err != nil {
		return nil, nil, err
	}
	return ref, before, nil
}

// Find returns a thread's reflection as its job stands: a pending
// reflection whose job was dead-lettered without the handler recording
// the failure (its worker died on the last attempt, so the lease expired)
// is failed. Returns ENOTFOUND as ReflectionStore.FindReflection.
//
// The dead letter is looked for among the user's dead reflect jobs, which
// are few (the store keeps no index of jobs by key), and only for a
// pending reflection.
func (r *Reflector) Find(ctx context.Context, userID, threadID string) (*agentmem.Reflection, error) {
	ref, err := r.Store.FindReflection(ctx, userID, threadID)
	if err != nil || ref.Status != agentmem.ReflectionPending {
		return ref, err
	}
	dead, kind := agentmem.JobDead, JobKind
	jobs, _, err := r.Store.FindJobs(ctx, agentmem.JobFilter{UserID: &userID, Kind: &kind, Status: &dead, Limit: agentmem.MaxPageSize})
	if err != nil {
		return nil, fmt.Errorf("find dead reflect jobs: %w", err)
	}
	for _, j := range jobs { // newest first
		// By its payload, not its key: a thread may be called "aggregate".
		var p reflectPayload
		if json.Unmarshal(j.Payload, &p) != nil || p.Aggregate || p.ThreadID != threadID {
			continue
		}
		if j.UpdatedAt.After(ref.UpdatedAt) {
			// The job's error is an operator's to read (GET /v1/jobs): it
			// may hold what a user must not see.
			ref.Status = agentmem.ReflectionFailed
			ref.Reason = fmt.Sprintf("Reflection failed: its job stopped %d times without finishing and was dead-lettered. %s", j.Attempts, retryHint)
		}
		break
	}
	return ref, nil
}

// retryHint ends the reason of a failed reflection.
const retryHint = "Retry it (POST …/threads/{thread}/reflection/retry), or end the thread again."

// Retry queues again the reflection of an ended thread whose reflection
// failed (see Find) or never was, and returns it, pending. Returns
// ENOTFOUND if the thread does not exist, and ECONFLICT if it is active
// (its end reflects on it), or its reflection is pending or done.
func (r *Reflector) Retry(ctx context.Context, userID, threadID string) (*agentmem.Reflection, error) {
	th, err := r.Store.FindThreadByID(ctx, userID, threadID)
	if err != nil {
		return nil, err
	}
	if th.Status != agentmem.ThreadEnded {
		return nil, agentmem.Errorf(agentmem.ECONFLICT, "Thread %q is active: it is reflected on when it ends.", threadID)
	}
	ref, err := r.Find(ctx, userID, threadID)
	switch {
	case agentmem.ErrorCode(err) == agentmem.ENOTFOUND:
	case err != nil:
		return nil, err
	case ref.Status == agentmem.ReflectionPending:
		return nil, agentmem.Errorf(agentmem.ECONFLICT, "The reflection of thread %q is queued already.", threadID)
	case ref.Status != agentmem.ReflectionFailed:
		return nil, agentmem.Errorf(agentmem.ECONFLICT, "Thread %q is reflected on already (%s); its new turns are, when it ends again.", threadID, ref.Status)
	}
	return r.enqueueThread(ctx, userID, threadID, "Retried; the reflection is queued.")
}

// RetryFailed queues again the reflection of a thread if it failed (see
// Find), and reports whether it did: the end of a thread that has ended
// already retries it.
func (r *Reflector) RetryFailed(ctx context.Context, userID, threadID string) (bool, error) {
	ref, err := r.Find(ctx, userID, threadID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return false, nil
	} else if err != nil || ref.Status != agentmem.ReflectionFailed {
		return false, err
	}
	_, err = r.enqueueThread(ctx, userID, threadID, "The thread ended again; its failed reflection is queued again.")
	return err == nil, err
}

// EnqueueProfile asks for the user's profile to be synthesised again,
// after a change to its memories: a refresh starts after the call. A
// queued profile job of the user covers the request; a running one does
// not, as it may have read the memories before the change, so a second
// job is queued behind it. The profile jobs of a user run one at a time
// (their Serial), so the second starts once the first is done. With
// ProfileManual it queues nothing.
func (r *Reflector) EnqueueProfile(ctx context.Context, userID string) error {
	if r.ProfileManual {
		return nil
	}
	var alts []*agentmem.Job
	for _, key := range []string{"profile", "profile#next"} {
		alts = append(alts, &agentmem.Job{UserID: userID, Kind: profile.JobKind, Key: key, Serial: profile.JobKind, Payload: json.RawMessage(`{}`)})
	}
	_, err := agentmem.EnqueuePicked(ctx, r.Store, alts)
	return err
}

// enqueue queues a reflect job. A user's reflect jobs run one at a time
// (their Serial): two threads that end together would otherwise each
// store the same insight, neither seeing the other's (see merge).
func (r *Reflector) enqueue(ctx context.Context, userID, kind, key string, payload any) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	if _, err := r.Store.EnqueueJob(ctx, &agentmem.Job{UserID: userID, Kind: kind, Key: key, Serial: JobKind, Payload: b}); err != nil {
		return err
	}
	return nil
}

// Run is the reflect job's handler (a worker.Handler).
func (r *Reflector) Run(ctx context.Context, j *agentmem.Job) error {
	var p reflectPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil || p.ThreadID == "" && !p.Aggregate {
		return agentmem.Errorf(agentmem.EINVALID, "reflect job %s has a malformed payload.", j.ID)
	}
	lastAttempt := j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts
	var err error
	if p.Aggregate {
		err = r.aggregate(ctx, j.UserID)
	} else {
		err = r.reflect(ctx, j.UserID, p.ThreadID, lastAttempt)
	}
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		return nil // the thread is gone: nothing to reflect on
	}
	if err != nil && !p.Aggregate && !errors.Is(ctx.Err(), context.Canceled) {
		// Not when the pool stops (ctx cancelled): the job is handed back,
		// and this attempt does not count.
		r.failed(ctx, j, p.ThreadID, err, lastAttempt)
	}
	return err
}

// failed records in the thread's reflection that attempt j.Attempts of
// its job failed with err: still pending, retried, or failed on the last
// attempt, the job then being a dead letter. The reason gives err's
// client-safe message (agentmem.ErrorMessage), never a provider's or the
// database's text. A reflection that another run finished meanwhile is
// left alone; a failure to record is logged, as the job's own error is
// what the worker records.
func (r *Reflector) failed(ctx context.Context, j *agentmem.Job, threadID string, err error, lastAttempt bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ref, ferr := r.Store.FindReflection(ctx, j.UserID, threadID)
	if agentmem.ErrorCode(ferr) == agentmem.ENOTFOUND {
		ref, ferr = &agentmem.Reflection{UserID: j.UserID, ThreadID: threadID}, nil
	}
	if ferr != nil {
		r.log().WarnContext(ctx, "reflection failure not recorded", agentmem.LogUser, j.UserID, agentmem.LogThread, threadID, agentmem.LogErr, ferr)
		return
	}
	if ref.Status != agentmem.ReflectionPending && ref.Status != agentmem.ReflectionFailed {
		return
	}
	msg := prompt.Truncate(strings.TrimSuffix(agentmem.ErrorMessage(err), "."), 1<<10)
	if lastAttempt {
		ref.Status = agentmem.ReflectionFailed
		ref.Reason = fmt.Sprintf("Reflection failed on each of its %d attempts; the last: %s. %s", j.Attempts, msg, retryHint)
	} else {
		ref.Status = agentmem.ReflectionPending
		ref.Reason = fmt.Sprintf("Attempt %d of %d failed (%s); it is retried.", j.Attempts, j.MaxAttempts, msg)
	}
	if perr := r.Store.PutReflections(ctx, j.UserID, []*agentmem.Reflection{ref}, nil); perr != nil {
		r.log().WarnContext(ctx, "reflection failure not recorded", agentmem.LogUser, j.UserID, agentmem.LogThread, threadID, agentmem.LogErr, perr)
	}
}

// reflect reflects on one ended thread.
func (r *Reflector) reflect(ctx context.Context, userID, threadID string, lastAttempt bool) error {
	th, err := r.Store.FindThreadByID(ctx, userID, threadID)
	if err != nil {
		return err
	}
	if th.Status != agentmem.ThreadEnded {
		return nil // reopened: its next end reflects
	}
	prev, err := r.Store.FindReflection(ctx, userID, threadID)
	if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
		prev, err = nil, nil
	} else if err != nil {
		return err
	}
	if prev != nil && prev.Status != agentmem.ReflectionPending && prev.Status != agentmem.ReflectionFailed && prev.ThroughSeq >= th.LastSeq {
		return nil // reflected on already
	}
	if r.Summarize != nil && th.LastSeq > 0 {
		if err := r.Summarize(ctx, userID, threadID, th.LastSeq, lastAttempt); err != nil {
			return fmt.Errorf("summarize thread: %w", err)
		}
	}
	var since int64
	if prev != nil {
		since = prev.ThroughSeq
	}
	in, err := r.threadInput(ctx, th, since)
	if err != nil {
		return err
	}
	ref := &agentmem.Reflection{UserID: userID, ThreadID: threadID, ThroughSeq: th.LastSeq, Topics: index.Topics(in.msgs, index.MaxTopics)}
	var insights []*agentmem.Memory
	switch {
	case r.Chat == nil:
		ref.Status, ref.Reason = agentmem.ReflectionNoInsight, "No model is configured: insights need one. The thread's summary and topics are kept, and the profile is assembled from the memories extracted."
	case len(in.Turns) == 0:
		ref.Status, ref.Reason = agentmem.ReflectionNoInsight, "No new turns since the last reflection."
	default:
		ans, err := r.ask(ctx, []reflectThread{in})
		if err != nil {
			return err
		}
		if len(ans.topics) > 0 {
			ref.Topics = ans.topics
		}
		first := since + 1
		insights = r.insights(ans, th, first, th.LastSeq)
		ref.Status, ref.Reason = r.status(ans, insights)
	}
	insights, merged, err := r.merge(ctx, userID, insights)
	if err != nil {
		return err
	}
	ref.Insights = append(ref.Insights, merged...)
	for _, m := range insights {
		ref.Insights = append(ref.Insights, m.ID)
	}
	if err := r.Store.PutReflections(ctx, userID, []*agentmem.Reflection{ref}, insights); err != nil {
		return err
	}
	r.embed(ctx, insights)
	r.log().InfoContext(ctx, "thread reflected", agentmem.LogUser, userID, agentmem.LogThread, threadID, agentmem.LogStatus, ref.Status, "insights", len(insights))
	if err := r.endedAgain(ctx, userID, threadID, ref.ThroughSeq); err != nil {
		return err
	}
	if ref.Status == agentmem.ReflectionNoInsight && r.Chat != nil {
		if err := r.enqueue(ctx, userID, JobKind, aggregateKey, reflectPayload{Aggregate: true}); err != nil {
			return err
		}
	}
	return r.EnqueueProfile(ctx, userID)
}

// endedAgain marks the thread's reflection, just written through seq
// through, pending again if the thread was reopened and has ended again
// since the job read it: that end queued a job that runs after this one
// (see threadJobs), which the reflection would otherwise seem to be. The
// job is queued here too, in case the end queued none (it covers the end
// if it did).
func (r *Reflector) endedAgain(ctx context.Context, userID, threadID string, through int64) error {
	th, err := r.Store.FindThreadByID(ctx, userID, threadID)
	if err != nil || th.Status != agentmem.ThreadEnded || th.LastSeq <= through {
		return err // ENOTFOUND: deleted meanwhile, nothing to reflect on (see Run)
	}
	_, err = r.enqueueThread(ctx, userID, threadID, "The thread ended again while it was reflected on; its reflection is queued again.")
	return err
}

// aggregate reflects on the user's no-insight threads together once
// there are MinNoInsightThreads of them; all of them are then processed,
// whether or not the model finds an insight in them together.
func (r *Reflector) aggregate(ctx context.Context, userID string) error {
	if r.Chat == nil {
		return nil
	}
	rs, err := r.Store.FindReflections(ctx, userID, agentmem.ReflectionNoInsight, agentmem.MaxPageSize)
	if err != nil || len(rs) < agentmem.MinNoInsightThreads {
		return err
	}
	var ins []reflectThread
	var ids []string
	for _, ref := range rs {
		th, err := r.Store.FindThreadByID(ctx, userID, ref.ThreadID)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		in, err := r.summarized(ctx, th)
		if err != nil {
			return err
		}
		if in.Summary == "" {
			continue // nothing to read: reflected alone already
		}
		ins, ids = append(ins, in), append(ids, th.ID)
	}
	if len(ins) < agentmem.MinNoInsightThreads {
		return nil
	}
	ans, err := r.ask(ctx, ins)
	if err != nil {
		return err
	}
	insights := r.insights(ans, nil, 0, 0)
	var sources []insightSource
	for _, id := range ids {
		sources = append(sources, insightSource{ThreadID: id})
	}
	meta, _ := json.Marshal(map[string]any{"threads": ids, "sources": sources})
	for _, m := range insights {
		m.Metadata = meta
	}
	insights, insightIDs, err := r.merge(ctx, userID, insights)
	if err != nil {
		return err
	}
	for _, m := range insights {
		insightIDs = append(insightIDs, m.ID)
	}
	reason := fmt.Sprintf("Reflected on together with the %d other no-insight threads %s: ", len(ids)-1, strings.Join(ids, ", "))
	if len(insights) == 0 {
		reason += "no insight in them together either."
	} else {
		reason += fmt.Sprintf("%d insights.", len(insights))
	}
	var out []*agentmem.Reflection
	for _, ref := range rs {
		if !slices.Contains(ids, ref.ThreadID) {
			continue
		}
		ref.Status, ref.Reason, ref.Insights = agentmem.ReflectionProcessed, reason, insightIDs
		out = append(out, ref)
	}
	if err := r.Store.PutReflections(ctx, userID, out, insights); err != nil {
		return err
	}
	r.embed(ctx, insights)
	if len(insightIDs) > 0 { // new, or confirmed
		return r.EnqueueProfile(ctx, userID)
	}
	return nil
}

// reflectThread is a thread as the reflection prompt shows it.
type reflectThread struct {
	Title, When, Summary string
	Turns                []prompt.Turn
	msgs                 []*agentmem.Message
}

// summarized is th as the reflection prompt shows it, with its summary
// (if it has one) and no turns.
func (r *Reflector) summarized(ctx context.Context, th *agentmem.Thread) (reflectThread, error) {
	in := reflectThread{Title: th.Title, When: th.UpdatedAt.Format(agentmem.SessionTimeLayout)}
	s, err := r.Store.FindSummary(ctx, th.UserID, th.ID)
	switch {
	case err == nil:
		in.Summary = s.Text
	case agentmem.ErrorCode(err) != agentmem.ENOTFOUND:
		return in, err
	}
	return in, nil
}

// threadInput reads the turns of th after seq since, the newest that fit
// MaxPromptChars, with the thread's summary.
func (r *Reflector) threadInput(ctx context.Context, th *agentmem.Thread, since int64) (reflectThread, error) {
	in, err := r.summarized(ctx, th)
	if err != nil {
		return in, err
	}
	msgs, err := index.ReadTurns(ctx, r.Store, th.UserID, th.ID, since+1, th.LastSeq)
	if err != nil {
		return in, err
	}
	budget := cmp.Or(r.MaxPromptChars, prompt.DefaultMaxChars)
	start := len(msgs)
	for start > 0 && budget >= min(len(msgs[start-1].Content), prompt.MaxTurnChars) {
		start--
		budget -= min(len(msgs[start].Content), prompt.MaxTurnChars)
	}
	in.msgs = msgs
	for _, m := range msgs[start:] {
		in.Turns = append(in.Turns, prompt.Turn{Seq: m.Seq, Role: m.Role, Name: m.Name, Content: prompt.Cut(m.Content, prompt.MaxTurnChars)})
	}
	return in, nil
}

// reflection is a model's validated answer.
type reflection struct {
	insight bool
	items   []modelInsight
	topics  []string
	dropped int // below the confidence threshold
}

type modelInsight struct {
	text, category         string
	confidence, importance float64
}

// ask asks the model to reflect on threads.
func (r *Reflector) ask(ctx context.Context, threads []reflectThread) (*reflection, error) {
	cats := r.Categories
	if len(cats) == 0 {
		cats = DefaultInsightCategories
	}
	var b strings.Builder
	if err := reflectPrompt.Execute(&b, struct {
		Threads    []reflectThread
		Categories string
	}{threads, strings.Join(cats, ", ")}); err != nil {
		return nil, fmt.Errorf("render reflection prompt: %w", err)
	}
	resp, err := r.Chat.Complete(ctx, agentmem.ChatRequest{
		Model:     r.Model,
		Messages:  []agentmem.ChatMessage{{Role: agentmem.RoleUser, Content: b.String()}},
		MaxTokens: 2048,
		JSON:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("reflect with the model: %w", err)
	}
	return r.parse(resp.Content, cats)
}

// parse validates a reflection answer: reflection_flag "insight" or
// "no-insight", insights with a text, a category (an unknown one becomes
// "other"), a numeric confidence and an importance ("high", "medium",
// "low" or a number), topics as strings. Anything else is malformed
// (EUNAVAILABLE: the job is retried).
func (r *Reflector) parse(content string, categories []string) (*reflection, error) {
	var answer struct {
		Flag     *string `json:"reflection_flag"`
		Insights *[]struct {
			Text       *string         `json:"insight_text"`
			Category   *string         `json:"category"`
			Confidence *float64        `json:"confidence"`
			Importance json.RawMessage `json:"importance"`
		} `json:"insights"`
		Topics []string `json:"topics"`
	}
	if err := prompt.DecodeJSON(content, &answer); err != nil {
		return nil, err
	}
	if answer.Flag == nil || *answer.Flag != "insight" && *answer.Flag != "no-insight" {
		return nil, prompt.Malformed(`"reflection_flag" is not "insight" or "no-insight"`)
	}
	if answer.Insights == nil {
		return nil, prompt.Malformed(`no "insights" array`)
	}
	out := &reflection{insight: *answer.Flag == "insight"}
	minConf := cmp.Or(r.MinConfidence, DefaultInsightConfidence)
	for i, in := range *answer.Insights {
		if in.Text == nil || strings.TrimSpace(*in.Text) == "" || in.Confidence == nil {
			return nil, prompt.Malformed("insight %d lacks insight_text or confidence", i)
		}
		imp, err := importance(in.Importance)
		if err != nil {
			return nil, prompt.Malformed("insight %d: %v", i, err)
		}
		cat := "other"
		if in.Category != nil && slices.Contains(categories, strings.TrimSpace(*in.Category)) {
			cat = strings.TrimSpace(*in.Category)
		}
		text := prompt.Truncate(strings.TrimSpace(*in.Text), agentmem.MaxMemoryBytes)
		if agentmem.ValidateText("insight_text", text) != nil {
			return nil, prompt.Malformed("insight %d's text is not text", i)
		}
		if conf := prompt.Clamp(*in.Confidence); conf < minConf {
			out.dropped++
		} else {
			out.items = append(out.items, modelInsight{text: text, category: cat, confidence: conf, importance: imp})
		}
	}
	for _, t := range answer.Topics {
		if t = prompt.Cut(strings.TrimSpace(t), index.MaxLabelChars); t != "" && agentmem.ValidateText("topic", t) == nil && len(out.topics) < index.MaxTopics {
			out.topics = append(out.topics, t)
		}
	}
	return out, nil
}

// importance reads "high", "medium", "low" or a number from 0 to 1.
func importance(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0.5, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "high":
			return 0.9, nil
		case "medium":
			return 0.6, nil
		case "low":
			return 0.3, nil
		}
		return 0, fmt.Errorf("importance %q is not high, medium or low", s)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("importance is neither a word nor a number")
	}
	return prompt.Clamp(f), nil
}

// insights makes the memories of a reflection's insights, drawn from th's
// seqs from..to (th nil: several threads).
func (r *Reflector) insights(ans *reflection, th *agentmem.Thread, from, to int64) []*agentmem.Memory {
	var out []*agentmem.Memory
	for _, in := range ans.items {
		m := &agentmem.Memory{
			ID:         agentmem.NewID(),
			Kind:       agentmem.MemoryInsight,
			Text:       in.text,
			Category:   in.category,
			Confidence: in.confidence,
			Importance: in.importance,
			Source:     agentmem.SourceExtracted,
		}
		if th != nil {
			m.AgentID, m.ThreadID, m.SeqFrom, m.SeqTo = th.AgentID, th.ID, max(from, 1), max(to, from, 1)
			m.Metadata, _ = json.Marshal(map[string]any{"sources": []insightSource{{ThreadID: th.ID, SeqFrom: m.SeqFrom, SeqTo: m.SeqTo}}})
		}
		out = append(out, m)
	}
	return out
}

// MergeSimilarity is the cosine at or above which a new insight is the
// same as a stored one (as extract.DuplicateSimilarity for facts).
const MergeSimilarity = 0.92

// MaxMergedConfidence bounds the confidence that confirmations raise: a
// model's insight is never certain.
const MaxMergedConfidence = 0.99

// insightSource is where an insight was found: a thread, and the seqs of
// its turns that were reflected on (none for threads reflected on
// together). An insight's metadata lists them as "sources".
type insightSource struct {
	ThreadID string `json:"thread_id"`
	SeqFrom  int64  `json:"seq_from,omitempty"`
	SeqTo    int64  `json:"seq_to,omitempty"`
}

// merge folds each of the new insights that the user has already, valid
// (the same text but for case, punctuation and articles, or a cosine of
// at least MergeSimilarity with Emb), into the stored one: its sources
// gain the new insight's, its confidence rises halfway to 1 for each
// thread that is new (or its own, if higher; at most MaxMergedConfidence)
// and its importance is the higher of the two, as its
// next version, the history naming the threads. An insight given twice in
// one answer is one. It returns the insights to create and the IDs of
// the stored ones that they confirmed.
//
// The stored insights are updated before the reflection is stored; a
// source already listed changes nothing, so a job that fails after and
// runs again confirms nothing twice.
func (r *Reflector) merge(ctx context.Context, userID string, fresh []*agentmem.Memory) ([]*agentmem.Memory, []string, error) {
	if len(fresh) == 0 {
		return nil, nil, nil
	}
	kind := agentmem.MemoryInsight
	f := agentmem.MemoryFilter{Kind: &kind, Limit: agentmem.MaxPageSize}
	var stored []*agentmem.Memory
	for {
		page, next, err := r.Store.FindMemories(ctx, userID, f)
		if err != nil {
			return nil, nil, err
		}
		stored = append(stored, page...)
		if f.Cursor = next; next == "" {
			break
		}
	}
	vecOf, freshVecs, err := r.vectors(ctx, userID, fresh)
	if err != nil {
		return nil, nil, err
	}
	var out []*agentmem.Memory
	var confirmed []string
	for i, in := range fresh {
		key := insightKey(in.Text)
		same := func(m *agentmem.Memory, vec []float32) bool {
			return insightKey(m.Text) == key || freshVecs != nil && extract.Cosine(freshVecs[i], vec) >= MergeSimilarity
		}
		if j := slices.IndexFunc(out, func(m *agentmem.Memory) bool { return same(m, vecOf[m.ID]) }); j >= 0 {
			out[j].Metadata = withSources(out[j], sourcesOf(in))
			out[j].Confidence, out[j].Importance = max(out[j].Confidence, in.Confidence), max(out[j].Importance, in.Importance)
			continue
		}
		j := slices.IndexFunc(stored, func(m *agentmem.Memory) bool { return same(m, vecOf[m.ID]) })
		if j < 0 {
			out = append(out, in)
			if freshVecs != nil {
				vecOf[in.ID] = freshVecs[i]
			}
			continue
		}
		m := stored[j]
		if !slices.Contains(confirmed, m.ID) {
			confirmed = append(confirmed, m.ID)
		}
		have := sourcesOf(m)
		var added, newThreads []string // sources not listed; of threads not listed
		for _, src := range sourcesOf(in) {
			if slices.Contains(have, src) {
				continue
			}
			added = append(added, src.ThreadID)
			if !slices.ContainsFunc(have, func(h insightSource) bool { return h.ThreadID == src.ThreadID }) {
				newThreads = append(newThreads, src.ThreadID)
			}
		}
		if len(added) == 0 {
			continue
		}
		conf := m.Confidence
		for range newThreads {
			conf += (1 - conf) / 2
		}
		conf = min(max(conf, in.Confidence), MaxMergedConfidence)
		imp := max(m.Importance, in.Importance)
		meta := withSources(m, sourcesOf(in))
		upd := agentmem.MemoryUpdate{Confidence: &conf, Importance: &imp, Metadata: &meta,
			Reason: fmt.Sprintf("The same insight was found in thread %s.", strings.Join(added, ", "))}
		if stored[j], err = r.Store.UpdateMemory(ctx, userID, m.ID, upd); err != nil {
			return nil, nil, err
		}
	}
	return out, confirmed, nil
}

// vectors returns the stored vectors of the user's memories in Space and
// those of the fresh insights, when Emb is set.
func (r *Reflector) vectors(ctx context.Context, userID string, fresh []*agentmem.Memory) (map[string][]float32, [][]float32, error) {
	vecOf := map[string][]float32{}
	if r.Emb == nil {
		return vecOf, nil, nil
	}
	texts := make([]string, len(fresh))
	for i, m := range fresh {
		texts[i] = m.Text
	}
	freshVecs, err := r.Emb.Embed(ctx, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("embed insights: %w", err)
	}
	stored, err := r.Store.FindVectors(ctx, userID, r.Space, []string{agentmem.ScopeMemories})
	if err != nil {
		return nil, nil, err
	}
	for _, v := range stored {
		vecOf[v.ID] = v.Vec
	}
	return vecOf, freshVecs, nil
}

// sourcesOf returns where an insight was found: its metadata's sources,
// or for an insight stored before they were kept, its thread and seqs or
// the threads reflected on together.
func sourcesOf(m *agentmem.Memory) []insightSource {
	var meta struct {
		Sources []insightSource `json:"sources"`
		Threads []string        `json:"threads"`
	}
	_ = json.Unmarshal(m.Metadata, &meta) // a client's own metadata: no sources
	switch {
	case len(meta.Sources) > 0:
		return meta.Sources
	case m.ThreadID != "":
		return []insightSource{{ThreadID: m.ThreadID, SeqFrom: m.SeqFrom, SeqTo: m.SeqTo}}
	}
	var out []insightSource
	for _, id := range meta.Threads {
		out = append(out, insightSource{ThreadID: id})
	}
	return out
}

// withSources returns m's metadata with its sources and more, each once,
// keeping its other keys.
func withSources(m *agentmem.Memory, more []insightSource) json.RawMessage {
	all := sourcesOf(m)
	for _, src := range more {
		if !slices.Contains(all, src) {
			all = append(all, src)
		}
	}
	meta := map[string]json.RawMessage{}
	_ = json.Unmarshal(m.Metadata, &meta) // not an object: replaced
	meta["sources"], _ = json.Marshal(all)
	b, _ := json.Marshal(meta)
	return b
}

// insightKey folds an insight's text for equality: lower case, words
// only, no articles.
func insightKey(s string) string {
	ws := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	})
	return strings.Join(slices.DeleteFunc(ws, func(w string) bool { return w == "a" || w == "an" || w == "the" }), " ")
}

// status is a thread's reflection status after ans, and why.
func (r *Reflector) status(ans *reflection, insights []*agentmem.Memory) (string, string) {
	switch {
	case len(insights) > 0:
		return agentmem.ReflectionProcessed, ""
	case ans.dropped > 0:
		return agentmem.ReflectionNoInsight, fmt.Sprintf("The model's %d insights were all below the confidence threshold %.2f.", ans.dropped, cmp.Or(r.MinConfidence, DefaultInsightConfidence))
	default:
		return agentmem.ReflectionNoInsight, "The model found no significant insight."
	}
}

// embed makes insights searchable by vector; a failure is logged, for
// full-text search finds them meanwhile.
func (r *Reflector) embed(ctx context.Context, insights []*agentmem.Memory) {
	if r.Embed == nil {
		return
	}
	for _, m := range insights {
		if err := r.Embed(ctx, m); err != nil {
			r.log().WarnContext(ctx, "insight not embedded", "memory", m.ID, agentmem.LogErr, err)
		}
	}
}

func (r *Reflector) log() *slog.Logger { return agentmem.LoggerOr(r.Log) }
