package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/eval/extraction"
	"github.com/agentmem/agentmem/eval/locomo"
	"github.com/agentmem/agentmem/eval/memory"
)

// evalFixture is eval/locomo's conversation written for tests in LoCoMo's
// format (never LoCoMo's own data, whose licence keeps it out of the
// repository).
var evalFixture = filepath.Join("..", "..", "eval", "locomo", "testdata", "conversation.json")

func TestEvalLocomo(t *testing.T) {
	out, err := runCmd(t, "eval", "locomo", "--data", evalFixture, "--json", "--searcher", "bm25")
	if err != nil {
		t.Fatal(err)
	}
	var rep locomo.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Conversations != 1 || rep.Sessions != 3 || rep.Turns != 13 || rep.QA != 8 || len(rep.K) != 3 || rep.K[2] != 10 {
		t.Fatalf("report counts: %+v", rep)
	}
	if len(rep.Categories) != 4 || rep.Overall.N != 6 || rep.Adversarial.N != 1 || rep.Timing.Queries != 7 {
		t.Fatalf("categories %+v, overall n %d, adversarial n %d, queries %d", rep.Categories, rep.Overall.N, rep.Adversarial.N, rep.Timing.Queries)
	}
	is := rep.Issues
	if is.MalformedEvidence != 1 || is.UnknownEvidence != 1 || is.SkippedQuestions != 1 {
		t.Errorf("issues = %+v", is)
	}
	// Two single-hop questions share words with their evidence; "What
	// instrument is Ines learning?" shares none with "…cello lessons…",
	// and BM25 cannot find it.
	if s := rep.Categories[3]; s.Name != "single-hop" || s.N != 3 || s.Hit[2] != 2.0/3 {
		t.Errorf("single-hop = %+v", s)
	}
	for _, s := range append(rep.Categories, rep.Overall, rep.Adversarial) {
		for i := range rep.K {
			if s.Recall[i] < 0 || s.Recall[i] > s.Hit[i] || s.Hit[i] > 1 || (i > 0 && s.Recall[i] < s.Recall[i-1]) {
				t.Errorf("%s: recall %v, hit %v", s.Name, s.Recall, s.Hit)
			}
		}
		if s.N > 0 && s.Tokens <= 0 {
			t.Errorf("%s: %v tokens per question", s.Name, s.Tokens)
		}
	}
	if rep.Questions != nil {
		t.Errorf("questions printed without --questions")
	}
	if !strings.Contains(rep.Searcher, "bm25") {
		t.Errorf("searcher = %q", rep.Searcher)
	}
}

// TestEvalLocomo_Hybrid runs the default searcher (full-text and the
// built-in embedder's vectors, over messages and extracted memories).
func TestEvalLocomo_Hybrid(t *testing.T) {
	out, err := runCmd(t, "eval", "locomo", "--data", evalFixture, "--json", "--scopes", "messages,memories")
	if err != nil {
		t.Fatal(err)
	}
	var rep locomo.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if !strings.Contains(rep.Searcher, "hybrid over messages, memories") || rep.Overall.N != 6 {
		t.Fatalf("searcher %q, %d questions", rep.Searcher, rep.Overall.N)
	}
	// Full-text alone finds two of the three single-hop questions at 10;
	// fused with vectors it must not find fewer.
	if s := rep.Categories[3]; s.Hit[2] < 2.0/3 {
		t.Errorf("single-hop with the hybrid searcher: %+v", s)
	}
}

func TestEvalLocomo_Text(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "eval.db")
	out, err := runCmd(t, "eval", "locomo", "--data", evalFixture, "--k", "2,1", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 conversations, 3 sessions, 13 turns, 8 questions", "R@1    R@2  hit@1  hit@2  MRR@2", "4 single-hop         3  0.667", "5 adversarial", "time: ingest"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The users are in the database now: a second run conflicts.
	if _, err := runCmd(t, "eval", "locomo", "--data", evalFixture, "--db", db); err == nil || !strings.Contains(err.Error(), "locomo-conv-demo") {
		t.Errorf("second run into the same --db: %v, want a conflict", err)
	}
	out, err = runCmd(t, "eval", "locomo", "--data", evalFixture, "--json", "--questions")
	if err != nil {
		t.Fatal(err)
	}
	var rep locomo.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Questions) != 7 {
		t.Errorf("--questions: %v, %d questions", err, len(rep.Questions))
	}
}

