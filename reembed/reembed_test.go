package reembed_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/reembed"
	"github.com/agentmem/agentmem/worker"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ctx = context.Background()

// oldSpace is the space of the embedder used before the switch.
const oldSpace = "old-embedder/2"

// TestReembed: after the embedder changed, the reembed-all job finds the
// users with vectors of the old space, and each one's reembed job gives
// every searchable item a vector in the new space and deletes the old
// ones.
func TestReembed(t *testing.T) { testutil.Backends(t, testReembed) }

func testReembed(t *testing.T, s agentmem.Store) {
	emb := lexical.New(0)
	// alice: a thread, a deleted thread and memories, one invalidated,
	// all with vectors of the old space.
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t1"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t1", []*agentmem.Message{
		{Role: agentmem.RoleSystem, Content: "You are a travel planner."},
		{Role: agentmem.RoleUser, Content: "I live in Lisbon."},
		{Role: agentmem.RoleAssistant, Content: "Lisbon is lovely in May.", ToolCalls: []agentmem.ToolCall{{ID: "c1", Type: "function", Function: agentmem.FunctionCall{Name: "weather", Arguments: "{}"}}}},
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: `{"temp": 21}`},
		{Role: agentmem.RoleUser, Name: "ana", Content: "We want to see Porto too."},
		{Role: agentmem.RoleAssistant, Content: "Porto it is."},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "gone"}); err != nil {
		t.Fatal(err)
	}
	gone, err := s.AppendMessages(ctx, "alice", "gone", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "Forget this."}}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "alice", "gone", false); err != nil {
		t.Fatal(err)
	}
	lisbon := &agentmem.Memory{UserID: "alice", Text: "User lives in Lisbon."}
	porto := &agentmem.Memory{UserID: "alice", Text: "User moved to Porto."}
	for _, m := range []*agentmem.Memory{lisbon, porto} {
		if err := s.CreateMemory(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.InvalidateMemory(ctx, "alice", lisbon.ID, porto.ID, "moved"); err != nil {
		t.Fatal(err)
	}
	// A chunk and a summary of t1.
	chunk := &agentmem.Chunk{UserID: "alice", ThreadID: "t1", SeqFrom: 2, SeqTo: 6, Turns: 4, Text: "user: I live in Lisbon.\nassistant: …",
		Summary: "Alice lives in Lisbon and plans Porto.", CreatedAt: time.Now()}
	if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{chunk}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "t1", ThroughSeq: 6, Text: "Trip to Lisbon and Porto.", Method: agentmem.SummaryExtractive}); err != nil {
		t.Fatal(err)
	}
	old := []agentmem.Vector{
		{Scope: agentmem.ScopeChunks, ID: chunk.ID, Space: oldSpace, Vec: []float32{1, 1}},
		{Scope: agentmem.ScopeChunks, ID: chunk.ID + agentmem.SummaryVectorSuffix, Space: oldSpace, Vec: []float32{1, 1}},
		{Scope: agentmem.ScopeSummaries, ID: "t1", Space: oldSpace, Vec: []float32{1, 1}},
	}
	for i, m := range append(msgs, gone...) {
		old = append(old, agentmem.Vector{Scope: agentmem.ScopeMessages, ID: m.ID, Space: oldSpace, Vec: []float32{float32(i), 1}})
	}
	for _, m := range []*agentmem.Memory{lisbon, porto} {
		old = append(old, agentmem.Vector{Scope: agentmem.ScopeMemories, ID: m.ID, Space: oldSpace, Vec: []float32{1, 0}})
	}
	mustPut(t, s, "alice", old...)
	// bob: old vectors too; carol: the new space already.
	bob := &agentmem.Memory{UserID: "bob", Text: "User likes jazz."}
	carol := &agentmem.Memory{UserID: "carol", Text: "User likes tea."}
	for _, m := range []*agentmem.Memory{bob, carol} {
		if err := s.CreateMemory(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	mustPut(t, s, "bob", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: bob.ID, Space: oldSpace, Vec: []float32{0, 1}})
	carolVec, _ := emb.Embed(ctx, []string{carol.Text})
	mustPut(t, s, "carol", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: carol.ID, Space: emb.Space(), Vec: carolVec[0]})

	notified := 0
	r := &reembed.Reembedder{Store: s, Jobs: worker.Notifying(s, func() { notified++ }), Emb: emb, Space: emb.Space(), BatchSize: 2}
	for range 2 { // servers starting together share the job
		if err := r.EnqueueAll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	all := claimJobs(t, s, reembed.AllJobKind)
	if len(all) != 1 || all[0].UserID != reembed.SystemUser {
		t.Fatalf("reembed-all jobs %+v, want one", all)
	}
	if err := r.RunAll(ctx, all[0]); err != nil {
		t.Fatal(err)
	}
	jobs := claimJobs(t, s, reembed.JobKind)
	var users []string
	for _, j := range jobs {
		users = append(users, j.UserID)
	}
	slices.Sort(users)
	if diff := cmp.Diff([]string{"alice", "bob"}, users); diff != "" || notified < 3 {
		t.Fatalf("reembed jobs mismatch (-want +got):\n%s(notified %d times)", diff, notified)
	}
	for _, j := range jobs {
		if err := r.Run(ctx, j); err != nil {
			t.Fatalf("reembed %s: %v", j.UserID, err)
		}
	}

	// alice: every searchable item in the new space, embedded as the
	// indexer embeds it, and nothing in the old.
	want := map[string][]float32{}
	embed := func(key, text string) {
		v, _ := emb.Embed(ctx, []string{text})
		want[key] = v[0]
	}
	var turns []*agentmem.Message
	var texts []string
	for _, m := range msgs {
		if m.Role == agentmem.RoleUser || m.Role == agentmem.RoleAssistant {
			turns, texts = append(turns, m), append(texts, index.EmbedText(m))
		}
	}
	for i, m := range turns {
		embed("messages/"+m.ID, agentmem.WindowText(texts, i))
	}
	for _, m := range []*agentmem.Memory{lisbon, porto} {
		embed("memories/"+m.ID, m.Text)
	}
	embed("chunks/"+chunk.ID, chunk.Text)
	embed("chunks/"+chunk.ID+agentmem.SummaryVectorSuffix, chunk.Summary)
	embed("summaries/t1", "Trip to Lisbon and Porto.")
	got := map[string][]float32{}
	vs, err := s.FindVectors(ctx, "alice", emb.Space(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		got[v.Scope+"/"+v.ID] = v.Vec
	}
	// Stored vectors are quantised to 8 bits (agentmem.VectorStore): each
	// dimension of these unit vectors within 1/254.
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1.0/254)); diff != "" {
		t.Fatalf("alice's vectors of the new space mismatch (-want +got):\n%s", diff)
	}
	for _, user := range []string{"alice", "bob", "carol"} {
		spaces, err := s.VectorSpaces(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{emb.Space()}, spaces); diff != "" {
			t.Fatalf("%s's spaces mismatch (-want +got):\n%s", user, diff)
		}
		if vs, err := s.FindVectors(ctx, user, oldSpace, nil); err != nil || len(vs) != 0 {
			t.Fatalf("%s keeps %d vectors of the old space (%v)", user, len(vs), err)
		}
	}
	if vs, _ := s.FindVectors(ctx, "bob", emb.Space(), nil); len(vs) != 1 || vs[0].ID != bob.ID {
		t.Fatalf("bob's new vectors: %+v", vs)
	}

	t.Run("AsTheIndexer", func(t *testing.T) {
		// The indexer, indexing t1 again, writes the same message vectors.
		ix := &index.Indexer{Store: s, Emb: emb, Space: emb.Space()}
		if err := ix.IndexRange(ctx, "alice", "t1", 1, 6); err != nil {
			t.Fatal(err)
		}
		vs, err := s.FindVectors(ctx, "alice", emb.Space(), []string{agentmem.ScopeMessages})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if diff := cmp.Diff(want["messages/"+v.ID], v.Vec, cmpopts.EquateApprox(0, 1.0/254)); diff != "" {
				t.Fatalf("message %s: the indexer's vector differs from the re-embedded one (-reembed +indexer):\n%s", v.ID, diff)
			}
		}
	})
	t.Run("Again", func(t *testing.T) {
		// Nothing left to do: no user to re-embed, and a run embeds nothing.
		if err := r.RunAll(ctx, all[0]); err != nil {
			t.Fatal(err)
		}
		if jobs := claimJobs(t, s, reembed.JobKind); len(jobs) != 0 {
			t.Fatalf("%d reembed jobs after the switch, want none", len(jobs))
		}
		calls := &countingEmbedder{Embedder: emb}
		again := &reembed.Reembedder{Store: s, Jobs: s, Emb: calls, Space: emb.Space()}
		if err := again.ReembedUser(ctx, "alice"); err != nil || calls.n != 0 {
			t.Fatalf("re-running embedded %d batches (%v), want none", calls.n, err)
		}
	})
	t.Run("OtherSpace", func(t *testing.T) {
		// A job of a server with another embedder is left alone.
		payload, _ := json.Marshal(map[string]string{"space": "other/3"})
		mustPut(t, s, "bob", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: bob.ID, Space: oldSpace, Vec: []float32{0, 1}})
		if err := r.Run(ctx, &agentmem.Job{ID: "j", UserID: "bob", Kind: reembed.JobKind, Payload: payload}); err != nil {
			t.Fatal(err)
		}
		if spaces, _ := s.VectorSpaces(ctx, "bob"); len(spaces) != 2 {
			t.Fatalf("bob's spaces %v: the old space must be left", spaces)
		}
		if err := r.Run(ctx, &agentmem.Job{ID: "j", UserID: "bob", Kind: reembed.JobKind, Payload: json.RawMessage(`[1]`)}); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("malformed payload: %v", err)
		}
		if err := r.RunAll(ctx, &agentmem.Job{ID: "j", UserID: reembed.SystemUser, Kind: reembed.AllJobKind, Payload: json.RawMessage(`{}`)}); agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Fatalf("reembed-all without a space: %v, want EINVALID", err)
		}
	})
	t.Run("AnySpace", func(t *testing.T) {
		// A user's job without a space (an import's) embeds in the space
		// of the embedder that runs it, and drops the others.
		if err := r.Run(ctx, &agentmem.Job{ID: "j", UserID: "bob", Kind: reembed.JobKind, Payload: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if spaces, _ := s.VectorSpaces(ctx, "bob"); len(spaces) != 1 || spaces[0] != r.Space {
			t.Fatalf("bob's spaces %v, want only %s", spaces, r.Space)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		// A text the embedder refuses is skipped, not a failure forever.
		var ids []string
		for _, text := range []string{"User likes chess.", "User refuses this one.", "User likes go."} {
			m := &agentmem.Memory{UserID: "dave", Text: text}
			if err := s.CreateMemory(ctx, m); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
			mustPut(t, s, "dave", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: m.ID, Space: oldSpace, Vec: []float32{1, 0}})
		}
		picky := &reembed.Reembedder{Store: s, Jobs: s, Emb: refusing{emb}, Space: emb.Space()}
		if err := picky.ReembedUser(ctx, "dave"); err != nil {
			t.Fatal(err)
		}
		vs, _ := s.FindVectors(ctx, "dave", emb.Space(), nil)
		if len(vs) != 2 || slices.ContainsFunc(vs, func(v agentmem.Vector) bool { return v.ID == ids[1] }) {
			t.Fatalf("dave's new vectors %+v, want all but the refused one", vs)
		}
	})
}

// refusing refuses to embed a text with "refuses" in it, as a model
// refuses a text too long for it.
type refusing struct{ agentmem.Embedder }

func (e refusing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "refuses") {
			return nil, agentmem.Errorf(agentmem.EINVALID, "Too long.")
		}
	}
	return e.Embedder.Embed(ctx, texts)
}

