package index_test

import (
	"context"
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
	"github.com/agentmem/agentmem/llm/minilm"
	"github.com/agentmem/agentmem/sqlite"
)

// TestIndexer_Enqueue: batches appended to a thread share index jobs, and
// no batch is left unindexed, also when it arrives while the shared jobs
// run.
func TestIndexer_Enqueue(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space()}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	appendOne := func(i int) {
		t.Helper()
		msgs, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: fmt.Sprintf("message number %d about gardening", i)}}, agentmem.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Enqueue(ctx, "alice", "t", msgs[0].Seq, msgs[0].Seq); err != nil {
			t.Fatal(err)
		}
	}
	claim := func() []*agentmem.Job {
		t.Helper()
		jobs, err := s.ClaimJobs(ctx, "w", []string{index.JobKind}, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	run := func(jobs []*agentmem.Job) {
		t.Helper()
		for _, j := range jobs {
			if err := ix.Run(ctx, j); err != nil {
				t.Fatal(err)
			}
			if err := s.CompleteJob(ctx, j.UserID, j.ID, "w"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 5 {
		appendOne(i)
	}
	first := claim()
	if len(first) != 1 {
		t.Fatalf("5 appends made %d jobs, want 1 shared job", len(first))
	}
	appendOne(5) // the first job runs: a second shared job collects
	appendOne(6)
	if n := queued(t, s); n != 1 {
		t.Fatalf("2 appends while the first job runs queued %d jobs, want 1", n)
	}
	// The index jobs of a user run one at a time: the second waits for the
	// first, which may have read the thread before message 6 was appended.
	if got := claim(); len(got) != 0 {
		t.Fatalf("claimed %d jobs while the user's first index job runs", len(got))
	}
	run(first)
	second := claim()
	if len(second) != 1 {
		t.Fatalf("claimed %d jobs after the first was done, want the second", len(second))
	}
	appendOne(7) // the second runs, the first key is free again
	run(second)
	third := claim()
	if len(third) != 1 {
		t.Fatalf("an append while the second job ran made %d jobs, want 1", len(third))
	}
	run(third)
	vs, err := s.FindVectors(ctx, "alice", emb.Space(), []string{agentmem.ScopeMessages})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 8 {
		t.Fatalf("%d messages have vectors, want all 8", len(vs))
	}
}

// queued counts the queued index jobs.
func queued(t *testing.T, s agentmem.JobStore) int {
	t.Helper()
	st, kind := agentmem.JobQueued, index.JobKind
	jobs, _, err := s.FindJobs(ctx, agentmem.JobFilter{Status: &st, Kind: &kind})
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

// TestIndexer_Lag: a thread's lag is its messages from the first seq its
// waiting index jobs start at, and the age of the oldest of them; a thread
// whose ID begins with another's is apart; 0 once the jobs are done.
func TestIndexer_Lag(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	ix := &index.Indexer{Store: s, Jobs: s}
	thread := func(id string, n int) *agentmem.Thread {
		t.Helper()
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: id}); err != nil {
			t.Fatal(err)
		}
		msgs := make([]*agentmem.Message, n)
		for i := range msgs {
			msgs[i] = &agentmem.Message{Role: agentmem.RoleUser, Content: fmt.Sprint("turn ", i)}
		}
		if _, err := s.AppendMessages(ctx, "alice", id, msgs, agentmem.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		th, err := s.FindThreadByID(ctx, "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	t1, t10 := thread("t1", 10), thread("t10", 30)
	lag := func(th *agentmem.Thread) (int64, time.Time) {
		t.Helper()
		n, since, err := ix.Lag(ctx, th)
		if err != nil {
			t.Fatal(err)
		}
		return n, since
	}
	if n, since := lag(t1); n != 0 || !since.IsZero() {
		t.Fatalf("no jobs: lag %d since %v, want 0", n, since)
	}
	before := time.Now()
	if err := ix.Enqueue(ctx, "alice", "t1", 4, 10); err != nil {
		t.Fatal(err)
	}
	if err := ix.Enqueue(ctx, "alice", "t10", 1, 30); err != nil {
		t.Fatal(err)
	}
	if n, since := lag(t1); n != 7 || since.Before(before.Add(-time.Second)) || since.After(time.Now()) {
		t.Fatalf("t1 with a job from seq 4: lag %d since %v, want 7 since about %v", n, since, before)
	}
	if n, _ := lag(t10); n != 30 {
		t.Fatalf("t10: lag %d, want 30", n)
	}
	jobs, err := s.ClaimJobs(ctx, "w", []string{index.JobKind}, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if n, _ := lag(t1); n != 7 && j.UserID == "alice" {
			t.Fatalf("t1 with its job running: lag %d, want 7", n)
		}
		if err := s.CompleteJob(ctx, j.UserID, j.ID, "w"); err != nil {
			t.Fatal(err)
		}
	}
	if n, since := lag(t1); n != 0 || !since.IsZero() {
		t.Fatalf("jobs done: lag %d since %v, want 0", n, since)
	}
}

// TestIndexer_Shed: past ShedBacklog index jobs waiting, indexing keeps
// windows, vectors and memories but describes chunks with the model's
// fallback and extracts no entities, and says so; back under it, the
// model describes again and entities are extracted.
func TestIndexer_Shed(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	srv := llmtest.NewServer(t)
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text(`{"summary": "From the model.", "topics": ["travel"], "entities": []}`)
	})
	log, buf := testutil.NewLog()
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space(), Log: log, ChunkTurns: 2, ShedBacklog: 2,
		Describer: &index.ModelChunkDescriber{Chat: testutil.NewChat(t, srv.BaseURL())}}
	turns := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I met Ana in Lisbon last summer."},
		{Role: agentmem.RoleAssistant, Content: "How lovely! Did Ana show you around Lisbon?"},
	}
	index1 := func(thread string) (*agentmem.Chunk, int) {
		t.Helper()
		if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: thread}); err != nil {
			t.Fatal(err)
		}
		msgs := []*agentmem.Message{{Role: turns[0].Role, Content: turns[0].Content}, {Role: turns[1].Role, Content: turns[1].Content}}
		if _, err := s.AppendMessages(ctx, "alice", thread, msgs, agentmem.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := ix.IndexRange(ctx, "alice", thread, 1, 2); err != nil {
			t.Fatal(err)
		}
		chunks, err := s.FindChunks(ctx, "alice", thread)
		if err != nil || len(chunks) != 1 {
			t.Fatalf("chunks %v, %v; want 1", chunks, err)
		}
		ents, _, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return chunks[0], len(ents)
	}
	// Three jobs of other threads wait: past the bound of 2.
	for i := range 3 {
		if err := ix.Enqueue(ctx, "bob", fmt.Sprint("waiting", i), 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	c, ents := index1("behind")
	if c.Summary == "From the model." || len(srv.ChatRequests()) != 0 || ents != 0 || !ix.Shedding() {
		t.Fatalf("behind: summary %q, %d model calls, %d entities, shedding %v; want the fallback's, none, none, true", c.Summary, len(srv.ChatRequests()), ents, ix.Shedding())
	}
	if !strings.Contains(buf.String(), "indexing behind") {
		t.Fatalf("shedding not logged:\n%s", buf.String())
	}
	hits, err := s.SearchText(ctx, "alice", agentmem.TextQuery{Query: "Lisbon", Scopes: []string{agentmem.ScopeMessages}, Limit: 10})
	if err != nil || len(hits) != 2 {
		t.Fatalf("behind: %d messages found by their windows, %v; want 2", len(hits), err)
	}
	// The backlog drains: past the next look, the model describes again.
	jobs, err := s.ClaimJobs(ctx, "w", []string{index.JobKind}, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if err := s.CompleteJob(ctx, j.UserID, j.ID, "w"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2100 * time.Millisecond) // a gap: the indexer looks at its backlog again only once shedCheck (2 s) has passed
	c, ents = index1("caught-up")
	if c.Summary != "From the model." || ents == 0 || ix.Shedding() {
		t.Fatalf("caught up: summary %q, %d entities, shedding %v; want the model's, some, false", c.Summary, ents, ix.Shedding())
	}
	if !strings.Contains(buf.String(), "indexing caught up") {
		t.Fatalf("catching up not logged:\n%s", buf.String())
	}
}

// TestIndexer_TurnBefore: a range that starts with the assistant's reply
// is read with the user's turn before it, from which no memory is drawn
// again: "Hi Rufus!" answers "Rufus says hi." and names no one the user
// is called, where "Enjoy the walk, Sam." does.
func TestIndexer_TurnBefore(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	for i, m := range []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I live in Leeds. Rufus says hi."},
		{Role: agentmem.RoleAssistant, Content: "Hi Rufus! Keep up the walks."},
		{Role: agentmem.RoleUser, Content: "Off for a walk."},
		{Role: agentmem.RoleAssistant, Content: "Enjoy the walk, Sam."},
	} {
		if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{m}, agentmem.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := ix.IndexRange(ctx, "alice", "t", int64(i+1), int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	ms, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Text)
	}
	slices.Sort(got)
	if want := []string{"User is called Sam.", "User lives in Leeds."}; !slices.Equal(got, want) {
		t.Errorf("memories %q, want %q", got, want)
	}
}

// TestIndexer_StageCosts: the indexer accounts for the time of each stage
// it ran and the messages it indexed; a stage it skipped costs nothing.
func TestIndexer_StageCosts(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space(), ChunkTurns: 2, ShedBacklog: -1}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	msgs := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I met Ana in Lisbon last summer. I live in Porto."},
		{Role: agentmem.RoleAssistant, Content: "How lovely! Did Ana show you around Lisbon?"},
		{Role: agentmem.RoleUser, Content: "She did, we walked for hours."},
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", msgs, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if costs, n := ix.StageCosts(); n != 0 || len(costs) != 5 || costs[0].Time != 0 {
		t.Fatalf("before indexing: %v, %d messages; want five stages of no time, 0", costs, n)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 1, 3); err != nil {
		t.Fatal(err)
	}
	costs, n := ix.StageCosts()
	if n != 3 {
		t.Errorf("%d messages indexed, want 3", n)
	}
	for i, want := range []string{index.StageWindows, index.StageChunks, index.StageExtract, index.StageConsolidate, index.StageEntities} {
		if i >= len(costs) || costs[i].Stage != want || costs[i].Time <= 0 {
			t.Errorf("stage %d: %+v, want %s with some time", i, costs, want)
		}
	}
	var nilIx *index.Indexer
	if costs, n := nilIx.StageCosts(); len(costs) != 5 || costs[4].Stage != index.StageEntities || costs[4].Time != 0 || n != 0 {
		t.Errorf("no indexer: %v, %d; want five stages of no time, 0", costs, n)
	}
}

// TestIndexer_WindowSums: with the static table as the bulk embedder, a
// message's vector is that of its window's text (agentmem.WindowText),
// added up from its turns' sums: the same as embedding the text, tool
// messages between turns left out, a speaker's name in.
func TestIndexer_WindowSums(t *testing.T) {
	s := testutil.MustOpenSQLite(t)
	static := minilm.NewStatic()
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space(), ShedBacklog: -1,
		Bulk: &agentmem.Embedding{Embedder: static, Space: static.Space()}}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	msgs := []*agentmem.Message{
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "I painted a sunset by the lake last week."},
		{Role: agentmem.RoleAssistant, Content: "Lovely! What colours did you use?"},
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "weather: rain"},
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "Mostly orange and a deep purple."},
		{Role: agentmem.RoleAssistant, Content: "That sounds striking. Will you frame it?"},
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "Yes, it goes in the hall, next to my grandmother's clock."},
		{Role: agentmem.RoleAssistant, Content: "A fine place for it."},
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", msgs, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	// Two ranges, as two index jobs would: the second completes windows of
	// the first.
	if err := ix.IndexRange(ctx, "alice", "t", 1, 4); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 5, 7); err != nil {
		t.Fatal(err)
	}
	turns, err := index.ReadTurns(ctx, s, "alice", "t", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(turns))
	for i, m := range turns {
		texts[i] = index.EmbedText(m)
	}
	wins := make([]string, len(turns))
	for i := range turns {
		wins[i] = agentmem.WindowText(texts, i)
	}
	want, err := static.Embed(ctx, wins)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.FindVectors(ctx, "alice", static.Space(), []string{agentmem.ScopeMessages})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float32{}
	for _, v := range vs {
		got[v.ID] = v.Vec
	}
	if len(got) != len(turns) {
		t.Fatalf("%d message vectors, want one per turn (%d)", len(got), len(turns))
	}
	for i, m := range turns {
		v := got[m.ID]
		best, bestSim := -1, -1.0
		for j := range want {
			var sim float64
			for d := range v {
				sim += float64(v[d]) * float64(want[j][d])
			}
			if sim > bestSim {
				best, bestSim = j, sim
			}
		}
		if best != i || bestSim < 0.999 {
			t.Errorf("turn %d: closest to window %d's text (cosine %.5f), want its own at ≥ 0.999", i, best, bestSim)
		}
	}
}

