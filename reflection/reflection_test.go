package reflection_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/profile"
	"github.com/agentmem/agentmem/reflection"
	"github.com/agentmem/agentmem/window"
)

// reflectFixture is a store with a reflector and a profiler over it.
type reflectFixture struct {
	s  agentmem.Store
	rf *reflection.Reflector
	pr *profile.Profiler
	ix *index.Indexer
}

func newReflectFixture(t *testing.T, chat agentmem.Chat) *reflectFixture {
	t.Helper()
	return newReflectFixtureOn(t, testutil.MustOpenSQLite(t), chat)
}

// newReflectFixtureOn is newReflectFixture over a store of either
// backend.
func newReflectFixtureOn(t *testing.T, s agentmem.Store, chat agentmem.Chat) *reflectFixture {
	t.Helper()
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space()}
	sm := &window.Summarizer{Store: s}
	return &reflectFixture{
		s:  s,
		ix: ix,
		rf: &reflection.Reflector{Store: s, Chat: chat, Summarize: sm.SummarizeThrough, Embed: ix.EmbedMemory, Emb: emb, Space: emb.Space()},
		pr: &profile.Profiler{Store: s, Chat: chat},
	}
}

// endThread stores a thread of user turns and ends it.
func (f *reflectFixture) endThread(t *testing.T, id string, turns ...string) {
	t.Helper()
	if err := f.s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: id, Title: "About " + id}); err != nil {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for i, c := range turns {
		role := agentmem.RoleUser
		if i%2 == 1 {
			role = agentmem.RoleAssistant
		}
		msgs = append(msgs, &agentmem.Message{Role: role, Content: c})
	}
	if _, err := f.s.AppendMessages(ctx, "alice", id, msgs, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.EndThread(ctx, "alice", id); err != nil {
		t.Fatal(err)
	}
}

// runJobs runs the due jobs of kinds as a worker would, failing a run
// that errs (retried at once) until no job is due; it returns the errors.
func (f *reflectFixture) runJobs(t *testing.T, kinds ...string) []error {
	t.Helper()
	handlers := map[string]func(context.Context, *agentmem.Job) error{
		reflection.JobKind: f.rf.Run,
		profile.JobKind:    f.pr.Run,
	}
	var errs []error
	for range 50 {
		jobs, err := f.s.ClaimJobs(ctx, "test", kinds, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return errs
		}
		for _, j := range jobs {
			if err := handlers[j.Kind](ctx, j); err != nil {
				errs = append(errs, err)
				if err := f.s.FailJob(ctx, j.UserID, j.ID, "test", err.Error(), time.Now()); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := f.s.CompleteJob(ctx, j.UserID, j.ID, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("jobs kept coming")
	return nil
}

func (f *reflectFixture) reflection(t *testing.T, thread string) *agentmem.Reflection {
	t.Helper()
	r, err := f.s.FindReflection(ctx, "alice", thread)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *reflectFixture) insights(t *testing.T) []*agentmem.Memory {
	t.Helper()
	kind := agentmem.MemoryInsight
	ms, _, err := f.s.FindMemories(ctx, "alice", agentmem.MemoryFilter{Kind: &kind})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestReflect_NoModel: without a model a thread's reflection is
// no-insight and says why; its summary reaches its end; the profile is
// assembled from the memories extracted.
func TestReflect_NoModel(t *testing.T) {
	f := newReflectFixture(t, nil)
	f.endThread(t, "t1", "I live in Lisbon and I work as a nurse.", "Nice!", "My favourite food is grilled sardines.", "Yum.")
	if err := f.ix.IndexRange(ctx, "alice", "t1", 1, 4); err != nil {
		t.Fatal(err)
	}
	if err := f.rf.Enqueue(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	if r := f.reflection(t, "t1"); r.Status != agentmem.ReflectionPending {
		t.Fatalf("reflection of an ended thread before its job: %+v, want pending", r)
	}
	if errs := f.runJobs(t, reflection.JobKind, profile.JobKind); len(errs) != 0 {
		t.Fatal(errs)
	}
	r := f.reflection(t, "t1")
	if r.Status != agentmem.ReflectionNoInsight || !strings.Contains(r.Reason, "No model") || r.ThroughSeq != 4 || len(r.Insights) != 0 {
		t.Fatalf("reflection %+v", r)
	}
	if sum, err := f.s.FindSummary(ctx, "alice", "t1"); err != nil || sum.ThroughSeq != 4 {
		t.Fatalf("summary %+v, %v; want one through seq 4", sum, err)
	}
	p, err := f.s.FindProfile(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"User lives in Lisbon.", "User works as a nurse.", "Place:", "Job:"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("assembled profile lacks %q:\n%s", want, p.Text)
		}
	}
	if p.Method != agentmem.ProfileAssembled || p.Version != 1 || len(p.Sources) < 3 {
		t.Fatalf("profile %+v", p)
	}
	// Refreshing with nothing new stores no new version.
	again, err := f.pr.Refresh(ctx, "alice")
	if err != nil || again.Version != 1 {
		t.Fatalf("refresh without news: %+v, %v", again, err)
	}
	// The memories it used are processed.
	unprocessed := false
	if ms, _, err := f.s.FindMemories(ctx, "alice", agentmem.MemoryFilter{Processed: &unprocessed}); err != nil || len(ms) != 0 {
		t.Fatalf("unprocessed memories after the profile: %d, %v", len(ms), err)
	}
	// A user with nothing known has no profile.
	if _, err := f.pr.Refresh(ctx, "nobody"); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("refresh of an unknown user: %v", err)
	}
}

// TestReflect_Model: with a model, insights above the threshold become
// insight memories with provenance; a thread without insight waits, and
// three of them are reflected on together; the profile is synthesised
// from the previous one and what is new, and marks it processed.
func TestReflect_Model(t *testing.T) {
	srv := llmtest.NewServer(t)
	var prompts []string
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		p := req.LastUserMessage()
		prompts = append(prompts, p)
		switch {
		case strings.Contains(p, "You keep the profile"):
			return llmtest.Text(fmt.Sprintf("Alice is a nurse in Lisbon (profile %d).", len(prompts)))
		case strings.Contains(p, "several conversations"):
			return llmtest.Text(`{"reflection_flag": "insight", "insights": [{"category": "habits", "insight_text": "User checks the weather every morning.", "confidence": 0.8, "importance": "low"}], "topics": []}`)
		case strings.Contains(p, "retirement"):
			return llmtest.Text(`{"reflection_flag": "insight", "insights": [
				{"category": "goals", "insight_text": "User wants to retire at 60.", "confidence": 0.9, "importance": "high"},
				{"category": "nonsense", "insight_text": "User might like golf.", "confidence": 0.75, "importance": 0.2},
				{"category": "concerns", "insight_text": "User may fear markets.", "confidence": 0.4, "importance": "medium"}],
				"topics": ["retirement", "savings"]}`)
		}
		return llmtest.Text(`{"reflection_flag": "no-insight", "insights": [], "topics": ["weather"]}`)
	})
	f := newReflectFixture(t, testutil.NewChat(t, srv.BaseURL()))

	f.endThread(t, "plan", "I want to retire at 60 and save for retirement.", "Let us plan that.")
	if err := f.rf.Enqueue(ctx, "alice", "plan"); err != nil {
		t.Fatal(err)
	}
	if errs := f.runJobs(t, reflection.JobKind); len(errs) != 0 {
		t.Fatal(errs)
	}
	r := f.reflection(t, "plan")
	ins := f.insights(t)
	if r.Status != agentmem.ReflectionProcessed || len(r.Insights) != 2 || len(ins) != 2 || !slices.Equal(r.Topics, []string{"retirement", "savings"}) {
		t.Fatalf("reflection %+v; insights %d", r, len(ins))
	}
	byText := map[string]*agentmem.Memory{}
	for _, m := range ins {
		byText[m.Text] = m
		if m.ThreadID != "plan" || m.SeqFrom != 1 || m.SeqTo != 2 || m.ProcessedAt != nil || !slices.Contains(r.Insights, m.ID) {
			t.Errorf("insight %+v", m)
		}
	}
	if m := byText["User wants to retire at 60."]; m == nil || m.Category != "goals" || m.Importance != 0.9 || m.Confidence != 0.9 {
		t.Fatalf("insight %+v", m)
	}
	if m := byText["User might like golf."]; m == nil || m.Category != "other" || m.Importance != 0.2 {
		t.Fatalf("insight of an unknown category %+v", m)
	}
	hits, err := f.s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "retire", Scopes: []string{agentmem.ScopeMemories}})
	if err != nil || len(hits) != 1 {
		t.Fatalf("insights searchable: %+v, %v", hits, err)
	}

	// Three threads without insight: reflected on together.
	for i := range 3 {
		id := fmt.Sprintf("chat%d", i)
		f.endThread(t, id, "What is the weather like today?", "Sunny.")
		if err := f.rf.Enqueue(ctx, "alice", id); err != nil {
			t.Fatal(err)
		}
		if errs := f.runJobs(t, reflection.JobKind); len(errs) != 0 {
			t.Fatal(errs)
		}
		want := agentmem.ReflectionNoInsight
		if i == 2 {
			want = agentmem.ReflectionProcessed
		}
		if r := f.reflection(t, id); r.Status != want {
			t.Fatalf("after %d no-insight threads, %s is %s (%s), want %s", i+1, id, r.Status, r.Reason, want)
		}
	}
	for i := range 3 {
		r := f.reflection(t, fmt.Sprintf("chat%d", i))
		if r.Status != agentmem.ReflectionProcessed || len(r.Insights) != 1 || !strings.Contains(r.Reason, "together") {
			t.Fatalf("aggregated reflection %+v", r)
		}
	}
	var weather *agentmem.Memory
	for _, m := range f.insights(t) {
		if strings.Contains(m.Text, "weather") {
			weather = m
		}
	}
	var meta struct{ Threads []string }
	if weather == nil || json.Unmarshal(weather.Metadata, &meta) != nil || len(meta.Threads) != 3 {
		t.Fatalf("aggregated insight %+v", weather)
	}

	// The profile: synthesised, then updated with what is new only.
	p1, err := f.pr.Refresh(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if p1.Method != agentmem.ProfileLLM || p1.Version != 1 || len(p1.Sources) != 3 {
		t.Fatalf("profile %+v", p1)
	}
	last := prompts[len(prompts)-1]
	if !strings.Contains(last, "(none yet)") || !strings.Contains(last, "User wants to retire at 60.") {
		t.Fatalf("first profile prompt:\n%s", last)
	}
	if again, err := f.pr.Refresh(ctx, "alice"); err != nil || again.Version != 1 {
		t.Fatalf("refresh with nothing new: %+v, %v", again, err)
	}
	if err := f.s.CreateMemory(ctx, &agentmem.Memory{UserID: "alice", Text: "User moved to Porto.", Category: "place"}); err != nil {
		t.Fatal(err)
	}
	p2, err := f.pr.Refresh(ctx, "alice")
	if err != nil || p2.Version != 2 || len(p2.Sources) != 4 {
		t.Fatalf("second profile %+v, %v", p2, err)
	}
	last = prompts[len(prompts)-1]
	if !strings.Contains(last, p1.Text) || !strings.Contains(last, "User moved to Porto.") || strings.Contains(last, "retire at 60") {
		t.Fatalf("second profile prompt: the previous profile and only what is new:\n%s", last)
	}
}

// TestReflect_Malformed: a malformed reflection is retried, then dead,
// and nothing of it is written but the failure.
func TestReflect_Malformed(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text(`{"reflection_flag": "insight", "insights": [{"insight_text": "User likes tea."}]}`) // no confidence
	})
	f := newReflectFixture(t, testutil.NewChat(t, srv.BaseURL()))
	f.endThread(t, "t1", "I like tea.", "Noted.")
	if err := f.rf.Enqueue(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	errs := f.runJobs(t, reflection.JobKind)
	if len(errs) != agentmem.DefaultJobAttempts {
		t.Fatalf("%d failed runs, want %d: %v", len(errs), agentmem.DefaultJobAttempts, errs)
	}
	for _, err := range errs {
		if agentmem.ErrorCode(err) != agentmem.EUNAVAILABLE {
			t.Fatalf("error %v, want EUNAVAILABLE (malformed)", err)
		}
	}
	dead := agentmem.JobDead
	if jobs, _, err := f.s.FindJobs(ctx, agentmem.JobFilter{Status: &dead}); err != nil || len(jobs) != 1 {
		t.Fatalf("dead letters %d, %v", len(jobs), err)
	}
	if r := f.reflection(t, "t1"); r.Status != agentmem.ReflectionFailed || len(r.Insights) != 0 || r.ThroughSeq != 0 ||
		!strings.Contains(r.Reason, "malformed") || !strings.Contains(r.Reason, "5 attempts") {
		t.Fatalf("reflection after the dead letter %+v; want it failed, saying why, with nothing else changed", r)
	}
	if ins := f.insights(t); len(ins) != 0 {
		t.Fatalf("insights were written: %+v", ins)
	}
}

// TestReflect_Reopened: a thread reopened before its job runs is not
// reflected on; after it ends again, its reflection covers all of it.
func TestReflect_Reopened(t *testing.T) {
	f := newReflectFixture(t, nil)
	f.endThread(t, "t1", "hello", "hi")
	if err := f.rf.Enqueue(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.AppendMessages(ctx, "alice", "t1", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "one more thing"}}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	f.runJobs(t, reflection.JobKind)
	if r := f.reflection(t, "t1"); r.Status != agentmem.ReflectionPending || r.ThroughSeq != 0 {
		t.Fatalf("a reopened thread was reflected on: %+v", r)
	}
	if _, err := f.s.EndThread(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	if err := f.rf.Enqueue(ctx, "alice", "t1"); err != nil {
		t.Fatal(err)
	}
	f.runJobs(t, reflection.JobKind)
	if r := f.reflection(t, "t1"); r.ThroughSeq != 3 {
		t.Fatalf("reflection %+v, want through seq 3", r)
	}
}

// TestReflect_EndedWhileReflecting: a thread reopened and ended again
// while its reflect job runs (during the job, or after its handler
// returned and before the job is marked done) is reflected on again
// through its last message, whether the end queues its job with the end
// (EndJobs, as the service does) or after it (Enqueue): the running job,
// which read the thread before, does not cover the new end. Its
// reflection, once written, reads as pending until the next job has run.
// Each end queues one job.
func TestReflect_EndedWhileReflecting(t *testing.T) {
	for _, tc := range []struct{ how, when string }{
		{"EndJobs", "during"}, {"EndJobs", "after"}, {"Enqueue", "during"}, {"Enqueue", "after"},
	} {
		t.Run(tc.how+"/"+tc.when, func(t *testing.T) {
			testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
				f := newReflectFixtureOn(t, s, nil)
				if err := f.s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t1"}); err != nil {
					t.Fatal(err)
				}
				appendTurns := func(turns ...string) {
					t.Helper()
					var msgs []*agentmem.Message
					for _, c := range turns {
						msgs = append(msgs, &agentmem.Message{Role: agentmem.RoleUser, Content: c})
					}
					if _, err := f.s.AppendMessages(ctx, "alice", "t1", msgs, agentmem.AppendOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				end := func() {
					t.Helper()
					if tc.how == "Enqueue" {
						if _, err := f.s.EndThread(ctx, "alice", "t1"); err != nil {
							t.Fatal(err)
						}
						if err := f.rf.Enqueue(ctx, "alice", "t1"); err != nil {
							t.Fatal(err)
						}
						return
					}
					// As the service ends a thread (core.Service.EndThread).
					if _, err := f.rf.MarkEnded(ctx, "alice", "t1"); err != nil {
						t.Fatal(err)
					}
					ended := agentmem.ThreadEnded
					th, err := f.s.UpdateThread(ctx, "alice", "t1", agentmem.ThreadUpdate{Status: &ended, EndJobs: func(th *agentmem.Thread) [][]*agentmem.Job {
						return [][]*agentmem.Job{f.rf.EndJobs(th)}
					}})
					if err != nil || !th.JustEnded {
						t.Fatalf("end: %+v, %v", th, err)
					}
				}
				reopened := false
				endAgain := func() {
					if !reopened {
						reopened = true
						appendTurns("I moved to Porto.", "I have a cat.")
						end()
					}
				}
				appendTurns("I live in Lisbon.", "I work as a nurse.")
				end()

				if tc.when == "during" {
					// The job's first step (the summary) comes after it read
					// the thread.
					summarize := f.rf.Summarize
					f.rf.Summarize = func(ctx context.Context, userID, threadID string, through int64, last bool) error {
						endAgain()
						return summarize(ctx, userID, threadID, through, last)
					}
				}
				jobs, err := f.s.ClaimJobs(ctx, "test", []string{reflection.JobKind}, 10, time.Minute)
				if err != nil || len(jobs) != 1 {
					t.Fatalf("claimed %d jobs, %v; want the end's one", len(jobs), err)
				}
				if err := f.rf.Run(ctx, jobs[0]); err != nil {
					t.Fatal(err)
				}
				endAgain()
				if r := f.reflection(t, "t1"); r.Status != agentmem.ReflectionPending {
					t.Errorf("reflection after the job that read the thread before its second end: %+v, want pending", r)
				}
				if err := f.s.CompleteJob(ctx, "alice", jobs[0].ID, "test"); err != nil {
					t.Fatal(err)
				}
				if errs := f.runJobs(t, reflection.JobKind); len(errs) != 0 {
					t.Fatal(errs)
				}
				th, err := f.s.FindThreadByID(ctx, "alice", "t1")
				if err != nil {
					t.Fatal(err)
				}
				if r := f.reflection(t, "t1"); th.Status != agentmem.ThreadEnded || th.LastSeq != 4 || r.ThroughSeq != th.LastSeq || r.Status != agentmem.ReflectionNoInsight {
					t.Fatalf("thread %s through seq %d; its reflection %+v, want it no-insight through seq %d", th.Status, th.LastSeq, r, th.LastSeq)
				}
				user, kind := "alice", reflection.JobKind
				if all, _, err := f.s.FindJobs(ctx, agentmem.JobFilter{UserID: &user, Kind: &kind}); err != nil || len(all) != 2 {
					t.Fatalf("%d reflect jobs, %v; want one per end", len(all), err)
				}
			})
		})
	}
}

// TestReflect_ThreadCalledAggregate: a thread called "aggregate" that
// ends while the job that reflects on no-insight threads together is
// queued is reflected on all the same (the two jobs' keys differ).
func TestReflect_ThreadCalledAggregate(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text(`{"reflection_flag": "no-insight", "insights": [], "topics": ["weather"]}`)
	})
	f := newReflectFixture(t, testutil.NewChat(t, srv.BaseURL()))
	f.endThread(t, "chat", "What is the weather like today?", "Sunny.")
	if err := f.rf.Enqueue(ctx, "alice", "chat"); err != nil {
		t.Fatal(err)
	}
	// Run the chat's job alone: it queues the aggregate job.
	jobs, err := f.s.ClaimJobs(ctx, "test", []string{reflection.JobKind}, 1, time.Minute)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v, %v", jobs, err)
	}
	if err := f.rf.Run(ctx, jobs[0]); err != nil {
		t.Fatal(err)
	}
	if err := f.s.CompleteJob(ctx, jobs[0].UserID, jobs[0].ID, "test"); err != nil {
		t.Fatal(err)
	}
	f.endThread(t, "aggregate", "Is it going to rain?", "No.")
	if err := f.rf.Enqueue(ctx, "alice", "aggregate"); err != nil {
		t.Fatal(err)
	}
	if errs := f.runJobs(t, reflection.JobKind); len(errs) != 0 {
		t.Fatal(errs)
	}
	if r := f.reflection(t, "aggregate"); r.Status != agentmem.ReflectionNoInsight || r.ThroughSeq != 2 {
		t.Fatalf("reflection of the thread called aggregate: %s through %d (%s)", r.Status, r.ThroughSeq, r.Reason)
	}
}