func mustPut(t *testing.T, s agentmem.VectorStore, user string, vs ...agentmem.Vector) {
	t.Helper()
	if err := s.PutVectors(ctx, user, vs); err != nil {
		t.Fatal(err)
	}
}

func claimJobs(t *testing.T, s agentmem.JobStore, kind string) []*agentmem.Job {
	t.Helper()
	jobs, err := s.ClaimJobs(ctx, "test", []string{kind}, 100, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		t.Cleanup(func() { s.CompleteJob(ctx, j.UserID, j.ID, "test") })
	}
	return jobs
}

// countingEmbedder counts Embed calls.
type countingEmbedder struct {
	agentmem.Embedder
	n int
}

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.n++
	return e.Embedder.Embed(ctx, texts)
}

// TestReembed_Bulk: with a bulk embedding, messages and chunks are
// re-embedded in its space and memories and summaries in the main one;
// vectors of any other space are deleted, and a second run embeds
// nothing.
func TestReembed_Bulk(t *testing.T) { testutil.Backends(t, testReembedBulk) }

func testReembedBulk(t *testing.T, s agentmem.Store) {
	emb, bulk := lexical.New(256), lexical.New(128)
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t1"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.AppendMessages(ctx, "alice", "t1", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I live in Lisbon."},
		{Role: agentmem.RoleAssistant, Content: "Lisbon is lovely in May."},
	}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mem := &agentmem.Memory{UserID: "alice", Text: "User lives in Lisbon."}
	if err := s.CreateMemory(ctx, mem); err != nil {
		t.Fatal(err)
	}
	chunk := &agentmem.Chunk{UserID: "alice", ThreadID: "t1", SeqFrom: 1, SeqTo: 2, Turns: 2, Text: "user: I live in Lisbon.\nassistant: …",
		Summary: "Alice lives in Lisbon.", CreatedAt: time.Now()}
	if err := s.PutChunks(ctx, "alice", []*agentmem.Chunk{chunk}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSummary(ctx, &agentmem.Summary{UserID: "alice", ThreadID: "t1", ThroughSeq: 2, Text: "Lisbon.", Method: agentmem.SummaryExtractive}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "alice", agentmem.Vector{Scope: agentmem.ScopeMemories, ID: mem.ID, Space: oldSpace, Vec: []float32{1, 0}},
		agentmem.Vector{Scope: agentmem.ScopeMessages, ID: msgs[0].ID, Space: oldSpace, Vec: []float32{1, 0}})

	r := &reembed.Reembedder{Store: s, Jobs: s, Emb: emb, Space: emb.Space(), Bulk: &agentmem.Embedding{Embedder: bulk, Space: bulk.Space()}, BatchSize: 3}
	if err := r.ReembedUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	keys := func(space string) []string {
		vs, err := s.FindVectors(ctx, "alice", space, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range vs {
			out = append(out, v.Scope+"/"+v.ID)
		}
		slices.Sort(out)
		return out
	}
	wantMain := []string{"memories/" + mem.ID, "summaries/t1"}
	wantBulk := []string{"chunks/" + chunk.ID, "chunks/" + chunk.ID + agentmem.SummaryVectorSuffix, "messages/" + msgs[0].ID, "messages/" + msgs[1].ID}
	slices.Sort(wantBulk)
	if diff := cmp.Diff(wantMain, keys(emb.Space())); diff != "" {
		t.Errorf("main space mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantBulk, keys(bulk.Space())); diff != "" {
		t.Errorf("bulk space mismatch (-want +got):\n%s", diff)
	}
	spaces, err := s.VectorSpaces(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{emb.Space(), bulk.Space()}
	slices.Sort(want)
	if diff := cmp.Diff(want, spaces); diff != "" {
		t.Errorf("spaces mismatch (-want +got):\n%s", diff)
	}
	calls, bulkCalls := &countingEmbedder{Embedder: emb}, &countingEmbedder{Embedder: bulk}
	again := &reembed.Reembedder{Store: s, Jobs: s, Emb: calls, Space: emb.Space(), Bulk: &agentmem.Embedding{Embedder: bulkCalls, Space: bulk.Space()}}
	if err := again.ReembedUser(ctx, "alice"); err != nil || calls.n+bulkCalls.n != 0 {
		t.Fatalf("re-running embedded %d+%d batches (%v), want none", calls.n, bulkCalls.n, err)
	}
}
