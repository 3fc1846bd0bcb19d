package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

// appendJobKind is the kind of the jobs of testAppendJobs.
const appendJobKind = "index"

// sharedJobs returns AppendOptions.Jobs alternatives shaped like the
// indexer's: the thread's two shared keys, then a key of the batch's own.
// calls counts the calls and last keeps the jobs of the last one.
type sharedJobs struct {
	mu    sync.Mutex
	calls int
	last  []*agentmem.Job
}

func (sj *sharedJobs) jobs(stored []*agentmem.Message) []*agentmem.Job {
	first, last := stored[0], stored[len(stored)-1]
	shared := json.RawMessage(fmt.Sprintf(`{"thread_id":%q,"seq_from":%d}`, first.ThreadID, first.Seq))
	own := json.RawMessage(fmt.Sprintf(`{"thread_id":%q,"seq_from":%d,"seq_to":%d}`, first.ThreadID, first.Seq, last.Seq))
	jobs := []*agentmem.Job{
		{Kind: appendJobKind, Key: first.ThreadID + "#a", Payload: shared},
		{Kind: appendJobKind, Key: first.ThreadID + "#b", Payload: shared},
		{Kind: appendJobKind, Key: fmt.Sprintf("%s:%d-%d", first.ThreadID, first.Seq, last.Seq), Payload: own},
	}
	sj.mu.Lock()
	sj.calls++
	sj.last = jobs
	sj.mu.Unlock()
	return jobs
}

// stored returns the job of the last call that the store filled in.
func (sj *sharedJobs) stored() *agentmem.Job {
	sj.mu.Lock()
	defer sj.mu.Unlock()
	var out *agentmem.Job
	for _, j := range sj.last {
		if j.Status != "" {
			if out != nil {
				panic("two jobs stored by one append")
			}
			out = j
		}
	}
	return out
}

// activeJobs returns the queued and running jobs of appendJobKind of a user.
func activeJobs(tb testing.TB, s agentmem.Store, user string) []*agentmem.Job {
	tb.Helper()
	var active []*agentmem.Job
	for _, j := range AllJobs(tb, s, agentmem.JobFilter{UserID: &user, Kind: ptr(appendJobKind)}) {
		if j.Status == agentmem.JobQueued || j.Status == agentmem.JobRunning {
			active = append(active, j)
		}
	}
	return active
}

