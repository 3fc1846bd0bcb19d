package extract_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/profile"
)

// slots is a consolidator without a model over a store of either
// backend, fed candidates as an extractor would propose them.
type slots struct {
	t   *testing.T
	s   agentmem.Store
	c   *extract.Consolidator
	seq int64
}

func newSlots(t *testing.T, s agentmem.Store) *slots {
	emb := lexical.New(0)
	return &slots{t: t, s: s, c: &extract.Consolidator{Store: s, Emb: emb, Space: emb.Space()}}
}

// apply consolidates one candidate, said in the next turn of thread t1.
func (x *slots) apply(cd extract.Candidate) extract.Decision {
	x.t.Helper()
	x.seq++
	cd.SeqFrom, cd.SeqTo = x.seq, x.seq
	cd.Confidence, cd.Importance = 0.9, 0.8
	ds, err := x.c.Apply(ctx, "alice", "", "t1", []extract.Candidate{cd})
	if err != nil {
		x.t.Fatal(err)
	}
	if len(ds) != 1 {
		x.t.Fatalf("%d decisions for one candidate", len(ds))
	}
	return ds[0]
}

// valid returns the texts of alice's valid memories.
func (x *slots) valid() []string {
	x.t.Helper()
	ms, _, err := x.s.FindMemories(ctx, "alice", agentmem.MemoryFilter{})
	if err != nil {
		x.t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

func (x *slots) memory(id string) *agentmem.Memory {
	x.t.Helper()
	m, err := x.s.FindMemoryByID(ctx, "alice", id)
	if err != nil {
		x.t.Fatal(err)
	}
	return m
}

func (x *slots) history(id string) []*agentmem.MemoryChange {
	x.t.Helper()
	h, err := x.s.FindMemoryHistory(ctx, "alice", id)
	if err != nil {
		x.t.Fatal(err)
	}
	return h
}

// TestConsolidate_SlotChanged: a new value of a single-valued slot ("I
// moved to Lisbon" after "I live in Porto") invalidates the old memory,
// kept with its history and superseded by the new one; the memory keeps
// its slot and object in its metadata; and the assembled profile tells
// the new value only.
func TestConsolidate_SlotChanged(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		porto := x.apply(extract.Candidate{Text: "User lives in Porto.", Category: "place", Slot: "residence", Object: "porto"})
		if porto.Op != extract.OpAdd {
			t.Fatalf("first statement: %+v", porto)
		}
		var meta map[string]any
		if err := json.Unmarshal(porto.Memory.Metadata, &meta); err != nil || meta["slot"] != "residence" || meta["object"] != "porto" {
			t.Fatalf("metadata %s, %v; want the slot and object", porto.Memory.Metadata, err)
		}
		d := x.apply(extract.Candidate{Text: "User moved to Lisbon.", Category: "place", Slot: "residence", Object: "lisbon"})
		if d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != porto.Memory.ID || d.Memory == nil {
			t.Fatalf("the move: %+v, want Porto invalidated and Lisbon added", d)
		}
		old := x.memory(porto.Memory.ID)
		if old.Valid() || old.SupersededBy != d.Memory.ID {
			t.Fatalf("Porto: %+v, want invalidated and superseded by %s", old, d.Memory.ID)
		}
		if h := x.history(old.ID); len(h) != 2 || h[1].Op != agentmem.OpInvalidate {
			t.Fatalf("Porto's history: %+v", h)
		}
		if v := x.valid(); len(v) != 1 || v[0] != "User moved to Lisbon." {
			t.Fatalf("valid memories %q", v)
		}
		p, err := (&profile.Profiler{Store: s}).Refresh(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Text, "Lisbon") || strings.Contains(p.Text, "Porto") {
			t.Fatalf("assembled profile:\n%s\nwant Lisbon, not Porto", p.Text)
		}
	})
}

