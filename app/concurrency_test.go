package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
)

// TestExtraction_NoDuplicates: users talking at once, each in one thread
// of six batches ("I like X." / "OK") then ended, through the real
// pipeline (core.Service and the worker pool): once the jobs have
// drained, no user has the same memory twice, neither by text nor by
// source (thread and seq_from). Idle workers claim the index job of each
// batch at once, so a user's jobs overlap: the first of a thread's two
// shared jobs may read the turns that the second was queued for, and
// both would consolidate them at once.
func TestExtraction_NoDuplicates(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, db string) { testNoDuplicates(t, mustOpen(t, db)) })
}

func testNoDuplicates(t *testing.T, mem *app.App) {
	ctx := context.Background()
	const users, batches = 20, 6
	things := []string{"tea", "jazz", "chess", "hiking", "sushi", "opera"}
	var wg sync.WaitGroup
	errs := make(chan error, users)
	for u := range users {
		if u%2 == 0 {
			// Two users at a time, on idle workers, which claim the index
			// job of each append at once.
			wg.Wait()
			waitIdle(t, mem)
		}
		wg.Go(func() {
			user := fmt.Sprintf("u%d", u)
			if err := mem.CreateThread(ctx, user, &agentmem.Thread{ID: "t"}); err != nil {
				errs <- err
				return
			}
			for i := range batches {
				msgs := []*agentmem.Message{
					{Role: agentmem.RoleUser, Content: fmt.Sprintf("I like %s.", things[i])},
					{Role: agentmem.RoleAssistant, Content: "OK"},
				}
				if _, err := mem.AppendMessages(ctx, user, "t", msgs, ""); err != nil {
					errs <- err
					return
				}
			}
			if _, err := mem.EndThread(ctx, user, "t"); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitIdle(t, mem)
	for u := range users {
		user := fmt.Sprintf("u%d", u)
		ms, _, err := mem.FindMemories(ctx, user, agentmem.MemoryFilter{Limit: agentmem.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		byText, bySource := map[string]string{}, map[string]string{}
		for _, m := range ms {
			src := fmt.Sprintf("%s#%d", m.ThreadID, m.SeqFrom)
			if id, ok := byText[m.Text]; ok {
				t.Errorf("%s: memory %q stored twice (%s and %s)", user, m.Text, id, m.ID)
			}
			if id, ok := bySource[src]; ok {
				t.Errorf("%s: memories %s and %s both come from %s", user, id, m.ID, src)
			}
			byText[m.Text], bySource[src] = m.ID, m.ID
		}
		if len(ms) != batches {
			t.Errorf("%s has %d memories, want %d", user, len(ms), batches)
		}
	}
}