// testAppendJobs: AppendOptions.Jobs stores a batch's job in the append's
// own transaction, picking among alternatives so that the batches of a
// busy thread share jobs.
func testAppendJobs(t *testing.T, s agentmem.Store) {
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "t"})
	var sj sharedJobs
	appendOne := func(t *testing.T, thread, content string) []*agentmem.Message {
		t.Helper()
		out, err := s.AppendMessages(ctx, "alice", thread, []*agentmem.Message{{Role: "user", Content: content}}, agentmem.AppendOptions{Jobs: sj.jobs})
		if err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		return out
	}

	t.Run("Stored", func(t *testing.T) {
		var seen []*agentmem.Message
		opt := agentmem.AppendOptions{Jobs: func(stored []*agentmem.Message) []*agentmem.Job {
			seen = stored
			return sj.jobs(stored)
		}}
		out, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: "user", Content: "one"}, {Role: "assistant", Content: "two"}}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || seen[0].Seq != 1 || seen[1].Seq != 2 || seen[0].ID != out[0].ID || seen[0].ThreadID != "t" {
			t.Fatalf("Jobs was called with %+v, want the stored batch %+v", seen, out)
		}
		j := sj.stored()
		if j == nil || j.Key != "t#a" || j.UserID != "alice" || j.Status != agentmem.JobQueued || j.ID == "" || j.CreatedAt.IsZero() {
			t.Fatalf("job stored = %+v, want the first alternative filled in", j)
		}
		if sj.last[1].Status != "" || sj.last[1].ID != "" || sj.last[1].UserID != "" {
			t.Fatalf("an alternative not stored was changed: %+v", sj.last[1])
		}
		got := MustFindJob(t, s, "alice", j.ID)
		var payload struct {
			ThreadID string `json:"thread_id"`
			SeqFrom  int64  `json:"seq_from"`
		}
		if err := json.Unmarshal(got.Payload, &payload); err != nil || got.Key != "t#a" || got.Status != agentmem.JobQueued ||
			payload.ThreadID != "t" || payload.SeqFrom != 1 {
			t.Fatalf("stored job = %+v (payload %s)", got, got.Payload)
		}
	})

	t.Run("Dedupe", func(t *testing.T) {
		// A queued job covers every batch until it starts: no more jobs.
		for i := range 5 {
			appendOne(t, "t", fmt.Sprintf("queued %d", i))
			if j := sj.stored(); j != nil {
				t.Fatalf("append %d stored job %+v while t#a is queued", i, j)
			}
		}
		if n := len(activeJobs(t, s, "alice")); n != 1 {
			t.Fatalf("%d active jobs after 6 appends, want 1", n)
		}
		// t#a runs: the next batches share t#b.
		if claimed := MustClaimJobs(t, s, "w", []string{appendJobKind}, 10, time.Minute); len(claimed) != 1 || claimed[0].Key != "t#a" {
			t.Fatalf("claimed %v, want t#a", jobIDs(claimed))
		}
		appendOne(t, "t", "while a runs")
		if j := sj.stored(); j == nil || j.Key != "t#b" {
			t.Fatalf("append while t#a runs stored %+v, want t#b", j)
		}
		for i := range 3 {
			appendOne(t, "t", fmt.Sprintf("b queued %d", i))
			if j := sj.stored(); j != nil {
				t.Fatalf("append stored %+v while t#b is queued", j)
			}
		}
		// Both shared jobs run: each batch gets a job of its own.
		if claimed := MustClaimJobs(t, s, "w", []string{appendJobKind}, 10, time.Minute); len(claimed) != 1 || claimed[0].Key != "t#b" {
			t.Fatalf("claimed %v, want t#b", jobIDs(claimed))
		}
		for i := range 2 {
			msgs := appendOne(t, "t", fmt.Sprintf("both run %d", i))
			if j, want := sj.stored(), fmt.Sprintf("t:%d-%d", msgs[0].Seq, msgs[0].Seq); j == nil || j.Key != want {
				t.Fatalf("append while both run stored %+v, want key %s", j, want)
			}
		}
		if n := len(activeJobs(t, s, "alice")); n != 4 {
			t.Fatalf("%d active jobs, want 4 (t#a, t#b and two of their own)", n)
		}
		// Once t#a is done, its key is free again.
		for _, j := range activeJobs(t, s, "alice") {
			if j.Key == "t#a" {
				if err := s.CompleteJob(ctx, "alice", j.ID, "w"); err != nil {
					t.Fatal(err)
				}
			}
		}
		appendOne(t, "t", "after a is done")
		if j := sj.stored(); j == nil || j.Key != "t#a" {
			t.Fatalf("append after t#a is done stored %+v, want a new t#a", j)
		}
	})

	t.Run("Atomic", func(t *testing.T) {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "atomic"})
		before := len(activeJobs(t, s, "alice"))
		for name, jobs := range map[string][]*agentmem.Job{
			"BadJob":     {{Kind: ""}},
			"OtherUser":  {{UserID: "bob", Kind: appendJobKind}},
			"BadPayload": {{Kind: appendJobKind, Payload: json.RawMessage(`[1]`)}},
			"MissingJob": {nil},
			"LongKey":    {{Kind: appendJobKind, Key: strings.Repeat("k", agentmem.MaxJobKeyBytes+1)}},
		} {
			_, err := s.AppendMessages(ctx, "alice", "atomic", []*agentmem.Message{{Role: "user", Content: name}},
				agentmem.AppendOptions{Jobs: func([]*agentmem.Message) []*agentmem.Job { return jobs }})
			wantCode(t, err, agentmem.EINVALID)
		}
		// A job whose ID is taken fails the append: the batch is not stored.
		taken := MustEnqueueJob(t, s, &agentmem.Job{UserID: "alice", Kind: "other"})
		_, err := s.AppendMessages(ctx, "alice", "atomic", []*agentmem.Message{{Role: "user", Content: "taken"}},
			agentmem.AppendOptions{Jobs: func([]*agentmem.Message) []*agentmem.Job {
				return []*agentmem.Job{{ID: taken.ID, Kind: appendJobKind, Key: "atomic#a"}}
			}})
		wantCode(t, err, agentmem.ECONFLICT)
		if th, err := s.FindThreadByID(ctx, "alice", "atomic"); err != nil || th.LastSeq != 0 || th.MessageCount != 0 {
			t.Fatalf("thread after failed appends: %+v, %v; want no messages", th, err)
		}
		// A batch that fails stores no job.
		msgs := appendOne(t, "atomic", "first")
		_, err = s.AppendMessages(ctx, "alice", "atomic", []*agentmem.Message{{ID: msgs[0].ID, Role: "user", Content: "another content"}},
			agentmem.AppendOptions{Jobs: sj.jobs})
		wantCode(t, err, agentmem.ECONFLICT)
		_, err = s.AppendMessages(ctx, "alice", "no-such-thread", []*agentmem.Message{{Role: "user", Content: "x"}}, agentmem.AppendOptions{Jobs: sj.jobs})
		wantCode(t, err, agentmem.ENOTFOUND)
		if n := len(activeJobs(t, s, "alice")); n != before+1 {
			t.Fatalf("%d active jobs, want %d: failed appends stored jobs", n, before+1)
		}
	})

	t.Run("Retry", func(t *testing.T) {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "retry"})
		opt := agentmem.AppendOptions{IdempotencyKey: "req-1", Jobs: sj.jobs}
		if _, err := s.AppendMessages(ctx, "alice", "retry", []*agentmem.Message{{Role: "user", Content: "hi"}}, opt); err != nil {
			t.Fatal(err)
		}
		calls := sj.calls
		if _, err := s.AppendMessages(ctx, "alice", "retry", []*agentmem.Message{{Role: "user", Content: "hi"}}, opt); err != nil {
			t.Fatal(err)
		}
		if sj.calls != calls {
			t.Fatal("Jobs was called for a retry, which stores nothing")
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		// Appenders of one thread, in one process or many, share its
		// queued job: n appends store exactly one.
		MustCreateThread(t, s, &agentmem.Thread{UserID: "carol", ID: "busy"})
		const n = 24
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = s.AppendMessages(ctx, "carol", "busy", []*agentmem.Message{{Role: "user", Content: fmt.Sprint(i)}}, agentmem.AppendOptions{Jobs: sj.jobs})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		if jobs := activeJobs(t, s, "carol"); len(jobs) != 1 || jobs[0].Key != "busy#a" {
			t.Fatalf("%d concurrent appends stored jobs %v, want one busy#a", n, jobIDs(jobs))
		}
	})
}

