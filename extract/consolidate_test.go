package extract_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/storetest"
	"github.com/google/go-cmp/cmp"
)

var ctx = context.Background()

func mustConsolidator(t *testing.T) (*extract.Consolidator, *sqlite.Store) {
	t.Helper()
	s := testutil.MustOpenSQLite(t)
	emb := lexical.New(0)
	return &extract.Consolidator{Store: s, Emb: emb, Space: emb.Space()}, s
}

// say consolidates what the user said in one message.
func say(t *testing.T, c *extract.Consolidator, seq int64, text string) []extract.Decision {
	t.Helper()
	cands := extract.Heuristic([]*agentmem.Message{{Seq: seq, Role: agentmem.RoleUser, Content: text}})
	if len(cands) == 0 {
		t.Fatalf("%q: nothing extracted", text)
	}
	ds, err := c.Apply(ctx, "alice", "", "t1", cands)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func valid(t *testing.T, s *sqlite.Store) []*agentmem.Memory {
	t.Helper()
	ms, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestConsolidate: a repeated statement is a NOOP, a contradicted one is
// invalidated (kept, with its history and the memory that superseded
// it), so that no duplicate and no contradiction ever stand side by side.
func TestConsolidate(t *testing.T) {
	c, s := mustConsolidator(t)
	if d := say(t, c, 1, "I live in Lisbon."); d[0].Op != extract.OpAdd {
		t.Fatalf("first statement: %+v", d)
	}
	if d := say(t, c, 2, "I live in Lisbon!"); d[0].Op != extract.OpNoop {
		t.Fatalf("repeated statement: %s, want noop", d[0].Op)
	}
	lisbon := valid(t, s)[0]
	d := say(t, c, 3, "I moved to Berlin last month.")
	if d[0].Op != extract.OpInvalidate || d[0].Old.ID != lisbon.ID {
		t.Fatalf("contradiction: %+v, want the Lisbon memory invalidated", d[0])
	}
	ms := valid(t, s)
	if len(ms) != 1 || ms[0].Text != "User moved to Berlin last month." || ms[0].SeqFrom != 3 || ms[0].ThreadID != "t1" {
		t.Fatalf("valid memories after the move: %+v", ms)
	}
	old, err := s.FindMemoryByID(ctx, "alice", lisbon.ID)
	if err != nil || old.Valid() || old.SupersededBy != ms[0].ID {
		t.Fatalf("the Lisbon memory: %+v, %v; want invalidated, superseded by %s", old, err, ms[0].ID)
	}
	h, err := s.FindMemoryHistory(ctx, "alice", lisbon.ID)
	if err != nil || len(h) != 2 || h[0].Op != agentmem.OpAdd || h[1].Op != agentmem.OpInvalidate {
		t.Fatalf("history %+v, %v; want add then invalidate", h, err)
	}

	// Preferences: a negation contradicts.
	say(t, c, 4, "I love sushi.")
	if d := say(t, c, 5, "I don't like sushi anymore."); d[0].Op != extract.OpInvalidate {
		t.Fatalf("changed preference: %+v, want invalidate", d[0])
	}
	texts := map[string]bool{}
	for _, m := range valid(t, s) {
		if texts[m.Text] {
			t.Fatalf("duplicate memory %q", m.Text)
		}
		texts[m.Text] = true
	}
	if texts["User likes sushi."] || !texts["User does not like sushi anymore."] {
		t.Fatalf("valid memories %v: the old preference must be gone", texts)
	}
}

// countingStore counts the reads of a user's whole memory, and fails
// WriteMemories while fail is set.
type countingStore struct {
	*sqlite.Store
	vectorReads int
	fail        bool
}

func (s *countingStore) FindVectors(ctx context.Context, userID, space string, scopes []string) ([]agentmem.Vector, error) {
	s.vectorReads++
	return s.Store.FindVectors(ctx, userID, space, scopes)
}

func (s *countingStore) WriteMemories(ctx context.Context, userID string, ws []agentmem.MemoryWrite) ([]*agentmem.Memory, error) {
	if s.fail {
		return nil, agentmem.Errorf(agentmem.EINTERNAL, "disk on fire")
	}
	return s.Store.WriteMemories(ctx, userID, ws)
}

// TestConsolidate_KeepsPool: a Consolidator reads the user's memories at
// its first Apply and keeps them as it changes them, so that the pages of
// a job read them once; after a failed write it reads them again.
func TestConsolidate_KeepsPool(t *testing.T) {
	c, s := mustConsolidator(t)
	cs := &countingStore{Store: s}
	c.Store = cs
	for i, city := range []string{"Lisbon", "Porto", "Berlin", "Porto"} {
		say(t, c, int64(i+1), "I live in "+city+" now.")
	}
	if cs.vectorReads != 1 {
		t.Errorf("four Applies read the memories %d times, want 1", cs.vectorReads)
	}
	if ms := valid(t, s); len(ms) != 1 || ms[0].Text != "User lives in Porto now." {
		t.Fatalf("valid memories %v, want the one of Porto", texts(ms))
	}

	// The write of an Apply's decisions fails (none of them is stored):
	// the next Apply reads the store again.
	cs.fail = true
	cands := extract.Heuristic([]*agentmem.Message{{Seq: 5, Role: agentmem.RoleUser, Content: "I live in Oslo now."}})
	if _, err := c.Apply(ctx, "alice", "", "t1", cands); err == nil {
		t.Fatal("Apply with a failing store returned no error")
	}
	cs.fail = false
	say(t, c, 6, "I live in Oslo now.")
	if cs.vectorReads != 2 {
		t.Errorf("the memories were read %d times, want 2 (again after the failure)", cs.vectorReads)
	}
	ms := valid(t, s)
	if len(ms) != 1 || ms[0].Text != "User lives in Oslo now." {
		t.Errorf("valid memories %v, want the one of Oslo alone", texts(ms))
	}
}

// vectorPuts counts PutVectors calls.
type vectorPuts struct {
	*sqlite.Store
	puts int
}

func (s *vectorPuts) PutVectors(ctx context.Context, userID string, vs []agentmem.Vector) error {
	s.puts++
	return s.Store.PutVectors(ctx, userID, vs)
}

// TestConsolidate_VectorsFlushed: the vectors of the memories an Apply
// writes are put in one write at its end, and a memory left without its
// vector (a job stopped before the flush) gets it when a statement
// repeats it.
func TestConsolidate_VectorsFlushed(t *testing.T) {
	c, s := mustConsolidator(t)
	vp := &vectorPuts{Store: s}
	c.Store = vp
	msgs := []*agentmem.Message{
		{Seq: 1, Role: agentmem.RoleUser, Content: "I live in Porto now."},
		{Seq: 2, Role: agentmem.RoleUser, Content: "I work as a nurse."},
		{Seq: 3, Role: agentmem.RoleUser, Content: "I live in Berlin now."},
	}
	if _, err := c.Apply(ctx, "alice", "", "t1", extract.Heuristic(msgs)); err != nil {
		t.Fatal(err)
	}
	if vp.puts != 1 {
		t.Errorf("one Apply put vectors %d times, want 1", vp.puts)
	}
	vs, err := s.FindVectors(ctx, "alice", c.Space, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := valid(t, s)
	if len(vs) != 3 || len(ms) != 2 { // Porto's vector stays with its invalidated memory
		t.Fatalf("%d vectors for %d valid memories %v, want 3 for 2", len(vs), len(ms), texts(ms))
	}

	// A memory stored without its vector, as by a job that stopped.
	m := storetest.MustCreateMemory(t, s, &agentmem.Memory{UserID: "alice", Text: "User plays the violin.", Category: "hobby", Confidence: 1, Importance: 0.5})
	fresh := &extract.Consolidator{Store: s, Emb: c.Emb, Space: c.Space}
	ds, err := fresh.Apply(ctx, "alice", "", "t1", []extract.Candidate{{Text: "User plays the violin.", Category: "hobby", Confidence: 1, Importance: 0.5, SeqFrom: 4, SeqTo: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Op != extract.OpNoop || ds[0].Memory.ID != m.ID {
		t.Fatalf("decisions %+v, want a NOOP on %s", ds, m.ID)
	}
	vs, err = s.FindVectors(ctx, "alice", c.Space, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(vs, func(v agentmem.Vector) bool { return v.ID == m.ID }) {
		t.Errorf("the repeated memory %s still has no vector", m.ID)
	}
}

// TestConsolidate_Sources (issue 30, item 2): a memory keeps every turn
// it came from. A statement said again (of a slot, or word for word), in
// the same thread or another, adds its turn to the memory's sources
// without a new memory, version or history entry; a fuller statement
// that updates a memory adds its turn too; a turn already among them is
// not added twice.
func TestConsolidate_Sources(t *testing.T) {
	c, s := mustConsolidator(t)
	rg := func(thread string, seq int64) agentmem.ThreadRange {
		return agentmem.ThreadRange{ThreadID: thread, SeqFrom: seq, SeqTo: seq}
	}
	apply := func(thread string, seq int64, text string) []extract.Decision {
		t.Helper()
		cands := extract.Heuristic([]*agentmem.Message{{Seq: seq, Role: agentmem.RoleUser, Content: text}})
		if len(cands) == 0 {
			t.Fatalf("%q: nothing extracted", text)
		}
		ds, err := c.Apply(ctx, "alice", "", thread, cands)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	sourcesOf := func(text string) []agentmem.ThreadRange {
		t.Helper()
		var found *agentmem.Memory
		for _, m := range valid(t, s) {
			if m.Text == text {
				if found != nil {
					t.Fatalf("%q stored twice", text)
				}
				found = m
			}
		}
		if found == nil {
			t.Fatalf("no valid memory %q among %v", text, texts(valid(t, s)))
		}
		m, err := s.FindMemoryByID(ctx, "alice", found.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != 1 && m.Text == "User lives in Hull." {
			t.Errorf("%q: version %d, want 1: a repeat is no new version", text, m.Version)
		}
		return m.Sources
	}

	// A slot's value said again: in the same thread, in another, and the
	// same turn consolidated again (a job that runs twice).
	apply("t1", 1, "I live in Hull.")
	for _, say := range []struct {
		thread string
		seq    int64
		text   string
	}{{"t1", 2, "I live in Hull!"}, {"t2", 4, "I live in Hull."}, {"t2", 4, "I live in Hull."}} {
		if d := apply(say.thread, say.seq, say.text); d[0].Op != extract.OpNoop {
			t.Fatalf("%s %d %q: %s, want noop", say.thread, say.seq, say.text, d[0].Op)
		}
	}
	if diff := cmp.Diff([]agentmem.ThreadRange{rg("t1", 1), rg("t1", 2), rg("t2", 4)}, sourcesOf("User lives in Hull.")); diff != "" {
		t.Errorf("sources of the repeated residence (-want +got):\n%s", diff)
	}
	h, err := s.FindMemoryHistory(ctx, "alice", valid(t, s)[0].ID)
	if err != nil || len(h) != 1 {
		t.Errorf("history of the repeated memory: %d entries, %v; want the add alone", len(h), err)
	}

	// Word for word, of no slot, twice in one batch.
	ds, err := c.Apply(ctx, "alice", "", "t3", []extract.Candidate{
		{Text: "User plays the violin.", Category: "hobby", Confidence: 1, Importance: 0.5, SeqFrom: 1, SeqTo: 1},
		{Text: "User plays the violin.", Category: "hobby", Confidence: 1, Importance: 0.5, SeqFrom: 2, SeqTo: 3},
	})
	if err != nil || len(ds) != 2 || ds[0].Op != extract.OpAdd || ds[1].Op != extract.OpNoop {
		t.Fatalf("decisions %+v, %v; want an add and a noop", ds, err)
	}
	if diff := cmp.Diff([]agentmem.ThreadRange{rg("t3", 1), {ThreadID: "t3", SeqFrom: 2, SeqTo: 3}}, sourcesOf("User plays the violin.")); diff != "" {
		t.Errorf("sources of the violin (-want +got):\n%s", diff)
	}

	// An update merges the fuller statement into the memory.
	for i, text := range []string{"User likes coffee.", "User likes coffee with oat milk."} {
		ds, err := c.Apply(ctx, "alice", "", "t4", []extract.Candidate{{Text: text, Category: "preference", Confidence: 1, Importance: 0.5,
			Object: "coffee", SeqFrom: int64(i + 1), SeqTo: int64(i + 1)}})
		if err != nil || ds[0].Op != []string{extract.OpAdd, extract.OpUpdate}[i] {
			t.Fatalf("%q: %+v, %v", text, ds, err)
		}
	}
	if diff := cmp.Diff([]agentmem.ThreadRange{rg("t4", 1), rg("t4", 2)}, sourcesOf("User likes coffee with oat milk.")); diff != "" {
		t.Errorf("sources of the updated memory (-want +got):\n%s", diff)
	}

	// Without a thread, a repeat has no turn to add.
	if _, err := c.Apply(ctx, "alice", "", "", []extract.Candidate{{Text: "User plays the violin.", Category: "hobby", Confidence: 1, Importance: 0.5, SeqFrom: 9, SeqTo: 9}}); err != nil {
		t.Fatal(err)
	}
	if got := sourcesOf("User plays the violin."); len(got) != 2 {
		t.Errorf("sources after a repeat of no thread: %v", got)
	}
}

// TestConsolidate_SlotKind: a statement of where the user lives or what
// they do replaces the user's memories of that kind filed under no slot
// (the rules read an object; the classifier named the kind); not another
// person's, nor a memory the classifier filed as a job that names no
// occupation.
func TestConsolidate_SlotKind(t *testing.T) {
	c, s := mustConsolidator(t)
	olds := []extract.Candidate{
		{Text: "User lives on their own in Dunedin.", Category: "place", Object: "live on my own in dunedin", Kind: "residence"},
		{Text: "User's sister lives in Leeds.", Category: "family", Object: "sister: live in leeds", Kind: "residence"},
		{Text: "User is a programme manager here in Nairobi.", Category: "job", Object: "be a programme manager here in nairobi", Kind: "job"},
		{Text: "User heard stories from a veteran named Samuel.", Category: "other", Object: "hear stories from a veteran named samuel", Kind: "job"},
		{Text: "User is on nights as dispatcher at the depot.", Category: "job", Object: "be on nights as dispatcher at the depot", Kind: "job"},
	}
	if _, err := c.Apply(ctx, "alice", "", "t1", olds); err != nil {
		t.Fatal(err)
	}
	news := []extract.Candidate{
		{Text: "User lives in Christchurch.", Category: "place", Slot: "residence", Kind: "residence"},
		{Text: "User is a regional director.", Category: "job", Slot: "job", Kind: "job"},
	}
	if _, err := c.Apply(ctx, "alice", "", "t1", news); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range valid(t, s) {
		got = append(got, m.Text)
	}
	slices.Sort(got)
	want := []string{"User heard stories from a veteran named Samuel.", "User is a regional director.", "User lives in Christchurch.", "User's sister lives in Leeds."}
	if !slices.Equal(got, want) {
		t.Errorf("valid memories %q, want %q", got, want)
	}
}

// TestConsolidate_PoolRefresh: a Consolidator kept from one job to the
// next sees what others did to the user's memories meanwhile: a memory
// invalidated, one added (with its vector), one edited, one deleted.
func TestConsolidate_PoolRefresh(t *testing.T) {
	c, s := mustConsolidator(t)
	cs := &countingStore{Store: s}
	c.Store = cs
	emb := lexical.New(0)
	byText := func(text string) *agentmem.Memory {
		t.Helper()
		for _, m := range valid(t, s) {
			if m.Text == text {
				return m
			}
		}
		t.Fatalf("no valid memory %q in %v", text, texts(valid(t, s)))
		return nil
	}
	say(t, c, 1, "I live in Porto.")
	say(t, c, 2, "I have a dog named Rex.")
	c.Stale() // read again: the user had no vectors when it was read
	say(t, c, 3, "I am allergic to peanuts.")
	if cs.vectorReads != 2 {
		t.Fatalf("the memories were read %d times, want 2 (once more after the user had vectors)", cs.vectorReads)
	}

	// Through the API meanwhile: Porto invalidated, jazz added with its
	// vector, Rex deleted.
	if _, err := s.InvalidateMemory(ctx, "alice", byText("User lives in Porto.").ID, "", "the user said so"); err != nil {
		t.Fatal(err)
	}
	jazz := &agentmem.Memory{UserID: "alice", Text: "User likes jazz.", Category: "preference"}
	if err := s.CreateMemory(ctx, jazz); err != nil {
		t.Fatal(err)
	}
	vecs, err := emb.Embed(ctx, []string{jazz.Text})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutVectors(ctx, "alice", []agentmem.Vector{{Scope: agentmem.ScopeMemories, ID: jazz.ID, Space: emb.Space(), Vec: vecs[0]}}); err != nil {
		t.Fatal(err)
	}
	reads := cs.vectorReads
	c.Stale() // the next job
	if d := say(t, c, 4, "I like jazz."); d[0].Op != extract.OpNoop || d[0].Memory.ID != jazz.ID {
		t.Errorf("jazz, added through the API: %s %+v, want a NOOP on it", d[0].Op, d[0].Memory)
	}
	if d := say(t, c, 5, "I live in Porto."); d[0].Op == extract.OpNoop {
		t.Errorf("Porto, invalidated through the API: a NOOP on %+v, want it stored again", d[0].Memory)
	}
	if cs.vectorReads != reads {
		t.Errorf("the memories were read again %d times, want caught up, not read", cs.vectorReads-reads)
	}
	byText("User lives in Porto.")

	if err := s.DeleteMemory(ctx, "alice", byText("User has a dog named Rex.").ID); err != nil {
		t.Fatal(err)
	}
	c.Stale()
	if d := say(t, c, 6, "I have a dog named Rex."); d[0].Op == extract.OpNoop {
		t.Errorf("Rex, deleted through the API: a NOOP on %+v, want it stored again", d[0].Memory)
	}
	if cs.vectorReads != reads+1 {
		t.Errorf("after a deletion the memories were read %d times, want once", cs.vectorReads-reads)
	}
	byText("User has a dog named Rex.")
}
