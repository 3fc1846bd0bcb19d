package extract_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/minilm"
)

// refOf returns the name the consolidation prompt gives the stored memory
// whose text contains s.
func refOf(t *testing.T, prompt, s string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\[(\d+)\] .*` + regexp.QuoteMeta(s)).FindStringSubmatch(prompt)
	if m == nil {
		t.Errorf("the prompt lists no memory with %q:\n%s", s, prompt)
		return "0"
	}
	return m[1]
}

// newStatement returns the candidate's text in a consolidation prompt.
func newStatement(prompt string) string {
	_, after, _ := strings.Cut(prompt, "New statement: ")
	text, _, _ := strings.Cut(after, " (category:")
	return text
}

func TestConsolidatePrompt_Golden(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	got, err := extract.ConsolidatePrompt(extract.Candidate{Text: "User moved to Porto.", Category: "place"}, []*agentmem.Memory{
		{ID: "m1", Text: "User lives in Lisbon.", Category: "place", ValidFrom: at},
		{ID: "m2", Text: "User likes long walks.", ValidFrom: at.AddDate(0, 1, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "consolidate_prompt", []byte(got))
}

// TestConsolidate_Model: with a model, the model decides each candidate
// against the most similar memories: a paraphrase the rules would add is
// a NOOP, a contradiction the rules cannot see (no slot) invalidates the
// old memory (kept, superseded, with its history), a refinement updates
// the memory with the merged text.
func TestConsolidate_Model(t *testing.T) {
	c, s := mustConsolidator(t)
	// Stored by the rules, no model.
	for _, text := range []string{"I live in Lisbon.", "I love hiking in the mountains.", "I work as a nurse.",
		"I am 34 years old.", "My favourite colour is green.", "I have two daughters.", "I am allergic to peanuts."} {
		say(t, c, 1, text)
	}
	lisbon, hiking := findMemory(t, s, "Lisbon"), findMemory(t, s, "hiking")

	srv := llmtest.NewServer(t)
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		p := req.LastUserMessage()
		switch newStatement(p) {
		case "User enjoys mountain hikes.":
			return llmtest.Text(fmt.Sprintf(`{"op": "noop", "id": "%s", "reason": "same as the stored memory"}`, refOf(t, p, "hiking")))
		case "User has relocated to Porto.":
			return llmtest.Text(fmt.Sprintf(`{"op": "INVALIDATE", "id": %s, "text": "", "reason": "the user moved"}`, refOf(t, p, "Lisbon")))
		case "User works night shifts as a nurse.":
			return llmtest.Text(fmt.Sprintf(`{"op": "update", "id": "%s", "text": "User works as a nurse, on night shifts."}`, refOf(t, p, "nurse")))
		}
		return llmtest.Text(`{"op": "add", "id": ""}`)
	})
	c.Chat = testutil.NewChat(t, srv.BaseURL())
	apply := func(cd extract.Candidate) extract.Decision {
		t.Helper()
		cd.SeqFrom, cd.SeqTo = 7, 7
		ds, err := c.Apply(ctx, "alice", "", "t2", []extract.Candidate{cd})
		if err != nil {
			t.Fatal(err)
		}
		return ds[0]
	}

	if d := apply(extract.Candidate{Text: "User enjoys mountain hikes.", Category: "preference", Confidence: 0.9}); d.Op != extract.OpNoop || d.Memory.ID != hiking.ID {
		t.Fatalf("duplicate: %+v, want noop on the hiking memory", d)
	}
	d := apply(extract.Candidate{Text: "User has relocated to Porto.", Category: "place", Confidence: 0.9})
	if d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != lisbon.ID || d.Reason != "model: the user moved" {
		t.Fatalf("contradiction: %+v, want the Lisbon memory invalidated", d)
	}
	porto := d.Memory
	old, err := s.FindMemoryByID(ctx, "alice", lisbon.ID)
	if err != nil || old.Valid() || old.SupersededBy != porto.ID {
		t.Fatalf("the Lisbon memory: %+v, %v; want invalidated, superseded by %s", old, err, porto.ID)
	}
	h, err := s.FindMemoryHistory(ctx, "alice", lisbon.ID)
	if err != nil || len(h) != 2 || h[0].Op != agentmem.OpAdd || h[1].Op != agentmem.OpInvalidate || h[1].Reason != "model: the user moved" {
		t.Fatalf("history %+v, %v; want add then invalidate", h, err)
	}
	if porto.ThreadID != "t2" || porto.SeqFrom != 7 || !porto.Valid() {
		t.Fatalf("the new memory: %+v", porto)
	}
	d = apply(extract.Candidate{Text: "User works night shifts as a nurse.", Category: "job", Confidence: 0.8})
	if d.Op != extract.OpUpdate || d.Memory.Text != "User works as a nurse, on night shifts." || d.Memory.Version != 2 || d.Memory.SeqFrom != 7 {
		t.Fatalf("refinement: %+v, want the nurse memory's next version with the merged text", d.Memory)
	}
	if d := apply(extract.Candidate{Text: "User has a cat named Tom.", Category: "family", Confidence: 0.9}); d.Op != extract.OpAdd {
		t.Fatalf("a new statement: %+v, want add", d)
	}
	texts := map[string]bool{}
	for _, m := range valid(t, s) {
		texts[m.Text] = true
	}
	if len(texts) != 8 || !texts["User has relocated to Porto."] || texts["User lives in Lisbon."] || !texts["User works as a nurse, on night shifts."] {
		t.Fatalf("valid memories: %v", texts)
	}
	// Each prompt listed at most ModelNeighbours memories, all valid.
	for i, req := range srv.ChatRequests() {
		p := req.LastUserMessage()
		if n := len(regexp.MustCompile(`(?m)^\[\d+\] `).FindAllString(p, -1)); n == 0 || n > extract.ModelNeighbours {
			t.Fatalf("%d memories in the prompt:\n%s", n, p)
		}
		if i >= 2 && strings.Contains(p, "Lisbon") { // after the move
			t.Fatalf("an invalidated memory in the prompt:\n%s", p)
		}
	}
	// An exact repeat needs no model.
	before := len(srv.ChatRequests())
	if d := apply(extract.Candidate{Text: "User has a cat named Tom.", Category: "family", Confidence: 0.9}); d.Op != extract.OpNoop || len(srv.ChatRequests()) != before {
		t.Fatalf("exact repeat: %+v after %d model calls, want noop without a call", d, len(srv.ChatRequests())-before)
	}
}

// TestConsolidate_ModelFallback: when the model fails or answers nonsense,
// the rules decide, and nothing is lost.
func TestConsolidate_ModelFallback(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"Down":        llmtest.Fail(503),
		"Malformed":   llmtest.Text(`{"op": "invalidate"`),
		"UnknownOp":   llmtest.Text(`{"op": "delete", "id": "1"}`),
		"UnknownID":   llmtest.Text(`{"op": "invalidate", "id": "9"}`),
		"MissingID":   llmtest.Text(`{"op": "noop"}`),
		"WrongTypeOp": llmtest.Text(`{"op": 3, "id": "1"}`),
	} {
		t.Run(name, func(t *testing.T) {
			c, s := mustConsolidator(t)
			say(t, c, 1, "I live in Lisbon.")
			srv := llmtest.NewServer(t)
			srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply { return reply })
			log, logs := testutil.NewLog()
			c.Chat, c.Log = testutil.NewChat(t, srv.BaseURL()), log
			// The rules see the slot: the move invalidates Lisbon.
			if d := say(t, c, 2, "I moved to Berlin."); d[0].Op != extract.OpInvalidate {
				t.Fatalf("%+v, want the rules' invalidate", d[0])
			}
			// And add what is new.
			if d := say(t, c, 3, "I love sushi."); d[0].Op != extract.OpAdd {
				t.Fatalf("%+v, want the rules' add", d[0])
			}
			if ms := valid(t, s); len(ms) != 2 {
				t.Fatalf("valid memories %+v", ms)
			}
			if len(srv.ChatRequests()) != 2 || !strings.Contains(logs.String(), "deciding by the rules") {
				t.Fatalf("%d model calls; log:\n%s", len(srv.ChatRequests()), logs)
			}
		})
	}
}

// findMemory returns alice's valid memory whose text contains s.
func findMemory(t *testing.T, s agentmem.MemoryStore, text string) *agentmem.Memory {
	t.Helper()
	ms, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if strings.Contains(m.Text, text) {
			return m
		}
	}
	t.Fatalf("no memory with %q among %+v", text, ms)
	return nil
}

// TestIndexer_ModelConsolidation: an Indexer with a Chat lets the model
// decide how the memories it extracts consolidate.
func TestIndexer_ModelConsolidation(t *testing.T) {
	c, s := mustConsolidator(t)
	say(t, c, 1, "I love sailing boats.")
	sailing := findMemory(t, s, "sailing")
	srv := llmtest.NewServer(t)
	asked := 0
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		p := req.LastUserMessage()
		if !strings.Contains(p, "New statement: ") {
			t.Errorf("the indexer asked the model something else than a consolidation:\n%s", p)
		}
		asked++
		return llmtest.Text(fmt.Sprintf(`{"op": "noop", "id": "%s", "reason": "the same"}`, refOf(t, p, "sailing")))
	})
	ix := &index.Indexer{Store: s, Emb: c.Emb, Space: c.Space, Chat: testutil.NewChat(t, srv.BaseURL())}
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", []*agentmem.Message{{Role: agentmem.RoleUser, Content: "I love sailing on weekends."}}, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ix.IndexRange(ctx, "alice", "t", 1, 1); err != nil {
		t.Fatal(err)
	}
	ms, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if asked != 1 || len(ms) != 1 || ms[0].ID != sailing.ID || ms[0].Version != sailing.Version {
		t.Fatalf("asked the model %d times (want 1); memories %+v, want only %+v unchanged", asked, ms, sailing)
	}
}

// TestConsolidate_ModelNeighboursByMeaning: with the built-in model as
// the embedder, the memories the consolidation model compares a
// candidate with are found by meaning: "settled into the new place in
// Leeds" is compared with "lives in Hull", which shares no word with it,
// among twenty others (with the lexical embedder it is not: the
// control).
func TestConsolidate_ModelNeighboursByMeaning(t *testing.T) {
	for name, emb := range map[string]agentmem.Embedder{"builtin": minilm.New(), "lexical": lexical.New(0)} {
		t.Run(name, func(t *testing.T) {
			s := testutil.MustOpenSQLite(t)
			c := &extract.Consolidator{Store: s, Emb: emb, Space: "test"}
			for _, text := range []string{"I live in Hull.", "I love hiking in the mountains.", "I work as a nurse.",
				"I am 34 years old.", "My favourite colour is green.", "I have two daughters.", "I am allergic to peanuts.",
				"I play the cello in an orchestra.", "I drive a red Volvo.", "I am learning Japanese.", "I support Leeds United.",
				"My sister is a lawyer in Leeds.", "I collect vinyl records.", "I swim in the sea every morning.",
				"I sing in a choir.", "I am interested in astronomy.", "I live near a new school.",
				"I keep my bike in the hall.", "I invested in a new bakery.", "I grow tomatoes in the garden."} {
				say(t, c, 1, text)
			}
			srv := llmtest.NewServer(t)
			var prompt string
			srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
				prompt = req.LastUserMessage()
				return llmtest.Text(`{"op": "add", "id": ""}`)
			})
			c.Chat = testutil.NewChat(t, srv.BaseURL())
			cd := extract.Candidate{Text: "User has finally settled into the new place in Leeds.", Category: "other", Confidence: 0.9, SeqFrom: 2, SeqTo: 2}
			if _, err := c.Apply(ctx, "alice", "", "t2", []extract.Candidate{cd}); err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Contains(prompt, "User lives in Hull."), name == "builtin"; got != want {
				t.Fatalf("the prompt lists the Hull memory: %v, want %v:\n%s", got, want, prompt)
			}
		})
	}
}