// TestConsolidate_Retract: a statement that ends a fact without a
// replacement ("I'm not vegetarian anymore", "I quit my job") invalidates
// the matching valid memory, superseded by none, its history saying why,
// and adds nothing; a retraction that matches no valid memory (of another
// value of the slot, or of nothing known) changes nothing.
func TestConsolidate_Retract(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		veg := x.apply(extract.Candidate{Text: "User is vegetarian.", Category: "preference", Object: "vegetarian"}).Memory
		job := x.apply(extract.Candidate{Text: "User works as a nurse.", Category: "job", Slot: "job", Object: "nurse"}).Memory
		lisbon := x.apply(extract.Candidate{Text: "User lives in Lisbon.", Category: "place", Slot: "residence", Object: "lisbon"}).Memory

		// By object (a multi-valued fact).
		d := x.apply(extract.Candidate{Text: "User is not vegetarian anymore.", Category: "preference", Object: "vegetarian", Negated: true, Retract: true})
		if d.Op != extract.OpInvalidate || d.Memory != nil || d.Old == nil || d.Old.ID != veg.ID || d.Reason == "" {
			t.Fatalf("retraction: %+v, want the vegetarian memory invalidated, nothing added", d)
		}
		if m := x.memory(veg.ID); m.Valid() || m.SupersededBy != "" {
			t.Fatalf("the vegetarian memory: %+v, want invalidated, superseded by none", m)
		}
		h := x.history(veg.ID)
		if last := h[len(h)-1]; last.Op != agentmem.OpInvalidate || !strings.Contains(last.Reason, "User is not vegetarian anymore.") {
			t.Fatalf("history %+v, want an invalidation that says why", last)
		}
		// By slot (its object told or not).
		if d := x.apply(extract.Candidate{Text: "User quit their job.", Category: "job", Slot: "job", Retract: true}); d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != job.ID {
			t.Fatalf("quitting the job: %+v", d)
		}
		// Not another value of the slot, nor what is not known.
		if d := x.apply(extract.Candidate{Text: "User no longer lives in Porto.", Category: "place", Slot: "residence", Object: "porto", Retract: true}); d.Op != extract.OpNoop || d.Old != nil {
			t.Fatalf("retracting Porto while living in Lisbon: %+v, want noop", d)
		}
		if d := x.apply(extract.Candidate{Text: "User no longer smokes.", Category: "habit", Object: "smoking", Retract: true}); d.Op != extract.OpNoop || d.Old != nil {
			t.Fatalf("retracting the unknown: %+v, want noop", d)
		}
		if v := x.valid(); len(v) != 1 || v[0] != lisbon.Text {
			t.Fatalf("valid memories %q, want only Lisbon's", v)
		}
	})
}

// TestConsolidate_RetractOld: a retraction ends a memory stored before
// objects were kept (today's rules stored "User is vegetarian." without
// one) when its text tells the object alone, and only then; and a
// memory of a slot by its object.
func TestConsolidate_RetractOld(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		var old []*agentmem.Memory
		for _, text := range []string{"User is vegetarian.", "User's sister is vegetarian too."} {
			m := &agentmem.Memory{UserID: "alice", Text: text, Category: "preference", Confidence: 0.9, Source: agentmem.SourceExtracted}
			if err := s.CreateMemory(ctx, m); err != nil {
				t.Fatal(err)
			}
			old = append(old, m)
		}
		d := x.apply(extract.Candidate{Text: "User is not vegetarian anymore.", Category: "diet", Object: "vegetarian", Negated: true, Retract: true})
		if d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != old[0].ID {
			t.Fatalf("retraction of an old memory: %+v", d)
		}
		if v := x.valid(); len(v) != 1 || v[0] != old[1].Text {
			t.Fatalf("valid memories %q, want the sister's only", v)
		}
		// A slot's memory, by its object.
		x.apply(extract.Candidate{Text: "User eats a vegan diet.", Category: "diet", Slot: "diet", Object: "vegan"})
		if d := x.apply(extract.Candidate{Text: "User is not vegan anymore.", Category: "preference", Object: "vegan", Retract: true}); d.Op != extract.OpInvalidate || d.Old == nil || d.Old.Text != "User eats a vegan diet." {
			t.Fatalf("retraction of a slot's memory by its object: %+v", d)
		}
	})
}

