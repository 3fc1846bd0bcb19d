package extract_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/extract"
)

// TestHeuristic_Subjects: who a clause is about (subject.go): "my" with a
// relation and a name ("my twin brother Max and I", "my boss, Karen,",
// "our twins, Ava and Eli,"), chains of possessives, a relative without
// "my", someone named who died, and the one "he" or "she" in the next
// clause stands for ("a son, Jake, he's 4").
func TestHeuristic_Subjects(t *testing.T) {
	for _, tt := range []struct {
		say  string
		want []want
	}{
		{"My wife's name is Julia and she's a dentist.", []want{
			w("User's wife's name is Julia.", "slot=name-of:wife"),
			w("User's wife Julia is a dentist.", "object=wife julia: be a dentist")}},
		{"Me and my wife Sara run a B&B in Galway.", []want{w("User and their wife Sara run a B&B in Galway.", "object=run a b&b in galway")}},
		{"My brother's wife is a doctor.", []want{w("User's brother's wife is a doctor.", "object=brother's wife: be a doctor")}},
		{"My sister's a doctor.", []want{w("User's sister is a doctor.", "object=sister: be a doctor")}},
		{"My favourite book is Dune.", []want{w("User's favourite book is Dune.", "slot=favourite:book")}},
		{"my fav season is autumn", []want{w("User's favorite season is autumn.", "slot=favourite:season")}},
		{"My boss, Karen, keeps moving meetings to Fridays.", []want{w("User's boss Karen keeps moving meetings to Fridays.", "object=boss karen: keep moving meetings to fridays")}},
		{"my twin brother Max and I share a flat", []want{w("User and their twin brother Max share a flat.", "object=twin brother max: share a flat")}},
		{"my girl is 7 and crazy about horses", []want{w("User's girl is 7.", "object=girl: be 7"), w("User's girl is crazy about horses.", "object=girl: be crazy about horses")}},
		{"mum's a teacher and dad drives a taxi", []want{w("User's mum is a teacher.", "object=mum: be a teacher"), w("User's dad drives a taxi.", "object=dad: drive a taxi")}},
		{"I have a collie named Bess, she's 9", []want{w("User has a collie named Bess.", "object=collie bess"), w("User's collie Bess is 9.", "object=collie bess: be 9")}},
		{"I have a son, Jake, he's 4", []want{w("User has a son, Jake.", "object=son jake"), w("User's son Jake is 4.", "slot=age-of:son jake", "object=4")}},
		{"I married my wife Ana in 2010 and she is a doctor", []want{
			w("User married their wife Ana in 2010.", "object=marry my wife ana in 2010"), w("User's wife Ana is a doctor.", "object=wife ana: be a doctor")}},
		{"our flat is right by the canal in Leeds", []want{w("User's flat is right by the canal in Leeds.", "object=flat: be right by the canal in leeds")}},
		{"my kids' school is in Leeds", []want{w("User's kids' school is in Leeds.", "object=kids' school: be in leeds")}},
		{"Luna died this morning", []want{w("User's Luna died this morning.", "object=luna", "retract"), w("User's Luna died this morning.", "object=luna: die this morning")}},
		{"My son's bar mitzvah is in May", []want{w("User's son's bar mitzvah is in May.", "object=son's bar mitzvah: be in may")}},
		{"our basement flooded last night", []want{w("User's basement flooded last night.", "object=basement: flooded last night")}},
		{"Our twins, Ava and Eli, turn three next month", []want{w("User's twins Ava and Eli turn three next month.", "object=twins ava and eli: turn three next month")}},
	} {
		checkHeuristic(t, tt.say, tt.want)
	}
}

