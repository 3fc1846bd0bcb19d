package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"encoding/json"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/chromedp/chromedp"
)

// TestSearchAndEdit: the inspector's search shows what is found with its
// scores per signal; a memory is edited in place, on the server too.
func TestSearchAndEdit(t *testing.T) {
	srv, mem := serve(t)
	m, err := mem.CreateMemory(context.Background(), "bo", agentmem.MemoryInput{Text: "User collects vinyl records.", Category: "hobby"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, consoleErrors := browser(t, 1280, 800)
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?user=bo"),
		ready,
		chromedp.WaitVisible(chromedp.CSS(`#memories li button.edit`)),
		chromedp.SendKeys(chromedp.ID("search-input"), "vinyl records"),
		chromedp.Click(chromedp.CSS(`#search-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`#search-results li[data-kind="memory"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	found, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#search-results li[data-kind="memory"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(found, "User collects vinyl records.") || !strings.Contains(found, "fulltext") || !strings.Contains(found, "score") {
		t.Errorf("search result %q", found)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#memories li button.edit`)),
		chromedp.WaitVisible(chromedp.CSS(`#memories li form input`)),
		script(`document.querySelector("#memories li form input").value = ""`),
		chromedp.SendKeys(chromedp.CSS(`#memories li form input`), "User collects jazz vinyl records."),
		chromedp.Click(chromedp.CSS(`#memories li form button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#memories li form`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mem.FindMemoryByID(context.Background(), "bo", m.ID)
	if err != nil || got.Text != "User collects jazz vinyl records." || got.Version != 2 {
		t.Errorf("the server's memory: %+v, %v", got, err)
	}
	// Its history: both versions, the edit's reason.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#memories li details.history summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#memories li details.history ol li`)))
	if err != nil {
		t.Fatal(err)
	}
	history, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#memories li details.history ol`)))
	if !strings.Contains(history, "v1") || !strings.Contains(history, "v2") || !strings.Contains(history, "edited in the web UI") {
		t.Errorf("the memory's history %q", history)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestMemoryInspector: each memory shows its category, confidence,
// validity on a timeline and the conversation it came from (which opens
// it); one is invalidated (still listed among the ones no longer true),
// another deleted; each change is the server's.
func TestMemoryInspector(t *testing.T) {
	srv, mem := serve(t)
	bg := context.Background()
	if err := mem.CreateThread(bg, "fa", &agentmem.Thread{ID: "trip", Title: "Lisbon trip"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.AppendMessages(bg, "fa", "trip", []*agentmem.Message{{Role: "user", Content: "I fly to Lisbon on May 3."}, {Role: "assistant", Content: "Noted."}}, ""); err != nil {
		t.Fatal(err)
	}
	conf := 0.8
	plan, err := mem.CreateMemory(bg, "fa", agentmem.MemoryInput{Text: "User flies to Lisbon on May 3.", Category: "plan", Confidence: &conf, ThreadID: "trip", SeqFrom: 1, SeqTo: 2})
	if err != nil {
		t.Fatal(err)
	}
	tea, err := mem.CreateMemory(bg, "fa", agentmem.MemoryInput{Text: "User likes green tea.", Category: "preference"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, consoleErrors := browser(t, 1280, 800)
	step := steps(t, ctx)
	planItem := `#memories li[data-memory="` + plan.ID + `"]`
	teaItem := `#memories li[data-memory="` + tea.ID + `"]`
	step("open", chromedp.Navigate(srv.URL+"/?user=fa"), ready, chromedp.WaitVisible(chromedp.CSS(planItem+" .timeline .range")))
	if got := textOf(t, ctx, chromedp.CSS(planItem)); !strings.Contains(got, "plan · confidence 80%") || !strings.Contains(got, "valid since") || !strings.Contains(got, "from a conversation, messages 1–2") {
		t.Errorf("the memory shows %q", got)
	}

	screenshot(t, ctx, "memories-desktop")
	step("phone", chromedp.EmulateViewport(375, 812))
	screenshot(t, ctx, "memories-phone")
	step("desktop", chromedp.EmulateViewport(1280, 800))
	step("its conversation", chromedp.Click(chromedp.CSS(planItem+" button.link")),
		chromedp.WaitVisible(chromedp.Search(`//li[contains(@class, "msg")]/span[text()="I fly to Lisbon on May 3."]`)),
		// The inspector is redrawn for the thread: its buttons are new
		// once it is done (CI once clicked "invalidate" in between).
		chromedp.WaitNotPresent(chromedp.CSS(`body[data-opening]`)))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "thread=trip") {
		t.Errorf("the URL after opening the memory's conversation: %s", loc)
	}
	if marked, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#messages li.marked")].map(li => li.dataset.seq)`)); len(marked) != 2 || marked[0] != "1" || marked[1] != "2" {
		t.Errorf("the messages the memory came from are marked %q, not 1 and 2", marked)
	}

	step("invalidate", chromedp.Click(chromedp.CSS(planItem+" button.invalidate")), chromedp.Click(chromedp.CSS(planItem+" button.invalidate")),
		chromedp.WaitNotPresent(chromedp.CSS(planItem)))
	if m, err := mem.FindMemoryByID(bg, "fa", plan.ID); err != nil || m.InvalidAt == nil {
		t.Errorf("the server's memory after invalidating: %+v, %v", m, err)
	}
	step("show the invalid", chromedp.Click(chromedp.ID("show-invalid")), chromedp.WaitVisible(chromedp.CSS(planItem+`.invalid`)))
	if got := textOf(t, ctx, chromedp.CSS(planItem)); !strings.Contains(got, "valid ") || !strings.Contains(got, " – ") {
		t.Errorf("the invalidated memory shows %q", got)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("`+strings.ReplaceAll(planItem, `"`, `\"`)+` button.invalidate").length`)); n != 0 {
		t.Error("an invalidated memory offers to be invalidated again")
	}

	step("delete", chromedp.Click(chromedp.CSS(teaItem+" button.forget")), chromedp.Click(chromedp.CSS(teaItem+" button.forget")),
		chromedp.WaitNotPresent(chromedp.CSS(teaItem)))
	if _, err := mem.FindMemoryByID(bg, "fa", tea.ID); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Errorf("the deleted memory: %v", err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestLeftOut: a conversation longer than the budget shows the messages
// left out of the context, which open to show them; the inspector's
// token counts are the context endpoint's, section by section.
func TestLeftOut(t *testing.T) {
	srv, mem := serveAuth(t, httpapi.Auth{}, func(cfg *app.Config) { cfg.Context.BudgetTokens = 400 })
	bg := context.Background()
	if err := mem.CreateThread(bg, "gi", &agentmem.Thread{ID: "long", Title: "A long one"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for i := 1; i <= 40; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		msgs = append(msgs, &agentmem.Message{Role: role, Content: fmt.Sprintf("message %d: %s", i, strings.Repeat("words to fill the budget ", 6))})
	}
	if _, err := mem.AppendMessages(bg, "gi", "long", msgs, ""); err != nil {
		t.Fatal(err)
	}
	// The first build asks for a summary of what does not fit; once it is
	// written, the context stays as it is while the page shows it.
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := mem.BuildContext(bg, "gi", "long", agentmem.ContextRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Telemetry.SummaryThroughSeq > 0 && c.Telemetry.SummaryJob == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no summary: %+v", c.Telemetry)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, consoleErrors := browser(t, 1280, 800)
	step := steps(t, ctx)
	step("open", chromedp.Navigate(srv.URL+"/?user=gi&thread=long"), ready, chromedp.WaitVisible(chromedp.CSS(`#omitted li summary`)))
	if got := textOf(t, ctx, chromedp.CSS(`#omitted li summary`)); !strings.HasPrefix(got, "Messages 1–") {
		t.Errorf("the left-out messages: %q", got)
	}
	step("open them", chromedp.Click(chromedp.CSS(`#omitted li summary`)), chromedp.WaitVisible(chromedp.CSS(`#omitted li ol li`)))
	if got := textOf(t, ctx, chromedp.CSS(`#omitted li ol li`)); !strings.HasPrefix(got, "1 user: message 1:") {
		t.Errorf("the first left-out message: %q", got)
	}

	res, err := http.Post(srv.URL+"/v1/users/gi/threads/long/context", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Telemetry agentmem.Telemetry }
	json.NewDecoder(res.Body).Decode(&c)
	res.Body.Close()
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll("#sections tbody tr")].map(r => [r.cells[0].textContent, r.cells[1].textContent]))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != len(c.Telemetry.Sections) || len(shown) == 0 {
		t.Errorf("sections shown %v, the endpoint's %v", shown, c.Telemetry.Sections)
	}
	for name, n := range c.Telemetry.Sections {
		if shown[name] != strconv.Itoa(n) {
			t.Errorf("section %s: shown %q tokens, the endpoint counts %d", name, shown[name], n)
		}
	}
	if used := textOf(t, ctx, chromedp.CSS(`#used`)); used != strconv.Itoa(c.Telemetry.UsedTokens) || textOf(t, ctx, chromedp.CSS(`#budget`)) != "400" {
		t.Errorf("used %s of %s, the endpoint %d of 400", used, textOf(t, ctx, chromedp.CSS(`#budget`)), c.Telemetry.UsedTokens)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// deadJob makes a job of the user that failed for good (a kind no worker
// runs), written into agentmem's SQLite file db beside the running app.
func deadJob(t *testing.T, db, user, reason string) *agentmem.Job {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j, err := st.EnqueueJob(ctx, &agentmem.Job{UserID: user, Kind: "webtest", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimJobs(ctx, "webtest-worker", []string{"webtest"}, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.FailJob(ctx, user, j.ID, "webtest-worker", reason, time.Now()); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestJobs: the user's background work shows a failed job with its
// reason, and Retry queues it again on the server.
func TestJobs(t *testing.T) {
	var db string
	srv, mem := serveAuth(t, httpapi.Auth{}, func(cfg *app.Config) { db = cfg.DB })
	job := deadJob(t, db, "ho", "the model answered 500")
	ctx, consoleErrors := browser(t, 1280, 800)
	step := steps(t, ctx)
	item := `#jobs li[data-job="` + job.ID + `"]`
	step("open", chromedp.Navigate(srv.URL+"/?user=ho"), ready, chromedp.WaitVisible(chromedp.CSS(item+`[data-status="dead"] button.retry`)))
	if got := textOf(t, ctx, chromedp.CSS(item)); !strings.Contains(got, "webtest dead") || !strings.Contains(got, "the model answered 500") {
		t.Errorf("the failed job shows %q", got)
	}
	step("retry", chromedp.Click(chromedp.CSS(item+` button.retry`)), chromedp.WaitVisible(chromedp.CSS(item+`[data-status="queued"]`)))
	queued := "queued"
	jobs, _, err := mem.FindUserJobs(context.Background(), "ho", agentmem.JobFilter{Status: &queued})
	if err != nil || len(jobs) != 1 || jobs[0].ID != job.ID || jobs[0].Attempts != 0 {
		t.Errorf("the server's queued jobs after the retry: %+v, %v", jobs, err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