// TestConsolidate_RetractWithModel: a retraction is the rules' to
// decide with a model too, which is not asked.
func TestConsolidate_RetractWithModel(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		srv := llmtest.NewServer(t)
		srv.Script(func(llmtest.ChatCompletionRequest) llmtest.Reply {
			return llmtest.Text(`{"op": "ADD", "reason": "new"}`)
		})
		x := newSlots(t, s)
		veg := x.apply(extract.Candidate{Text: "User is vegetarian.", Category: "preference", Object: "vegetarian"}).Memory
		x.c.Chat = testutil.NewChat(t, srv.BaseURL())
		d := x.apply(extract.Candidate{Text: "User is not vegetarian anymore.", Category: "preference", Object: "vegetarian", Negated: true, Retract: true})
		if d.Op != extract.OpInvalidate || d.Memory != nil || d.Old == nil || d.Old.ID != veg.ID {
			t.Fatalf("retraction with a model: %+v", d)
		}
		if n := len(srv.ChatRequests()); n != 0 {
			t.Fatalf("the model was asked %d times", n)
		}
		if v := x.valid(); len(v) != 0 {
			t.Fatalf("valid memories %q", v)
		}
	})
}

// TestConsolidate_NegationOfSlot: a negated statement of an object that a
// slot's memory holds replaces it.
func TestConsolidate_NegationOfSlot(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		veg := x.apply(extract.Candidate{Text: "User is vegetarian.", Category: "diet", Slot: "diet", Object: "vegetarian"}).Memory
		d := x.apply(extract.Candidate{Text: "User is not vegetarian.", Category: "preference", Object: "vegetarian", Negated: true})
		if d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != veg.ID {
			t.Fatalf("negation of a slot's memory: %+v", d)
		}
	})
}

// TestConsolidate_MultiValued: facts of no slot accumulate, each by its
// object: a second daughter is added beside the first, though their
// statements are alike word for word; the object wins over the cosine.
func TestConsolidate_MultiValued(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		mia := x.apply(extract.Candidate{Text: "User's daughter is Mia.", Category: "family", Object: "daughter mia"}).Memory
		d := x.apply(extract.Candidate{Text: "User's daughter is Lea.", Category: "family", Object: "daughter lea"})
		if d.Op != extract.OpAdd || d.Old != nil {
			t.Fatalf("the second daughter: %+v, want added", d)
		}
		if m := x.memory(mia.ID); !m.Valid() || m.Version != 1 || m.Text != mia.Text {
			t.Fatalf("Mia's memory: %+v, want it unchanged", m)
		}
		if v := x.valid(); len(v) != 2 {
			t.Fatalf("valid memories %q, want both daughters", v)
		}
	})
}

// TestConsolidate_ObjectOverCosine: statements alike enough by cosine
// (0.80 with the built-in embedder) to be a refinement, were they about
// the same daughter, are two memories.
func TestConsolidate_ObjectOverCosine(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		mia := x.apply(extract.Candidate{Text: "User's daughter Mia plays the violin.", Category: "family", Object: "daughter mia"}).Memory
		if d := x.apply(extract.Candidate{Text: "User's daughter Lea plays the violin.", Category: "family", Object: "daughter lea"}); d.Op != extract.OpAdd {
			t.Fatalf("Lea plays the violin too: %+v, want added", d)
		}
		if m := x.memory(mia.ID); !m.Valid() || m.Version != 1 || m.Text != mia.Text {
			t.Fatalf("Mia's violin: %+v, want it unchanged", m)
		}
		// What is told already of Mia is a repeat; what is new of her is
		// not.
		if d := x.apply(extract.Candidate{Text: "User has a daughter named Mia.", Category: "family", Object: "daughter mia"}); d.Op != extract.OpNoop || d.Memory.ID != mia.ID {
			t.Fatalf("Mia again: %+v, want noop", d)
		}
		if d := x.apply(extract.Candidate{Text: "User's daughter Mia starts school in September.", Category: "family", Object: "daughter mia"}); d.Op != extract.OpAdd {
			t.Fatalf("a new fact about Mia: %+v, want it added", d)
		}
		if v := x.valid(); len(v) != 3 {
			t.Fatalf("valid memories %q", v)
		}
	})
}

