package reflection_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/reflection"
)

// TestReflect_SameInsightMerged: the same insight found in three threads
// is one memory, listing the three threads as its sources (with their
// seqs), its confidence raised by each thread that confirms it and its
// history saying which; each thread's reflection names it. A
// near-identical insight (by the embedder's cosine) is merged too; an
// insight about another city is not.
func TestReflect_SameInsightMerged(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		srv := llmtest.NewServer(t)
		srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			if strings.Contains(req.LastUserMessage(), "You keep the profile") {
				return llmtest.Text("Alice saves for a house.")
			}
			// The same insight, in the words of each thread's answer.
			text := "User is saving to buy a house in Lisbon."
			switch p := req.LastUserMessage(); {
			case strings.Contains(p, "chat number 3"):
				text = "  user is saving to buy a house in Lisbon "
			case strings.Contains(p, "chat number 4"):
				text = "User is saving up to buy a house in Lisbon." // cosine 1.00 with the built-in embedder
			case strings.Contains(p, "chat number 5"):
				text = "User is saving to buy a house in Porto." // cosine 0.78
			}
			return llmtest.Text(`{"reflection_flag": "insight", "insights": [{"category": "goals", "insight_text": "` + text + `", "confidence": 0.8, "importance": "medium"}], "topics": ["house"]}`)
		})
		f := newReflectFixtureOn(t, s, testutil.NewChat(t, srv.BaseURL()))
		end := func(n int) {
			t.Helper()
			id := fmt.Sprintf("t%d", n)
			f.endThread(t, id, fmt.Sprintf("This is chat number %d: I am saving for a flat.", n), "Good plan.")
			if err := f.rf.Enqueue(ctx, "alice", id); err != nil {
				t.Fatal(err)
			}
			if errs := f.runJobs(t, reflection.JobKind); len(errs) != 0 {
				t.Fatal(errs)
			}
		}
		for n := 1; n <= 3; n++ {
			end(n)
		}
		ins := f.insights(t)
		if len(ins) != 1 {
			t.Fatalf("%d insights, want 1: %+v", len(ins), ins)
		}
		m := ins[0]
		var meta struct {
			Sources []struct {
				ThreadID       string `json:"thread_id"`
				SeqFrom, SeqTo int64
			} `json:"sources"`
		}
		if err := json.Unmarshal(m.Metadata, &meta); err != nil {
			t.Fatalf("metadata %s: %v", m.Metadata, err)
		}
		var threads []string
		for _, src := range meta.Sources {
			threads = append(threads, src.ThreadID)
		}
		if !slices.Equal(threads, []string{"t1", "t2", "t3"}) {
			t.Fatalf("sources %s, want t1, t2, t3", m.Metadata)
		}
		if m.Text != "User is saving to buy a house in Lisbon." || m.ThreadID != "t1" || !(m.Confidence > 0.8 && m.Confidence < 1) || m.Importance != 0.6 {
			t.Fatalf("merged insight %+v", m)
		}
		for _, id := range []string{"t1", "t2", "t3"} {
			if r := f.reflection(t, id); r.Status != agentmem.ReflectionProcessed || !slices.Equal(r.Insights, []string{m.ID}) {
				t.Fatalf("reflection of %s: %+v, want it to name %s", id, r, m.ID)
			}
		}
		h, err := s.FindMemoryHistory(ctx, "alice", m.ID)
		if err != nil || len(h) != 3 || h[2].Op != agentmem.OpUpdate || !strings.Contains(h[2].Reason, "t3") {
			t.Fatalf("history %+v, %v; want its add and an update per confirming thread", h, err)
		}

		end(4)
		if ins := f.insights(t); len(ins) != 1 || !strings.Contains(string(ins[0].Metadata), `"t4"`) || ins[0].Text != m.Text {
			t.Fatalf("after a near-identical insight: %d insights, %s", len(ins), ins[0].Metadata)
		}
		end(5)
		if ins := f.insights(t); len(ins) != 2 {
			t.Fatalf("after an insight about Porto: %d insights, want 2", len(ins))
		}
	})
}

