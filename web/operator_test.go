package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/chromedp/chromedp"
)

// TestOperator: an admin sees the operator's view (the store's counts,
// the users, failed jobs retried from there, keys, the audit log, a
// dashboard of the metrics); a user's key does not, the page takes its
// user from the key, and its chat works with the key typed into the page.
func TestOperator(t *testing.T) {
	var db string
	srv, mem := serveAuth(t, httpapi.Auth{Mode: httpapi.AuthAPIKey}, func(cfg *app.Config) { db = cfg.DB })
	bg := context.Background()
	admin, err := mem.CreateKey(bg, agentmem.KeyInput{Scope: "admin", Name: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := mem.CreateKey(bg, agentmem.KeyInput{Scope: "user:eva", Name: "eva's app"})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.CreateThread(bg, "eva", &agentmem.Thread{ID: "old"}); err != nil {
		t.Fatal(err)
	}
	if err := mem.DeleteThread(bg, "eva", "old", true); err != nil { // an erasure: audited
		t.Fatal(err)
	}
	job := deadJob(t, db, "eva", "reflection failed: the model answered 500")
	ctx, consoleErrors := browser(t, 1280, 800)
	withKey := func(key, user string) chromedp.Action[chromedp.Void] {
		return script(`sessionStorage.setItem("agentmem.key", ` + strconv.Quote(key) + `); localStorage.setItem("agentmem.user", ` + strconv.Quote(user) + `)`)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), withKey(admin.Token, "eva"), chromedp.Reload(), ready,
		chromedp.WaitVisible(chromedp.ID("operator")), chromedp.Click(chromedp.CSS("#operator summary")),
		chromedp.WaitVisible(chromedp.CSS("#audit li")))
	if err != nil {
		t.Fatal(err)
	}
	view, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("operator")))
	for _, want := range []string{"1 user, 0 conversations", "eva's app (user eva)", "ops (admin)", "erase", "reflection failed: the model answered 500", "Requests", "p99 latency"} {
		if !strings.Contains(view, want) {
			t.Errorf("the operator's view lacks %q:\n%s", want, view)
		}
	}
	screenshot(t, ctx, "operator-desktop")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(375, 812)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "operator-phone")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	users, _ := chromedp.Run(ctx, chromedp.Evaluate[[][]string](`[...document.querySelectorAll("#users tbody tr")].map(r => [...r.cells].map(c => c.textContent))`))
	if len(users) != 1 || users[0][0] != "eva" {
		t.Errorf("the users table: %q", users)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#dead-jobs li[data-job="`+job.ID+`"] button.retry`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#dead-jobs li[data-job="`+job.ID+`"]`)))
	if err != nil {
		t.Fatal(err)
	}
	queued := "queued"
	if jobs, _, err := mem.FindJobs(bg, agentmem.JobFilter{Status: &queued}); err != nil || len(jobs) != 1 || jobs[0].ID != job.ID {
		t.Errorf("queued jobs after the operator's retry: %+v, %v", jobs, err)
	}
	// A user's key: the page shows that user's memory, whatever it was
	// last showing.
	err = chromedp.Do(ctx, withKey(user.Token, "someone-else"), chromedp.Navigate(srv.URL+"/"), ready,
		chromedp.SendKeys(chromedp.ID("input"), "Hello from eva\r"),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant[data-done="true"]`)))
	if err != nil {
		t.Fatal(err)
	}
	hidden, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("operator").hidden`))
	if !hidden {
		t.Error("a user's key sees the operator's view")
	}
	shown, _ := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[document.getElementById("user").value, document.getElementById("user").readOnly]`))
	if len(shown) != 2 || shown[0] != "eva" || shown[1] != true {
		t.Errorf("the user field with eva's key: %v", shown)
	}
	if th, _, err := mem.FindThreads(bg, "eva", agentmem.ThreadFilter{}); err != nil || len(th) != 1 {
		t.Errorf("eva's threads after chatting with her key: %d, %v", len(th), err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
