package extract_test

import (
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/internal/goldenfile"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name+".golden"), got, *update)
}

// turns are a thread's first messages: seqs 1 to 5.
var turns = []*agentmem.Message{
	{Seq: 1, Role: agentmem.RoleUser, Content: "Hi! We just moved to Porto, my wife Ana and I. I live in Porto now, near the river."},
	{Seq: 2, Role: agentmem.RoleAssistant, Content: "Welcome to Porto! Do you need restaurant tips?"},
	{Seq: 3, Role: agentmem.RoleTool, Content: `{"restaurants": []}`},
	{Seq: 4, Role: agentmem.RoleUser, Name: "ana", Content: "Yes please, we are both vegetarian."},
	{Seq: 5, Role: agentmem.RoleAssistant, Content: ""},
}

func TestExtractPrompt_Golden(t *testing.T) {
	got, err := extract.ExtractPrompt(turns, extract.DefaultCategories)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "extract_prompt", []byte(got))
}

// TestModelExtractor: the model's answer becomes validated candidates:
// clamped values, known categories, low confidence dropped, provenance
// from the cited turn when it is in the batch.
func TestModelExtractor(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Push(llmtest.Text(`{"memories": [
		{"text": "User lives in Porto.", "category": "place", "confidence": 0.95, "importance": 0.8, "slot": " Residence ", "negated": false, "seq": 1},
		{"text": "User's wife is named Ana.", "category": "Family", "confidence": 1.7, "importance": -2, "slot": "name-of:wife", "seq": 1},
		{"text": "User is vegetarian.", "category": "diet", "confidence": 0.9, "importance": 0.7, "seq": 99},
		{"text": "User might like wine.", "category": "preference", "confidence": 0.3, "importance": 0.2, "seq": 4},
		{"text": "User  lives in   Porto.", "category": "place", "confidence": 0.9, "importance": 0.8, "seq": 4},
		{"text": "User does not eat meat.", "category": "preference", "confidence": 0.8, "negated": true, "seq": 4, "why": "said so"}
	]}`))
	x := &extract.ModelExtractor{Chat: testutil.NewChat(t, srv.BaseURL()), Model: "extractor"}
	got, err := x.Extract(ctx, &agentmem.Thread{ID: "t", UserID: "alice"}, turns)
	if err != nil {
		t.Fatal(err)
	}
	want := []extract.Candidate{
		{Text: "User lives in Porto.", Category: "place", Confidence: 0.95, Importance: 0.8, Slot: "residence", SeqFrom: 1, SeqTo: 1},
		{Text: "User's wife is named Ana.", Category: "family", Confidence: 1, Importance: 0, Slot: "name-of:wife", SeqFrom: 1, SeqTo: 1},
		{Text: "User is vegetarian.", Category: "other", Confidence: 0.9, Importance: 0.7, SeqFrom: 1, SeqTo: 4}, // seq 99 is not in the batch: its range
		{Text: "User does not eat meat.", Category: "preference", Confidence: 0.8, Importance: 0.5, Negated: true, SeqFrom: 4, SeqTo: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("candidates mismatch (-want +got):\n%s", diff)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 1 || !reqs[0].JSONMode() || reqs[0].Model != "extractor" {
		t.Fatalf("requests %+v, want one in JSON mode for the configured model", reqs)
	}
	prompt := reqs[0].LastUserMessage()
	if !strings.Contains(prompt, "[1] user: Hi! We just moved") || !strings.Contains(prompt, "[4] user (ana): Yes please") || strings.Contains(prompt, "restaurants") {
		t.Fatalf("prompt:\n%s", prompt)
	}

	t.Run("NoUserTurn", func(t *testing.T) {
		// Nothing the user said: no call.
		cands, err := x.Extract(ctx, &agentmem.Thread{ID: "t", UserID: "alice"}, turns[1:3])
		if err != nil || len(cands) != 0 || len(srv.ChatRequests()) != 1 {
			t.Fatalf("%v, %v after %d calls; want nothing and no new call", cands, err, len(srv.ChatRequests()))
		}
	})
	t.Run("Batches", func(t *testing.T) {
		// Turns beyond MaxPromptChars go in another call.
		srv.Push(llmtest.Text(`{"memories": []}`), llmtest.Text("```json\n{\"memories\": [{\"text\": \"User likes tea.\", \"confidence\": 0.9, \"seq\": 4}]}\n```"))
		small := &extract.ModelExtractor{Chat: testutil.NewChat(t, srv.BaseURL()), MaxPromptChars: 100}
		cands, err := small.Extract(ctx, &agentmem.Thread{ID: "t", UserID: "alice"}, turns)
		if err != nil {
			t.Fatal(err)
		}
		if len(srv.ChatRequests()) != 3 || len(cands) != 1 || cands[0].Text != "User likes tea." || cands[0].SeqFrom != 4 {
			t.Fatalf("%d calls in all, candidates %+v; want 2 more calls and the fenced answer's candidate", len(srv.ChatRequests()), cands)
		}
	})
}

// TestModelExtractor_Malformed: an answer that is not what was asked for
// is not kept, and the heuristic extracts the batch instead (a model
// that answers so would answer so again: retrying would only let the job
// die with nothing learned), counted in Fallbacks; through the indexer,
// the memories the turns hold are stored, none of the answer's.
func TestModelExtractor_Malformed(t *testing.T) {
	want := extract.Heuristic(turns)
	if len(want) == 0 {
		t.Fatal("the heuristic finds nothing in the turns: the test proves nothing")
	}
	for _, answer := range []string{
		`not JSON at all`,
		`{"memories": [{"text": "User lives in Porto.", "confidence": 0.9}`,
		`{"memories": []} {"memories": []}`,
		`{"facts": [{"text": "User lives in Porto.", "confidence": 0.9}]}`,
		`{"memories": {"text": "User lives in Porto."}}`,
		`{"memories": [{"text": "User lives in Porto.", "confidence": "high"}]}`,
		`{"memories": [{"text": "User lives in Porto.", "confidence": 0.9, "seq": "one"}]}`,
		`{"memories": [{"confidence": 0.9}]}`,
		`{"memories": [{"text": "  ", "confidence": 0.9}]}`,
		`{"memories": [{"text": "User lives in Porto."}]}`,
		`["User lives in Porto."]`,
	} {
		srv := llmtest.NewServer(t)
		srv.Push(llmtest.Text(answer))
		x := &extract.ModelExtractor{Chat: testutil.NewChat(t, srv.BaseURL())}
		cands, err := x.Extract(ctx, &agentmem.Thread{ID: "t", UserID: "alice"}, turns)
		if err != nil || len(cands) != len(want) || cands[0].Text != want[0].Text {
			t.Errorf("answer %s: %+v, %v; want the heuristic's %+v", answer, cands, err, want)
		}
		if failed, malformed := x.Fallbacks(); failed != 0 || malformed != 1 {
			t.Errorf("answer %s: fallbacks %d failed, %d malformed; want 0, 1", answer, failed, malformed)
		}
	}

	s, ix, srv := mustModelIndexer(t)
	srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply { return llmtest.Text(`{"memories": [{"text": 42}]}`) })
	appendTurns(t, s)
	if err := ix.IndexRange(ctx, "alice", "t", 1, 5); err != nil {
		t.Fatalf("IndexRange: %v", err)
	}
	ms := valid(t, s)
	if len(ms) == 0 {
		t.Fatal("nothing stored from the turns when the model answered nonsense")
	}
	for _, m := range ms {
		if strings.Contains(m.Text, "42") {
			t.Fatalf("a memory of the malformed answer: %+v", m)
		}
	}
	if failed, malformed := ix.ExtractionFallbacks(); failed != 0 || malformed == 0 {
		t.Fatalf("indexer's fallbacks: %d failed, %d malformed; want malformed counted", failed, malformed)
	}
}

// TestModelExtractor_ModelDown: when the model fails, the heuristic
// extracts the batch instead, with a warning, so that the memory is not
// lost.
func TestModelExtractor_ModelDown(t *testing.T) {
	s, ix, srv := mustModelIndexer(t)
	srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply { return llmtest.Fail(503) })
	log, logs := testutil.NewLog()
	ix.Extractor.(*extract.ModelExtractor).Log = log
	appendTurns(t, s)
	if err := ix.IndexRange(ctx, "alice", "t", 1, 5); err != nil {
		t.Fatal(err)
	}
	ms := valid(t, s)
	got := texts(ms)
	slices.Sort(got)
	if want := []string{"User and their family are both vegetarian.", "User just moved to Porto."}; !slices.Equal(got, want) {
		t.Fatalf("memories %q, want the heuristic's %q", got, want)
	}
	if len(srv.ChatRequests()) == 0 || !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "extracting heuristically") {
		t.Fatalf("the model was not asked, or no warning was logged:\n%s", logs)
	}
}

