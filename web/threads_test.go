package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/chromedp/chromedp"
)

// TestSidebar: the conversations come a page at a time, are found by
// title, and a deleted one is restored from "Recently deleted".
func TestSidebar(t *testing.T) {
	srv, mem := serve(t)
	bg := context.Background()
	for i := 1; i <= 34; i++ {
		if err := mem.CreateThread(bg, "ida", &agentmem.Thread{ID: fmt.Sprintf("t%02d", i), Title: fmt.Sprintf("Chat number %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, th := range []*agentmem.Thread{{ID: "porto", Title: "Moving to PORTO"}, {ID: "gone", Title: "An old idea"}} {
		if err := mem.CreateThread(bg, "ida", th); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.DeleteThread(bg, "ida", "gone", false); err != nil {
		t.Fatal(err)
	}
	ctx, consoleErrors := browser(t, 1280, 800)
	step := steps(t, ctx)
	count := func() int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#threads li").length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	step("open", chromedp.Navigate(srv.URL+"/?user=ida"), ready, chromedp.WaitVisible(chromedp.ID("more")))
	if n := count(); n != 30 {
		t.Errorf("the first page lists %d conversations, not 30", n)
	}
	step("more", chromedp.Click(chromedp.ID("more")), chromedp.WaitNotVisible(chromedp.ID("more")))
	if n := count(); n != 35 {
		t.Errorf("after More: %d conversations, not 35", n)
	}
	step("find", chromedp.SendKeys(chromedp.ID("thread-search"), "porto"),
		chromedp.WaitNotPresent(chromedp.CSS(`#threads button[data-thread="t01"]`)), chromedp.WaitVisible(chromedp.CSS(`#threads button[data-thread="porto"]`)))
	if n := count(); n != 1 {
		t.Errorf("found %d conversations for porto, not 1", n)
	}
	step("find nothing", script(`document.getElementById("thread-search").value = ""`), chromedp.SendKeys(chromedp.ID("thread-search"), "zebra"),
		chromedp.WaitVisible(chromedp.ID("threads-empty")))
	if got := textOf(t, ctx, chromedp.CSS("#threads-empty")); got != "No conversation's title contains “zebra”." {
		t.Errorf("empty search says %q", got)
	}
	step("restore", chromedp.Click(chromedp.CSS(`#deleted summary`)), chromedp.WaitVisible(chromedp.CSS(`#deleted-threads button`)),
		chromedp.Click(chromedp.CSS(`#deleted-threads button`)), chromedp.WaitVisible(chromedp.CSS(`#toolbar`)))
	if th, err := mem.FindThreadByID(bg, "ida", "gone"); err != nil || th.DeletedAt != nil {
		t.Errorf("the restored thread: %+v, %v", th, err)
	}
	if got := textOf(t, ctx, chromedp.CSS("#title")); got != "An old idea" {
		t.Errorf("the toolbar's title after restoring: %q", got)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestThreadActions: in the browser, a conversation is renamed, exported,
// deleted and restored; the agent's notes are edited; a memory is
// deleted; each change is the server's.
func TestThreadActions(t *testing.T) {
	srv, mem := serve(t)
	ctx, consoleErrors := browser(t, 1280, 800)
	bg := context.Background()
	step := steps(t, ctx)
	text := func(sel chromedp.CSS) string { return textOf(t, ctx, sel) }
	step("send", chromedp.Navigate(srv.URL+"/?user=ada"), ready,
		chromedp.SendKeys(chromedp.ID("input"), "I live in Porto.\r"),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant[data-done="true"]`)), chromedp.WaitVisible(chromedp.ID("toolbar")))
	location, _ := chromedp.Run(ctx, chromedp.Location())
	u, _ := url.Parse(location)
	thread := u.Query().Get("thread")

	step("rename", chromedp.Click(chromedp.ID("rename")), chromedp.WaitVisible(chromedp.ID("rename-input")),
		clearField("rename-input"), chromedp.SendKeys(chromedp.ID("rename-input"), "Porto move"),
		chromedp.Click(chromedp.CSS(`#rename-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.Search(`//nav//button[@data-title="Porto move"]`)))
	if th, err := mem.FindThreadByID(bg, "ada", thread); err != nil || th.Title != "Porto move" {
		t.Errorf("the server's title: %+v, %v", th, err)
	}

	step("export", chromedp.Click(chromedp.ID("export-md")), chromedp.WaitVisible(chromedp.ID("export-text")))
	if md := text("#export-text"); !strings.Contains(md, "Porto move") || !strings.Contains(md, "I live in Porto.") {
		t.Errorf("the Markdown export:\n%s", md)
	}

	step("notes", clearField("notes"), chromedp.SendKeys(chromedp.ID("notes"), "- Moving to Porto in May"), chromedp.Click(chromedp.ID("notes-save")),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="notes-version" and contains(text(), "saved")]`)))
	if n, err := mem.FindNotes(bg, "ada", "default"); err != nil || n.Content != "- Moving to Porto in May" || n.Version != 1 {
		t.Errorf("the server's notes: %+v, %v", n, err)
	}
	step("notes history", chromedp.Click(chromedp.CSS(`#notes-history summary`)), chromedp.WaitVisible(chromedp.CSS(`#notes-history ol li`)))
	if h := text("#notes-history ol"); !strings.Contains(h, "Version 1") || !strings.Contains(h, "Moving to Porto") {
		t.Errorf("the notes' history %q", h)
	}

	// The memory drawn from the message, once indexed, deleted in two clicks.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ms, _, _ := mem.FindMemories(bg, "ada", agentmem.MemoryFilter{})
		if len(ms) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no memory drawn from the message")
		}
		time.Sleep(50 * time.Millisecond)
	}
	step("forget", chromedp.Reload(), ready, chromedp.WaitNotPresent(chromedp.CSS(`body[data-opening]`)), chromedp.WaitVisible(chromedp.CSS(`#memories li button.forget`)),
		chromedp.Click(chromedp.CSS(`#memories li button.forget`)), chromedp.Click(chromedp.CSS(`#memories li button.forget`)),
		chromedp.WaitVisible(chromedp.ID("memories-empty")))
	if ms, _, err := mem.FindMemories(bg, "ada", agentmem.MemoryFilter{}); err != nil || len(ms) != 0 {
		t.Errorf("memories left: %+v, %v", ms, err)
	}

	step("delete", chromedp.Click(chromedp.ID("delete")), chromedp.Click(chromedp.ID("delete")), chromedp.WaitVisible(chromedp.ID("undo")),
		chromedp.WaitVisible(chromedp.ID("threads-empty")))
	if _, err := mem.FindThreadByID(bg, "ada", thread); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Errorf("the deleted thread: %v", err)
	}
	step("restore", chromedp.Click(chromedp.ID("restore")), chromedp.WaitVisible(chromedp.Search(`//nav//button[@data-title="Porto move"]`)),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant`)))
	if th, err := mem.FindThreadByID(bg, "ada", thread); err != nil || th.MessageCount != 2 {
		t.Errorf("the restored thread: %+v, %v", th, err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
