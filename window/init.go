package window

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentmem/agentmem"
)

// DefaultRecentSummaries is how many of the user's other threads' summaries
// open a context (seed 001's NUM_RECENT_SESSIONS_FOR_INIT).
const DefaultRecentSummaries = 2

// recentThreadsScanned bounds the threads read to find the recent
// summaries (threads without a summary are passed over).
const recentThreadsScanned = 20

// Init gives the context builder its initialisation block (seed 001's
// session initialisation, a InitProvider): what agentmem learned
// about the user, so that a new thread opens knowing it. Its sections,
// each left out when empty:
//
//   - "profile" (Key Insights): the user's newest profile;
//   - "notes" (Notes): the notes of the thread's agent;
//   - "recent_summaries" (Recent Session Summaries): the summaries of the
//     user's RecentSummaries most recently updated other threads, each
//     "- At 03:04 PM, Jan 02, 2006: …", the time of the last turn it
//     summarises (of an imported history too);
//   - "entities" (Entities): the entities the input names.
type Init struct {
	Store interface {
		agentmem.ProfileStore
		agentmem.ThreadStore
		agentmem.SummaryStore
		agentmem.MessageStore
	}
	// Notes returns the notes of a user's agent ("" when none); nil: no
	// notes section.
	Notes func(ctx context.Context, userID, agentID string) (string, error)
	// Entities returns the entities relevant to the input, one line each;
	// nil: no entities section.
	Entities func(ctx context.Context, userID, input string) ([]string, error)
	// RecentSummaries is how many other threads' summaries to include
	// (DefaultRecentSummaries when 0, none when negative).
	RecentSummaries int
}

var _ InitProvider = (*Init)(nil)

// InitBlock implements InitProvider. Its parts are read side by side, so
// that a build waits for the slowest, not for their sum; the sections come
// in their order (profile, notes, recent summaries, entities), and the
// first part that failed ends them, with its error.
func (in *Init) InitBlock(ctx context.Context, userID, agentID, threadID, input string) ([]Section, error) {
	type part struct {
		sec *Section
		err error
	}
	var parts [4]part
	var wg sync.WaitGroup
	run := func(i int, f func() (*Section, error)) {
		wg.Go(func() { parts[i].sec, parts[i].err = f() })
	}
	run(0, func() (*Section, error) {
		p, err := in.Store.FindProfile(ctx, userID)
		switch {
		case err == nil && strings.TrimSpace(p.Text) != "":
			return &Section{Name: "profile", Title: "Key Insights", Text: p.Text}, nil
		case err != nil && agentmem.ErrorCode(err) != agentmem.ENOTFOUND:
			return nil, fmt.Errorf("profile: %w", err)
		}
		return nil, nil
	})
	if in.Notes != nil && agentID != "" {
		run(1, func() (*Section, error) {
			notes, err := in.Notes(ctx, userID, agentID)
			if err != nil {
				return nil, fmt.Errorf("notes: %w", err)
			}
			if strings.TrimSpace(notes) != "" {
				return &Section{Name: "notes", Title: "Notes", Text: notes}, nil
			}
			return nil, nil
		})
	}
	if n := cmp.Or(in.RecentSummaries, DefaultRecentSummaries); n > 0 {
		run(2, func() (*Section, error) {
			lines, err := in.recent(ctx, userID, threadID, n)
			if err != nil || len(lines) == 0 {
				return nil, err
			}
			return &Section{Name: "recent_summaries", Title: "Recent Session Summaries", Text: strings.Join(lines, "\n")}, nil
		})
	}
	if in.Entities != nil && input != "" {
		run(3, func() (*Section, error) {
			ents, err := in.Entities(ctx, userID, input)
			if err != nil {
				return nil, fmt.Errorf("entities: %w", err)
			}
			if len(ents) > 0 {
				return &Section{Name: "entities", Title: "Entities", Text: "- " + strings.Join(ents, "\n- ")}, nil
			}
			return nil, nil
		})
	}
	wg.Wait()
	var out []Section
	for _, p := range parts {
		if p.err != nil {
			return out, p.err
		}
		if p.sec != nil {
			out = append(out, *p.sec)
		}
	}
	return out, nil
}

// recent returns the summaries of the user's n most recently updated
// threads other than threadID, newest first, as seed 001 writes them.
func (in *Init) recent(ctx context.Context, userID, threadID string, n int) ([]string, error) {
	threads, _, err := in.Store.FindThreads(ctx, userID, agentmem.ThreadFilter{Limit: recentThreadsScanned})
	if err != nil {
		return nil, fmt.Errorf("recent threads: %w", err)
	}
	var lines []string
	for _, t := range threads {
		if len(lines) == n {
			break
		}
		if t.ID == threadID {
			continue
		}
		s, err := in.Store.FindSummary(ctx, userID, t.ID)
		if agentmem.ErrorCode(err) == agentmem.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("summary of %s: %w", t.ID, err)
		}
		at := t.UpdatedAt
		last, _, err := in.Store.FindMessages(ctx, userID, t.ID, agentmem.MessageFilter{AfterSeq: s.ThroughSeq - 1, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("the last turn summarised of %s: %w", t.ID, err)
		}
		if len(last) == 1 && last[0].Seq == s.ThroughSeq {
			at = last[0].CreatedAt // when it was said, not when the thread last changed
		}
		lines = append(lines, fmt.Sprintf("- At %s: %s", at.Format(agentmem.SessionTimeLayout), strings.Join(strings.Fields(s.Text), " ")))
	}
	return lines, nil
}