// TestReflect_SameInsightMergedTogether: an insight that threads
// reflected on together find again is the stored one, its sources
// gaining those threads.
func TestReflect_SameInsightMergedTogether(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		srv := llmtest.NewServer(t)
		srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			p := req.LastUserMessage()
			switch {
			case strings.Contains(p, "You keep the profile"):
				return llmtest.Text("Alice checks the weather.")
			case strings.Contains(p, "several conversations"), strings.Contains(p, "every morning"):
				return llmtest.Text(`{"reflection_flag": "insight", "insights": [{"category": "habits", "insight_text": "User checks the weather every morning.", "confidence": 0.8, "importance": "low"}], "topics": []}`)
			}
			return llmtest.Text(`{"reflection_flag": "no-insight", "insights": [], "topics": ["weather"]}`)
		})
		f := newReflectFixtureOn(t, s, testutil.NewChat(t, srv.BaseURL()))
		end := func(id string, turns ...string) {
			t.Helper()
			f.endThread(t, id, turns...)
			if err := f.rf.Enqueue(ctx, "alice", id); err != nil {
				t.Fatal(err)
			}
			if errs := f.runJobs(t, reflection.JobKind); len(errs) != 0 {
				t.Fatal(errs)
			}
		}
		end("habit", "I check the weather every morning.", "Sensible.")
		for i := range 3 {
			end(fmt.Sprintf("chat%d", i), "What is the weather like today?", "Sunny.")
		}
		ins := f.insights(t)
		if len(ins) != 1 {
			t.Fatalf("%d insights, want 1", len(ins))
		}
		var meta struct {
			Sources []struct {
				ThreadID string `json:"thread_id"`
			} `json:"sources"`
		}
		if err := json.Unmarshal(ins[0].Metadata, &meta); err != nil || len(meta.Sources) != 4 || meta.Sources[0].ThreadID != "habit" {
			t.Fatalf("sources %s, %v; want habit and the three chats", ins[0].Metadata, err)
		}
		for i := range 3 {
			if r := f.reflection(t, fmt.Sprintf("chat%d", i)); !slices.Equal(r.Insights, []string{ins[0].ID}) {
				t.Fatalf("reflection %+v, want it to name %s", r, ins[0].ID)
			}
		}
	})
}

// TestReflect_MergedIntoOldInsight: an insight stored before sources were
// kept (its threads listed as "threads", a client's key beside them) keeps
// those threads and its other metadata when a thread confirms it.
func TestReflect_MergedIntoOldInsight(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		srv := llmtest.NewServer(t)
		srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
			if strings.Contains(req.LastUserMessage(), "You keep the profile") {
				return llmtest.Text("Alice checks the weather.")
			}
			return llmtest.Text(`{"reflection_flag": "insight", "insights": [{"category": "habits", "insight_text": "User checks the weather every morning.", "confidence": 0.8, "importance": "low"}], "topics": []}`)
		})
		f := newReflectFixtureOn(t, s, testutil.NewChat(t, srv.BaseURL()))
		old := &agentmem.Memory{UserID: "alice", Kind: agentmem.MemoryInsight, Text: "User checks the weather every morning.", Category: "habits",
			Confidence: 0.7, Importance: 0.3, Source: agentmem.SourceExtracted, Metadata: json.RawMessage(`{"threads": ["a", "b", "c"], "note": "kept"}`)}
		if err := s.CreateMemory(ctx, old); err != nil {
			t.Fatal(err)
		}
		f.endThread(t, "habit", "I check the weather every morning.", "Sensible.")
		if err := f.rf.Enqueue(ctx, "alice", "habit"); err != nil {
			t.Fatal(err)
		}
		if errs := f.runJobs(t, reflection.JobKind); len(errs) != 0 {
			t.Fatal(errs)
		}
		ins := f.insights(t)
		if len(ins) != 1 || ins[0].ID != old.ID || ins[0].Confidence != 0.85 {
			t.Fatalf("insights %+v, want the old one confirmed (confidence 0.7 → 0.85)", ins)
		}
		var meta struct {
			Sources []struct {
				ThreadID string `json:"thread_id"`
			} `json:"sources"`
			Note string `json:"note"`
		}
		if err := json.Unmarshal(ins[0].Metadata, &meta); err != nil || len(meta.Sources) != 4 || meta.Sources[3].ThreadID != "habit" || meta.Note != "kept" {
			t.Fatalf("metadata %s, %v; want a, b, c, habit and the note", ins[0].Metadata, err)
		}
	})
}