// TestHeuristic_PronounsHeldOut scores the resolution of "he", "she",
// "his", "her" and "they" on a held-out set written before the resolver
// and not tuned on (testdata/pronouns_heldout.json): the memories a
// pronoun's sentence adds, against those expected of it.
func TestHeuristic_PronounsHeldOut(t *testing.T) {
	data, err := os.ReadFile("testdata/pronouns_heldout.json")
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Cases []struct {
			Name   string
			Turns  []struct{ Role, Text string }
			Probe  []string
			Expect []struct {
				About string
				Words []string
			}
		}
	}
	if err := json.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	run := func(turns []struct{ Role, Text string }, drop []string) []string {
		var msgs []*agentmem.Message
		for i, tr := range turns {
			text := tr.Text
			for _, p := range drop {
				text = strings.Replace(text, p, "", 1)
			}
			msgs = append(msgs, &agentmem.Message{Seq: int64(i + 1), Role: tr.Role, Content: text})
		}
		var texts []string
		for _, c := range extract.Heuristic(msgs) {
			texts = append(texts, c.Text)
		}
		return texts
	}
	var added, right, expected, found int
	for _, c := range set.Cases {
		without := run(c.Turns, c.Probe)
		var more []string // what the probes add
		for _, m := range run(c.Turns, nil) {
			if k := slices.Index(without, m); k >= 0 {
				without = slices.Delete(without, k, k+1)
				continue
			}
			more = append(more, m)
		}
		matches := func(m string, e int) bool {
			x := c.Expect[e]
			if !strings.Contains(m, x.About) {
				return false
			}
			for _, w := range x.Words {
				if !strings.Contains(strings.ToLower(m), strings.ToLower(w)) {
					return false
				}
			}
			return true
		}
		added += len(more)
		expected += len(c.Expect)
		for _, m := range more {
			ok := false
			for e := range c.Expect {
				ok = ok || matches(m, e)
			}
			if ok {
				right++
			} else {
				t.Logf("%s: wrong: %q", c.Name, m)
			}
		}
		for e, x := range c.Expect {
			if !slices.ContainsFunc(more, func(m string) bool { return matches(m, e) }) {
				t.Logf("%s: missed: %s %v", c.Name, x.About, x.Words)
			} else {
				found++
			}
		}
	}
	t.Logf("held-out pronouns: precision %d/%d, recall %d/%d", right, added, found, expected)
	// Floors below what the resolver first scored (19/19, 18/20), so
	// that a change that loses much of it fails.
	if float64(right) < 0.9*float64(added) || float64(found) < 0.8*float64(expected) {
		t.Errorf("held-out pronouns: precision %d/%d or recall %d/%d below 0.9 and 0.8", right, added, found, expected)
	}
}

// checkTurns checks that Heuristic draws exactly wants, in order, from a
// conversation: turns in order, an assistant's prefixed "A:", the rest
// the user's.
func checkTurns(t *testing.T, turns []string, wants []string) {
	t.Helper()
	var msgs []*agentmem.Message
	for i, tr := range turns {
		role := agentmem.RoleUser
		if s, ok := strings.CutPrefix(tr, "A:"); ok {
			role, tr = agentmem.RoleAssistant, s
		}
		msgs = append(msgs, &agentmem.Message{Seq: int64(i + 1), Role: role, Content: tr})
	}
	var got []string
	for _, c := range extract.Heuristic(msgs) {
		got = append(got, c.Text)
	}
	if !slices.Equal(got, wants) {
		t.Errorf("%q:\n got %q\nwant %q", turns, got, wants)
	}
}

