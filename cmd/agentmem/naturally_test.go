package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
)

// TestServe_TalkNaturally is issue 12's promise, through a real serve with
// no model: a user talks as people do, and finds what they said about
// themselves in the profile; a fact they change later replaces the old
// one in the profile, the next context's init block and search: what
// says the old fact is marked superseded and ranks below the new one.
func TestServe_TalkNaturally(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting for its jobs
	ctx := context.Background()
	srv := MustServe(t, "sqlite:"+filepath.Join(t.TempDir(), "agentmem.db"))
	c := client.New(srv.URL, nil)
	const user = "maya"

	talk := func(thread string, turns ...string) {
		t.Helper()
		if err := c.CreateThread(ctx, user, &agentmem.Thread{ID: thread, AgentID: "coach"}); err != nil {
			t.Fatal(err)
		}
		for _, turn := range turns {
			msgs := []*agentmem.Message{{Role: "user", Content: turn}, {Role: "assistant", Content: "Got it."}}
			if _, err := c.AppendMessages(ctx, user, thread, msgs, ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.EndThread(ctx, user, thread); err != nil {
			t.Fatal(err)
		}
	}
	// profileWith waits for a profile that says every one of want and
	// none of gone (the jobs that write it run in the background).
	profileWith := func(want []string, gone ...string) string {
		t.Helper()
		var text string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			p, err := c.FindProfile(ctx, user)
			if err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
				t.Fatal(err)
			}
			if p == nil {
				continue
			}
			text = p.Text
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(text, w)
			}
			for _, g := range gone {
				ok = ok && !strings.Contains(text, g)
			}
			if ok {
				return text
			}
		}
		t.Fatalf("the profile never said all of %q and none of %q:\n%s", want, gone, text)
		return ""
	}

	talk("monday",
		"hey! I'm Maya, I live in Porto and I work as a nurse at the city hospital.",
		"I'm vegetarian and my sister Ana lives in Berlin.",
		"I can't eat peanuts, and I speak Portuguese and German.",
		"my daughter Mia starts school in September.",
		"what should I cook tonight?",
	)
	before := profileWith([]string{"Porto", "nurse", "vegetarian", "Ana", "peanuts", "Mia"})

	talk("friday",
		"big news: I moved to Lisbon last week!",
		"also I'm not vegetarian anymore.",
	)
	after := profileWith([]string{"Lisbon"}, "lives in Porto", "is vegetarian")
	for _, kept := range []string{"nurse", "Ana", "peanuts", "Mia"} {
		if !strings.Contains(after, kept) {
			t.Errorf("the profile lost %q:\n%s\nbefore:\n%s", kept, after, before)
		}
	}

	// The next thread's context opens with the present.
	if err := c.CreateThread(ctx, user, &agentmem.Thread{ID: "next", AgentID: "coach"}); err != nil {
		t.Fatal(err)
	}
	cx, err := c.BuildContext(ctx, user, "next", agentmem.ContextRequest{Input: "Where do I live now?", Format: "text"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cx.Text, "Lisbon") || strings.Contains(cx.Text, "User lives in Porto") {
		t.Errorf("the context does not put the present first:\n%s", cx.Text)
	}

	res, err := c.Search(ctx, user, agentmem.SearchRequest{Query: "where does the user live now", TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	lisbon, porto := -1, -1
	for i, r := range res.Results {
		switch {
		case strings.Contains(r.Text, "Lisbon") && lisbon < 0:
			lisbon = i
		case strings.Contains(r.Text, "Porto"):
			if porto < 0 {
				porto = i
			}
			if r.SupersededBy == "" {
				t.Errorf("search returned %q without saying it is superseded", r.Text)
			}
		}
	}
	if lisbon < 0 || porto >= 0 && porto < lisbon {
		var got []string
		for _, r := range res.Results {
			got = append(got, r.Kind+": "+r.Text)
		}
		t.Errorf("search ranked %q: want the Lisbon memory above anything about Porto", got)
	}
}

// TestServe_CalledByName: an assistant that calls the user by name
// ("Enjoy the new job, Sophie!") teaches the name, which the user never
// says; a question that names them then finds their facts, not the
// assistant's greetings nor the memory of the name.
func TestServe_CalledByName(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting for its jobs
	ctx := context.Background()
	srv := MustServe(t, "sqlite:"+filepath.Join(t.TempDir(), "agentmem.db"))
	c := client.New(srv.URL, nil)
	const user = "u-417"
	if err := c.CreateThread(ctx, user, &agentmem.Thread{ID: "t1"}); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{
		{"I just started a new job as a physiotherapist at the sports clinic.", "Congratulations on the new job, Sophie! How was the first day?"},
		{"Long but good. We moved to Leeds in the spring, so the commute is short.", "A short commute makes a big difference. Enjoy settling in, Sophie."},
		{"thanks!", "Any time, Sophie. Good luck this week!"},
	} {
		msgs := []*agentmem.Message{{Role: "user", Content: pair[0]}, {Role: "assistant", Content: pair[1]}}
		if _, err := c.AppendMessages(ctx, user, "t1", msgs, ""); err != nil {
			t.Fatal(err)
		}
	}
	var texts []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ms, _, err := c.FindMemories(ctx, user, agentmem.MemoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		texts = texts[:0]
		for _, m := range ms {
			texts = append(texts, m.Text)
		}
		if joined := strings.Join(texts, "|"); strings.Contains(joined, "User is called Sophie.") && strings.Contains(joined, "Leeds") {
			break
		}
	}
	if joined := strings.Join(texts, "|"); !strings.Contains(joined, "User is called Sophie.") || !strings.Contains(joined, "Leeds") {
		t.Fatalf("memories %q: want the name the assistant calls the user by, and where they live", texts)
	}
	// The memories are in before the index job is done (their vectors,
	// the turns' windows): search once it is, or a loaded machine ranks
	// by what is indexed so far.
	waitIdle(t, srv)
	res, err := c.Search(ctx, user, agentmem.SearchRequest{Query: "Where does Sophie live?", TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || !strings.Contains(res.Results[0].Text, "Leeds") {
		var got []string
		for _, r := range res.Results {
			got = append(got, r.Kind+": "+r.Text)
		}
		t.Fatalf("Where does Sophie live? %q: want what says Leeds first", got)
	}
	for _, r := range res.Results {
		if strings.Contains(r.Text, "User is called Sophie") {
			t.Errorf("the memory of the name answers a question that names the user: %+v", r)
		}
	}
}