// TestConsolidate_Repeat: a value said again, in other words too, is a
// NOOP: no new memory, no new version.
func TestConsolidate_Repeat(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		first := x.apply(extract.Candidate{Text: "User works as a teacher.", Category: "job", Slot: "job", Object: "teacher"}).Memory
		for _, text := range []string{"User works as a teacher.", "User works as teacher.", "User is a teacher."} {
			d := x.apply(extract.Candidate{Text: text, Category: "job", Slot: "job", Object: "teacher"})
			if d.Op != extract.OpNoop || d.Memory == nil || d.Memory.ID != first.ID {
				t.Fatalf("%q again: %+v, want noop on %s", text, d, first.ID)
			}
		}
		// Accumulating facts too.
		for range 2 {
			x.apply(extract.Candidate{Text: "User speaks Portuguese.", Category: "identity", Object: "portuguese"})
		}
		if d := x.apply(extract.Candidate{Text: "User can speak Portuguese.", Category: "identity", Object: "portuguese"}); d.Op != extract.OpNoop {
			t.Fatalf("the language again in other words: %+v, want noop", d)
		}
		if v := x.valid(); len(v) != 2 {
			t.Fatalf("valid memories %q, want one per fact", v)
		}
		if m := x.memory(first.ID); !m.Valid() || m.Version != 1 {
			t.Fatalf("the teacher memory: %+v, want version 1", m)
		}
	})
}

// TestConsolidate_Negation: a negated statement of a positive memory's
// object replaces it, and the other way round.
func TestConsolidate_Negation(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		likes := x.apply(extract.Candidate{Text: "User likes coffee.", Category: "preference", Object: "coffee"}).Memory
		x.apply(extract.Candidate{Text: "User likes tea.", Category: "preference", Object: "tea"})
		d := x.apply(extract.Candidate{Text: "User does not like coffee.", Category: "preference", Object: "coffee", Negated: true})
		if d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != likes.ID || x.memory(likes.ID).SupersededBy != d.Memory.ID {
			t.Fatalf("the changed preference: %+v", d)
		}
		d = x.apply(extract.Candidate{Text: "User likes coffee again.", Category: "preference", Object: "coffee"})
		if d.Op != extract.OpInvalidate || d.Old == nil || d.Old.Text != "User does not like coffee." {
			t.Fatalf("changed back: %+v", d)
		}
		if v := x.valid(); len(v) != 2 {
			t.Fatalf("valid memories %q, want tea and coffee again", v)
		}
	})
}

// TestConsolidate_OldMetadata: memories stored before consolidation kept
// slots (metadata without them, or of a client's own) are still compared
// by their text, and their metadata is left alone.
func TestConsolidate_OldMetadata(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		for _, m := range []*agentmem.Memory{
			{UserID: "alice", Text: "User lives in Porto.", Category: "place", Confidence: 0.9, Metadata: json.RawMessage(`{}`)},
			{UserID: "alice", Text: "User likes jazz.", Category: "preference", Confidence: 0.9, Metadata: json.RawMessage(`{"slot": 3, "from": "crm"}`)},
		} {
			if err := s.CreateMemory(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if d := x.apply(extract.Candidate{Text: "User lives in Porto.", Category: "place", Slot: "residence", Object: "porto"}); d.Op != extract.OpNoop {
			t.Fatalf("a repeat of an old memory: %+v, want noop", d)
		}
		if d := x.apply(extract.Candidate{Text: "User likes jazz!", Category: "preference", Object: "jazz"}); d.Op != extract.OpNoop {
			t.Fatalf("a repeat of a memory with foreign metadata: %+v, want noop", d)
		}
		if v := x.valid(); len(v) != 2 {
			t.Fatalf("valid memories %q", v)
		}
	})
}

// TestConsolidate_RetractNamed: a retraction of a slot that names what it
// ends ends the memory of the slot that tells it ("I left Google" ends
// "User is a software engineer at Google.") and not another value ("User
// works as a nurse."); a cancelled plan ends plans alone.
func TestConsolidate_RetractNamed(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		job := x.apply(extract.Candidate{Text: "User is a software engineer at Google.", Category: "job", Slot: "job"}).Memory
		if d := x.apply(extract.Candidate{Text: "User left Deloitte.", Category: "job", Slot: "job", Object: "deloitte", Retract: true}); d.Op != extract.OpNoop {
			t.Fatalf("leaving Deloitte while at Google: %+v, want noop", d)
		}
		if d := x.apply(extract.Candidate{Text: "User left Google.", Category: "job", Slot: "job", Object: "google", Retract: true}); d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != job.ID {
			t.Fatalf("leaving Google: %+v, want the job at Google invalidated", d)
		}
		sister := x.apply(extract.Candidate{Text: "User's sister lives in Japan.", Category: "family", Object: "sister: live in japan"}).Memory
		trip := x.apply(extract.Candidate{Text: "User is going to Japan in April.", Category: "plan", Object: "go to japan in april"}).Memory
		if d := x.apply(extract.Candidate{Text: "User cancelled the Japan trip.", Category: "plan", Object: "japan", Retract: true}); d.Op != extract.OpInvalidate || d.Old == nil || d.Old.ID != trip.ID {
			t.Fatalf("cancelling the trip: %+v, want the plan invalidated", d)
		}
		if v := x.valid(); len(v) != 1 || v[0] != sister.Text {
			t.Fatalf("valid memories %q, want only the sister's", v)
		}
	})
}