// TestHeuristic_Pronouns: "he", "she", "his", "her" and "they" at the
// start of a sentence stand for the one person or pet of the user's named
// before in the message, or else in the user's previous turn
// (pronoun.go); with two in play, someone named by the assistant only,
// or none, the pronoun stays unresolved, and it is never the user.
func TestHeuristic_Pronouns(t *testing.T) {
	for _, tt := range []struct {
		turns []string
		want  []string
	}{
		// Within a message.
		{[]string{"My daughter Lily started school. She is allergic to eggs."},
			[]string{"User's daughter Lily started school.", "User's daughter Lily is allergic to eggs."}},
		{[]string{"My daughter Lily started school. She loves it. She is allergic to eggs."},
			[]string{"User's daughter Lily started school.", "User's daughter Lily is allergic to eggs."}},
		{[]string{"My son Theo turned 6. His school is in Leeds."},
			[]string{"User's son Theo turned 6.", "User's son Theo's school is in Leeds."}},
		{[]string{"My mum is a nurse. Her hospital is in Cork."},
			[]string{"User's mum is a nurse.", "User's mum's hospital is in Cork."}},
		{[]string{"My parents moved to Spain. They are both retired."},
			[]string{"User's parents moved to Spain.", "User's parents are both retired."}},
		{[]string{"We got a kitten called Mochi. She is 12 weeks old."},
			[]string{"User got a kitten called Mochi.", "User's kitten Mochi is 12 weeks old."}},
		{[]string{"I have a new colleague. Her name is Priya."},
			[]string{"User has a new colleague.", "User's colleague's name is Priya."}},
		{[]string{"Donna (my wife) already threw out the beer. She's on my case but in a good way."},
			[]string{"User's wife Donna is on their case."}},
		// A possessive of someone's: "my son Theo's school".
		{[]string{"My son's school is in Leeds."}, []string{"User's son's school is in Leeds."}},
		{[]string{"My son Theo's favourite food is pasta."}, []string{"User's son Theo's favourite food is pasta."}},
		// From the previous turn.
		{[]string{"I've started seeing someone, she's called Ines.", "A:How lovely! How did you meet?", "She's a nurse at St James's."},
			[]string{"User has started seeing someone named Ines.", "User's partner Ines is a nurse at St James's."}},
		{[]string{"My brother Paul got engaged.", "A:Congratulations to him!", "He lives in Leeds now."},
			[]string{"User's brother Paul got engaged.", "User's brother Paul lives in Leeds now."}},
		{[]string{"My sister Ana moved to Porto.", "A:Porto is beautiful in spring.", "She works at a bank there."},
			[]string{"User's sister Ana moved to Porto.", "User's sister Ana works at a bank there."}},
		// Two in play: no guess.
		{[]string{"My son Tom plays rugby and my daughter Amy plays netball. She is 9."},
			[]string{"User's son Tom plays rugby.", "User's daughter Amy plays netball."}},
		{[]string{"My parents and my sister Jo came for lunch. They are vegan."},
			[]string{"User's sister Jo came for lunch."}},
		{[]string{"My brother Paul got engaged.", "A:Congratulations! Is your cousin Mark going to be best man?", "He lives in Leeds now."},
			[]string{"User's brother Paul got engaged."}},
		{[]string{"My sister Ana and my friend Jo visited.", "A:Nice.", "She is a vet."}, []string{"User's friend Jo visited."}},
		// Named by the assistant only, or by no one: nothing, and never the user.
		{[]string{"Work was long today.", "A:Maybe ring your friend Beth tonight?", "She is a teacher."}, nil},
		{[]string{"She is a teacher."}, nil},
		{[]string{"I'm a nurse. She is a doctor."}, []string{"User is a nurse."}},
		{[]string{"I've been seeing someone. His name's Alex."}, []string{"User has been seeing someone.", "User's partner's name is Alex."}},
		// "They" of pets or friends says how the user feels more than a
		// fact; a phrase of "my" that names no one ("our hike with the
		// dogs", "my first chat with the vet") is no one.
		{[]string{"My dogs love the park. They are the best buddies."}, []string{"User's dogs love the park."}},
		{[]string{"Can't wait for our hike with the dogs. They always make me smile."}, []string{"User cannot wait for their hike with the dogs."}},
		{[]string{"I had my first chat with the vet about Simba's jabs. She only switched to English twice."},
			[]string{"User had their first chat with the vet about Simba's jabs."}},
		// A question, and a writer whose names are not capitalised.
		{[]string{"My brother Tom is moving. Is he taking the dog?"}, []string{"User's brother Tom is moving."}},
		{[]string{"my husband mark is a bus driver so i do breakfast for ethan. he starts school in september"},
			[]string{"User's husband mark is a bus driver.", "User does breakfast for ethan."}},
	} {
		checkTurns(t, tt.turns, tt.want)
	}
}