func TestEvalLocomo_Err(t *testing.T) {
	for _, args := range [][]string{
		{"eval"},
		{"eval", "squad"},
		{"eval", "locomo"},
		{"eval", "locomo", "--data", filepath.Join(t.TempDir(), "missing.json")},
		{"eval", "locomo", "--data", evalFixture, "--k", "0"},
		{"eval", "locomo", "--data", evalFixture, "--k", "five"},
		{"eval", "locomo", "--data", evalFixture, "--scopes", "everything"},
		{"eval", "locomo", "--data", evalFixture, "--scopes", "messages,memories", "--searcher", "bm25"}, // the baseline has messages only
		{"eval", "locomo", "--data", evalFixture, "--searcher", "oracle"},
		{"eval", "locomo", "--data", evalFixture, "extra"},
	} {
		if _, err := runCmd(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestEvalExtraction(t *testing.T) {
	t.Run("Default", func(t *testing.T) {
		out, err := runCmd(t, "eval", "extraction")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Memory extraction:", "extract.Heuristic", "precision", "distractors:", "changes:"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("DataJSON", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "corpus.json")
		data := `{"statements": [
			{"id": "a", "category": "place", "text": "I live in Lisbon.", "expected": [{"text": "User lives in Lisbon.", "category": "place"}]},
			{"id": "b", "category": "distractor", "text": "What's the time?", "expected": []}],
		 "changes": [{"id": "c", "category": "place", "turns": ["I live in Berlin.", "I live in Lisbon."],
			"valid": ["User lives in Lisbon."], "invalidated": ["User lives in Berlin."]}]}`
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := runCmd(t, "eval", "extraction", "--data", path, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var rep extraction.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if rep.Statements != 1 || rep.Distractors != 1 || rep.Changes != 1 || len(rep.StatementResults) != 2 || len(rep.ChangeResults) != 1 {
			t.Errorf("report of %d statements, %d distractors, %d changes, %d and %d results; want 1, 1, 1, 2, 1",
				rep.Statements, rep.Distractors, rep.Changes, len(rep.StatementResults), len(rep.ChangeResults))
		}
	})
}

func TestEvalExtraction_Err(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"statements": [{"id": "a", "category": "place", "text": "I live in Oslo.", "expected": [{"text": "Lives in Oslo.", "category": "place"}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "extraction", "extra"}, `unexpected argument "extra"`},
		{[]string{"eval", "extraction", "--data", filepath.Join(t.TempDir(), "missing.json")}, "--data"},
		{[]string{"eval", "extraction", "--data", bad}, `does not start with "User"`},
		{[]string{"eval", "extraction", "--k", "1"}, "-k"},
	} {
		if _, err := runCmd(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}

// TestEvalLocomo_All: --searcher all runs full-text, vectors and hybrid,
// each on a fresh database, and reports them together; it refuses --db.
func TestEvalLocomo_All(t *testing.T) {
	out, err := runCmd(t, "eval", "locomo", "--data", evalFixture, "--json", "--searcher", "all")
	if err != nil {
		t.Fatal(err)
	}
	var reps []locomo.Report
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(reps) != 3 {
		t.Fatalf("%d reports, want 3", len(reps))
	}
	for i, name := range []string{"fulltext", "vector", "hybrid"} {
		if !strings.HasPrefix(reps[i].Searcher, name+" over messages") || reps[i].Overall.N != 6 {
			t.Errorf("report %d: searcher %q, %d questions; want %s's, 6", i, reps[i].Searcher, reps[i].Overall.N, name)
		}
	}
	t.Logf("single-hop hit@10: fulltext %v, vector %v, hybrid %v", reps[0].Categories[3].Hit[2], reps[1].Categories[3].Hit[2], reps[2].Categories[3].Hit[2])
	if _, err := runCmd(t, "eval", "locomo", "--data", evalFixture, "--searcher", "all", "--db", filepath.Join(t.TempDir(), "x.db")); err == nil || !strings.Contains(err.Error(), "leave out --db") {
		t.Errorf("--searcher all --db: %v, want an error", err)
	}
}

// TestEvalMemory runs eval memory on the package's two test conversations:
// the JSON report reads back with their counts, the text one has its table.
func TestEvalMemory(t *testing.T) {
	data := filepath.Join("..", "..", "eval", "memory", "testdata")
	out, err := runCmd(t, "eval", "memory", "--data", data, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep memory.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rep.Conversations) != 2 || rep.Overall.Facts != 7 || rep.Overall.Changes != 3 || rep.Overall.Questions != 5 || rep.Messages != 22 {
		t.Fatalf("report counts: %+v, %d messages", rep.Overall, rep.Messages)
	}
	if !strings.Contains(rep.Pipeline, "no model") {
		t.Errorf("pipeline %q", rep.Pipeline)
	}
	out, err = runCmd(t, "eval", "memory", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Memory eval: 2 conversations", "facts recalled", "changes handled", "t01", "t02"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

func TestEvalMemory_BadArgs(t *testing.T) {
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "c1.json"), []byte(`{"id":"c1","sessions":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "memory"}, "--data is required"},
		{[]string{"eval", "memory", "--data", t.TempDir()}, "no *.json conversation files"},
		{[]string{"eval", "memory", "--data", bad}, "c1.json: no sessions"},
		{[]string{"eval", "memory", "--data", bad, "extra"}, "unexpected argument"},
	} {
		if _, err := runCmd(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want an error saying %q", tt.args, err, tt.want)
		}
	}
}