// TestConsolidate_ChangesInOtherWords: a change of fact told the way
// people talk, extracted by Heuristic and consolidated by the rules,
// ends the memory it changes, and what changes nothing leaves it: a new
// employer ends the job at the old one; a reversed preference in
// colloquial words ("went off", "not into … anymore", "can't stand")
// ends the like; selling or giving away a thing ends having, driving or
// riding it; a birthday or "turned" gives the age; a break-up named by
// the partner ends the partner, however the partner was told; an
// ending of a habit without a subject or as "cut out" ends the habit;
// and "I've got" after "I have", fillers ahead, is a repeat. Each case
// is a user of its own: first its turns, then the texts of the first
// turn's memories that must have ended (none: they must stand, and the
// last turn must be a NOOP when repeat is set) and the texts that must
// be valid at the end.
func TestConsolidate_ChangesInOtherWords(t *testing.T) {
	type tc struct {
		turns  []string
		ended  []string
		stands []string
		repeat bool
	}
	cases := []tc{
		// 1. A new employer.
		{turns: []string{"I'm a nurse at St Mary's Hospital.", "I joined Deloitte as a consultant in June."}, ended: []string{"User is a nurse at St Mary's Hospital."}},
		{turns: []string{"I'm a teacher at Greenfield School.", "I started at Amazon as a data analyst last month."}, ended: []string{"User is a teacher at Greenfield School."}},
		{turns: []string{"I work at Siemens.", "I have a new job at Bosch."}, ended: []string{"User works at Siemens."}},
		{turns: []string{"I'm a designer at Canva.", "I got a job at the city library."}, ended: []string{"User is a designer at Canva."}},
		{turns: []string{"I work at Siemens.", "I'm now a product manager at Atlassian."}, ended: []string{"User works at Siemens."}},
		{turns: []string{"I'm a nurse at Kings College Hospital.", "I'm working at Guy's Hospital now."}, ended: []string{"User is a nurse at Kings College Hospital."}},
		{turns: []string{"I run every morning.", "Gave up running when I hurt my knee."}, ended: []string{"User runs every morning."}},
		{turns: []string{"I'm a nurse at St Mary's Hospital.", "I joined a running club."}, stands: []string{"User is a nurse at St Mary's Hospital."}},
		{turns: []string{"I'm an engineer at Airbus.", "I work at Airbus in Toulouse."}, stands: []string{"User is an engineer at Airbus."}},
		// 2. A reversed preference.
		{turns: []string{"I love jazz.", "I'm not into jazz anymore."}, ended: []string{"User loves jazz."}},
		{turns: []string{"I really like sushi.", "I went off sushi after a bad night."}, ended: []string{"User really likes sushi."}},
		{turns: []string{"I enjoy horror movies.", "I can't stand horror movies anymore."}, ended: []string{"User enjoys horror movies."}},
		{turns: []string{"I like running.", "I no longer like running."}, ended: []string{"User likes running."}},
		{turns: []string{"I love jazz.", "I went off to college in Boston."}, stands: []string{"User loves jazz."}},
		// 3. A thing sold or given away.
		{turns: []string{"I drive a Subaru Outback.", "I sold the Subaru last week."}, ended: []string{"User drives a Subaru Outback."}},
		{turns: []string{"I own a kayak.", "I got rid of the kayak."}, ended: []string{"User owns a kayak."}},
		{turns: []string{"I have an old piano.", "We gave away our piano."}, ended: []string{"User has an old piano."}},
		{turns: []string{"My sister drives a Tesla.", "I sold my Tesla."}, stands: []string{"User's sister drives a Tesla."}},
		// 4. Age.
		{turns: []string{"I'm 37.", "I celebrated my 38th birthday yesterday."}, ended: []string{"User is 37."}},
		{turns: []string{"I'm 29 years old.", "It was my 30th birthday last week."}, ended: []string{"User is 29 years old."}, stands: []string{"User turned 30 last week."}},
		{turns: []string{"I'm 52.", "Just turned 53!"}, ended: []string{"User is 52."}},
		{turns: []string{"I'm 37.", "My 40th birthday is next year."}, stands: []string{"User is 37."}},
		// 5. A break-up named by the partner.
		{turns: []string{"My girlfriend is called Sofia.", "Sofia and I split up in the spring."}, ended: []string{"User's girlfriend is called Sofia."}},
		{turns: []string{"I have a boyfriend named Tom.", "I broke up with Tom last week."}, ended: []string{"User has a boyfriend named Tom."}},
		{turns: []string{"My girlfriend is called Sofia.", "I broke up with Clara years ago."}, stands: []string{"User's girlfriend is called Sofia."}},
		// 6. A habit ended without a subject, or cut out.
		{turns: []string{"I smoke about ten cigarettes a day.", "Cut out cigarettes entirely in January."}, ended: []string{"User smokes about ten cigarettes a day."}},
		{turns: []string{"I drink two beers every night.", "stopped drinking beer last month"}, ended: []string{"User drinks two beers every night."}},
		{turns: []string{"I'm doing a keto diet.", "Stopped the keto diet, too hard."}, ended: []string{"User is doing a keto diet."}},
		{turns: []string{"I eat a lot of sugar.", "I cut sugar out in May."}, ended: []string{"User eats a lot of sugar."}},
		{turns: []string{"My dad drinks coffee every day.", "I quit coffee."}, stands: []string{"User's dad drinks coffee every day."}},
		// 7. A reworded repeat.
		{turns: []string{"I have a dog named Biscuit.", "yeah, I've got a dog named Biscuit"}, stands: []string{"User has a dog named Biscuit."}, repeat: true},
		{turns: []string{"I have two kids.", "Ok so I've got two kids."}, stands: []string{"User has two kids."}, repeat: true},
		{turns: []string{"I have a Kindle.", "yup I've got a Kindle"}, stands: []string{"User has a Kindle."}, repeat: true},
		// 8. A past home is not the residence.
		{turns: []string{"I live in Berlin.", "I lived in Tokyo for two years."}, stands: []string{"User lives in Berlin.", "User lived in Tokyo for two years."}},
		{turns: []string{"I live in Berlin.", "Back in 2019 I lived in Tokyo."}, stands: []string{"User lives in Berlin."}},
		{turns: []string{"I live in Berlin.", "I've lived in Madrid since May."}, ended: []string{"User lives in Berlin."}},
		// 9. Changes told in chat's own words.
		{turns: []string{"I'm doing my master's at UCL.", "graduated in July!"}, ended: []string{"User is doing their master's at UCL."}},
		{turns: []string{"i take sertraline 50mg", "came off the sertraline last month"}, ended: []string{"User takes sertraline 50mg."}},
		{turns: []string{"home's Dublin for now", "moved to Galway at the weekend"}, ended: []string{"User lives in Dublin for now."}},
		{turns: []string{"we live in Phoenix", "Phoenix isn't home anymore"}, ended: []string{"User and their family live in Phoenix."}},
		{turns: []string{"i'm a postman", "retired in September"}, ended: []string{"User is a postman."}},
		{turns: []string{"I smoke about ten a day.", "I haven't smoked in three months!"}, ended: []string{"User smokes about ten a day."}, stands: []string{"User has not smoked in three months."}},
		{turns: []string{"I teach chemistry at Lincoln High.", "I retired from teaching at the end of June."}, ended: []string{"User teaches chemistry at Lincoln High."}},
		{turns: []string{"I drive a blue Ford Focus.", "I finally sold the Focus."}, ended: []string{"User drives a blue Ford Focus."}, stands: []string{"User finally sold the Focus."}},
		{turns: []string{"I am 45 years old.", "Sorry, I made a mistake earlier, I am 54."}, ended: []string{"User is 45 years old."}, stands: []string{"User is 54."}},
		{turns: []string{"I'm studying law at King's College.", "I finished my law degree and started as a trainee solicitor at Clifford Chance."},
			ended: []string{"User is studying law at King's College."}, stands: []string{"User started as a trainee solicitor at Clifford Chance."}},
		{turns: []string{"my daughter is 5", "my daughter turned 6 today"}, ended: []string{"User's daughter is 5."}, stands: []string{"User's daughter turned 6 today."}},
		{turns: []string{"my daughter Mia is 5", "my daughter Lea is 3"}, stands: []string{"User's daughter Mia is 5.", "User's daughter Lea is 3."}},
		{turns: []string{"I don't drink at all", "I've started drinking again, just socially"}, ended: []string{"User does not drink at all."}},
		{turns: []string{"I'm on metformin", "doctor took me off the metformin"}, ended: []string{"User is on metformin."}},
		{turns: []string{"I live in Bristol.", "yeah like I said, I'm in Bristol"}, stands: []string{"User lives in Bristol."}, repeat: true},
		{turns: []string{"I'm married, no kids", "the divorce was finalised in March"}, ended: []string{"User is married."}},
		{turns: []string{"I play rugby on Saturdays", "had to give up rugby because of my shoulder"}, ended: []string{"User plays rugby on Saturdays."}},
		{turns: []string{"I'm vegan", "went back to eating meat after 3 years of being vegan"}, ended: []string{"User is vegan."}},
		{turns: []string{"I take metformin.", "My doctor switched me from metformin to insulin."}, ended: []string{"User takes metformin."}, stands: []string{"User is on insulin."}},
		{turns: []string{"My wife Claire works in finance.", "Claire and I are divorced now"}, ended: []string{"User's wife Claire works in finance."}},
		{turns: []string{"our cat Luna is 14", "Luna died this morning"}, ended: []string{"User's cat Luna is 14."}},
		{turns: []string{"I live in Austin.", "moving to Seattle next month", "ok, moved to Seattle now!"}, ended: []string{"User lives in Austin.", "User is moving to Seattle next month."}},
		{turns: []string{"I'm training for the London Marathon.", "forget what I said about the marathon"}, ended: []string{"User is training for the London Marathon."}},
		{turns: []string{"I drink most nights", "haven't had a drink in 100 days now!"}, ended: []string{"User drinks most nights."}},
		{turns: []string{"I have a dog named Max.", "scratch that, I don't actually have a dog"}, ended: []string{"User has a dog named Max."}},
		{turns: []string{"I'm a law student at Warwick.", "graduated!"}, ended: []string{"User is a law student at Warwick."}},
		{turns: []string{"my girlfriend is Chloe", "Chloe and I got married in June!"}, ended: []string{"User's girlfriend is Chloe."}, stands: []string{"User and Chloe got married in June."}},
		{turns: []string{"my girlfriend Chloe is a vet", "Chloe and I got married in June!"}, stands: []string{"User's girlfriend Chloe is a vet.", "User and Chloe got married in June."}},
		{turns: []string{"single at the moment", "so I've started seeing someone"}, ended: []string{"User is single at the moment."}},
		{turns: []string{"I live in Manchester.", "Moving to Leeds next month.", "Right, all moved in to the Leeds place now."}, ended: []string{"User lives in Manchester.", "User is moving to Leeds next month."}},
		{turns: []string{"I eat a lot of red meat.", "Went fully vegetarian last month."}, ended: []string{"User eats a lot of red meat."}},
		{turns: []string{"My girlfriend Emma and I live together.", "Emma and I broke up, I've moved out."}, ended: []string{"User and their girlfriend Emma live together."}},
		{turns: []string{"I have a glass of wine most nights.", "I've stopped drinking completely."}, ended: []string{"User has a glass of wine most nights."}},
		{turns: []string{"I take 20mg citalopram.", "Doctor upped my citalopram to 30mg."}, ended: []string{"User takes 20mg citalopram."}, stands: []string{"User takes citalopram 30mg."}},
		{turns: []string{"My sister lives in Dublin.", "Sorry, I meant Galway - my sister lives in Galway, not Dublin."}, ended: []string{"User's sister lives in Dublin."}, stands: []string{"User's sister lives in Galway."}},
		{turns: []string{"I can't stand olives.", "Weirdly I've come round to olives, I actually like them now."}, ended: []string{"User cannot stand olives."}, stands: []string{"User likes olives."}},
		{turns: []string{"My dog Rex is 15.", "We had to put Rex down on Friday."}, ended: []string{"User's dog Rex is 15."}},
		{turns: []string{"We're going to Bali in July", "Bali's cancelled, couldn't get time off"}, ended: []string{"User is going to Bali in July."}},
		{turns: []string{"I have my driving test on Monday", "Passed my driving test!!"}, ended: []string{"User has their driving test on Monday."}},
		{turns: []string{"I go to the gym every morning", "Cancelled my gym membership, I don't go anymore"}, ended: []string{"User goes to the gym every morning."}},
		{turns: []string{"Our wedding is on 14 June", "We moved the wedding to 20 September"}, ended: []string{"User's wedding is on 14 June."}, stands: []string{"User's wedding is on 20 September."}},
		{turns: []string{"I smoke about 10 a day", "3 months smoke free today!!"}, ended: []string{"User smokes about 10 a day."}},
		{turns: []string{"I love sushi", "actually scratch that about sushi, I don't really like it"}, ended: []string{"User loves sushi."}},
		{turns: []string{"I'm allergic to penicillin", "Correction — it's amoxicillin I'm allergic to, not penicillin, my mistake"}, ended: []string{"User is allergic to penicillin."}, stands: []string{"User is allergic to amoxicillin."}},
		// 10. Corrections rewrite the newest memory that names the old value.
		{turns: []string{"my sister lives in Porto", "sorry, I meant Braga, not Porto"}, ended: []string{"User's sister lives in Porto."}, stands: []string{"User's sister lives in Braga."}},
		{turns: []string{"I work at Barclays.", "I live in Leeds.", "oops, I meant HSBC not Barclays"}, ended: []string{"User works at Barclays."}, stands: []string{"User works at HSBC.", "User lives in Leeds."}},
		{turns: []string{"I'm 29", "oops, 28 actually"}, ended: []string{"User is 29."}, stands: []string{"User is 28."}},
		{turns: []string{"My condo is in Sukhumvit.", "Small correction: I said my condo is in Sukhumvit but that's wrong, it's in Ari."}, ended: []string{"User's condo is in Sukhumvit."}, stands: []string{"User's condo is in Ari."}},
		{turns: []string{"Our dog Brownie loves the beach.", "My dog is called Biscuit, not Brownie."}, ended: []string{"User's dog Brownie loves the beach."}, stands: []string{"User's dog Biscuit loves the beach."}},
		{turns: []string{"my sister lives in Porto", "sorry, I meant Braga, not Lisbon"}, stands: []string{"User's sister lives in Porto."}},
		{turns: []string{"veggie for 10 years now", "started eating fish again so pescatarian now i guess"}, ended: []string{"User has been vegetarian for 10 years now."}, stands: []string{"User is pescatarian now."}},
	}
	testutil.Backends(t, func(t *testing.T, s agentmem.Store) {
		x := newSlots(t, s)
		for i, tt := range cases {
			user := fmt.Sprintf("u%d", i)
			var last []extract.Decision
			for seq, text := range tt.turns {
				cands := extract.Heuristic([]*agentmem.Message{{Seq: int64(seq + 1), Role: agentmem.RoleUser, Content: text}})
				ds, err := x.c.Apply(ctx, user, "", "t1", cands)
				if err != nil {
					t.Fatal(err)
				}
				last = ds
			}
			ms, _, err := s.FindMemories(ctx, user, agentmem.MemoryFilter{})
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range ms {
				texts = append(texts, m.Text)
				if tt.repeat && m.Version != 1 {
					t.Errorf("%q: %q has version %d, want the repeat to change nothing", tt.turns, m.Text, m.Version)
				}
			}
			for _, e := range tt.ended {
				if slices.Contains(texts, e) {
					t.Errorf("%q: %q still valid; valid %q", tt.turns, e, texts)
				}
			}
			for _, e := range tt.stands {
				if !slices.Contains(texts, e) {
					t.Errorf("%q: %q not valid; valid %q", tt.turns, e, texts)
				}
			}
			if len(tt.ended) > 0 && len(ms) == 0 && len(tt.stands) == 0 {
				continue // a retraction alone
			}
			if tt.repeat {
				if len(last) == 0 {
					t.Errorf("%q: the repeat extracted nothing", tt.turns)
				}
				for _, d := range last {
					if d.Op != extract.OpNoop {
						t.Errorf("%q: the repeat was %s (%s), want noop", tt.turns, d.Op, d.Reason)
					}
				}
			}
		}
	})
}