// memoryReads counts the reads of a user's memories' vectors in full
// (a consolidator's pool).
type memoryReads struct {
	*sqlite.Store
	n map[string]int
}

func (s *memoryReads) FindVectors(ctx context.Context, userID, space string, scopes []string) ([]agentmem.Vector, error) {
	if slices.Equal(scopes, []string{agentmem.ScopeMemories}) {
		s.n[userID]++
	}
	return s.Store.FindVectors(ctx, userID, space, scopes)
}

// TestIndexer_KeepsConsolidator: a user's jobs one after the other read
// the user's memories once, with another user's jobs between them; a
// third user's push the first's out.
func TestIndexer_KeepsConsolidator(t *testing.T) {
	s := &memoryReads{Store: testutil.MustOpenSQLite(t), n: map[string]int{}}
	emb, static := lexical.New(0), minilm.NewStatic()
	// The turns' vectors in a space of their own: the memories' space
	// holds the memories' alone.
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space(), ShedBacklog: -1,
		Bulk: &agentmem.Embedding{Embedder: static, Space: static.Space()}}
	job := func(user string, seq int64, text string) {
		t.Helper()
		if seq == 1 {
			if err := s.CreateThread(ctx, &agentmem.Thread{UserID: user, ID: "t"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.AppendMessages(ctx, user, "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: text}}, agentmem.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := ix.IndexRange(ctx, user, "t", seq, seq); err != nil {
			t.Fatal(err)
		}
	}
	job("alice", 1, "I live in Porto.")
	job("bob", 1, "I live in Oslo.")
	job("alice", 2, "I have a dog named Rex.")
	job("bob", 2, "I work as a nurse.")
	job("alice", 3, "I live in Lisbon now.")
	job("alice", 4, "I work as a baker.")
	// Read at the first job, again at the second (the user had no vectors
	// when they were first read), then caught up.
	if s.n["alice"] != 2 || s.n["bob"] != 2 {
		t.Errorf("memories read %v, want twice a user", s.n)
	}
	job("carol", 1, "I am vegetarian.")
	job("dave", 1, "I play the cello.")
	job("alice", 5, "I am allergic to peanuts.")
	if s.n["alice"] != 3 {
		t.Errorf("alice's memories read %d times, want again after two other users' jobs", s.n["alice"])
	}
	ms, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Text)
	}
	slices.Sort(got)
	want := []string{"User has a dog named Rex.", "User is allergic to peanuts.", "User lives in Lisbon now.", "User works as a baker."}
	if !slices.Equal(got, want) {
		t.Errorf("alice's valid memories %q, want %q", got, want)
	}
}