// TestModelExtractor_Indexer: through the indexer, the model's candidates
// are consolidated into memories with their provenance.
func TestModelExtractor_Indexer(t *testing.T) {
	s, ix, srv := mustModelIndexer(t)
	srv.Script(func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text(`{"memories": [{"text": "User lives in Porto.", "category": "place", "confidence": 0.9, "importance": 0.8, "slot": "residence", "seq": 1},
			{"text": "User is vegetarian.", "category": "health", "confidence": 0.85, "importance": 0.7, "seq": 4}]}`)
	})
	appendTurns(t, s)
	if err := ix.IndexRange(ctx, "alice", "t", 1, 5); err != nil {
		t.Fatal(err)
	}
	ms := valid(t, s)
	got := map[string]*agentmem.Memory{}
	for _, m := range ms {
		got[m.Text] = m
	}
	porto, veg := got["User lives in Porto."], got["User is vegetarian."]
	if len(ms) != 2 || porto == nil || veg == nil {
		t.Fatalf("memories %+v", ms)
	}
	if porto.ThreadID != "t" || porto.SeqFrom != 1 || porto.SeqTo != 1 || porto.Category != "place" || porto.Source != agentmem.SourceExtracted ||
		veg.SeqFrom != 4 || veg.Category != "health" {
		t.Fatalf("provenance or category: %+v, %+v", porto, veg)
	}
	// Indexing again changes nothing.
	if err := ix.IndexRange(ctx, "alice", "t", 1, 5); err != nil {
		t.Fatal(err)
	}
	if again := valid(t, s); len(again) != 2 {
		t.Fatalf("%d memories after indexing twice, want 2", len(again))
	}
}

// mustModelIndexer returns a store and an indexer whose extractor is a
// model of the returned fake server.
func mustModelIndexer(t *testing.T) (*sqlite.Store, *index.Indexer, *llmtest.Server) {
	t.Helper()
	_, s := mustConsolidator(t)
	srv := llmtest.NewServer(t)
	emb := lexical.New(0)
	ix := &index.Indexer{Store: s, Jobs: s, Emb: emb, Space: emb.Space(), Extractor: &extract.ModelExtractor{Chat: testutil.NewChat(t, srv.BaseURL())}}
	return s, ix, srv
}

// appendTurns stores turns as alice's thread "t".
func appendTurns(t *testing.T, s *sqlite.Store) {
	t.Helper()
	if err := s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: "t"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for _, m := range turns {
		c := *m
		c.Seq = 0
		if c.Role == agentmem.RoleTool {
			c.Role = agentmem.RoleAssistant // a tool message needs a call to answer
		}
		msgs = append(msgs, &c)
	}
	if _, err := s.AppendMessages(ctx, "alice", "t", msgs, agentmem.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

func texts(ms []*agentmem.Memory) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}