// testAppendJobsCoverage: while appenders and workers race, every batch is
// covered by a job that reads the thread after the batch committed (a
// shared job covers its seq_from through the thread's last seq when it
// runs). A job found queued by an append must not start, and read the
// thread, before that append has committed.
func testAppendJobsCoverage(t *testing.T, s agentmem.Store) {
	MustCreateThread(t, s, &agentmem.Thread{UserID: "dave", ID: "race"})
	const appenders, each, workers = 4, 40, 2
	var (
		sj      sharedJobs
		mu      sync.Mutex
		covered = map[int64]bool{}
		wg      sync.WaitGroup
		done    = make(chan struct{})
		errs    = make(chan error, appenders+workers)
	)
	run := func(j *agentmem.Job) error {
		var p struct {
			SeqFrom int64 `json:"seq_from"`
			SeqTo   int64 `json:"seq_to"`
		}
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return err
		}
		if p.SeqTo == 0 {
			th, err := s.FindThreadByID(ctx, "dave", "race")
			if err != nil {
				return err
			}
			p.SeqTo = th.LastSeq
		}
		mu.Lock()
		for seq := p.SeqFrom; seq <= p.SeqTo; seq++ {
			covered[seq] = true
		}
		mu.Unlock()
		return s.CompleteJob(ctx, "dave", j.ID, "w")
	}
	for range workers {
		wg.Go(func() {
			for {
				jobs, err := s.ClaimJobs(ctx, "w", []string{appendJobKind}, 4, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				for _, j := range jobs {
					if err := run(j); err != nil {
						errs <- err
						return
					}
				}
				if len(jobs) == 0 {
					select {
					case <-done:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}
		})
	}
	var appending sync.WaitGroup
	for i := range appenders {
		appending.Go(func() {
			for k := range each {
				msg := &agentmem.Message{Role: "user", Content: fmt.Sprintf("appender %d message %d", i, k)}
				if _, err := s.AppendMessages(ctx, "dave", "race", []*agentmem.Message{msg}, agentmem.AppendOptions{Jobs: sj.jobs}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	appending.Wait()
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The workers stopped once idle after the appends: run what is left.
	for _, j := range MustClaimJobs(t, s, "w", []string{appendJobKind}, 100, time.Minute) {
		if err := run(j); err != nil {
			t.Fatal(err)
		}
	}
	var missing []int64
	for seq := int64(1); seq <= appenders*each; seq++ {
		if !covered[seq] {
			missing = append(missing, seq)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("seqs %v were covered by no job that ran after they were stored", missing)
	}
}
