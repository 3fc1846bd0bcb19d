package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/apptest"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/agentmem/agentmem/web"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium returns the browser's path; the test fails without one on CI
// (CI=true), and is skipped elsewhere.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium: CI must run the browser tests (.ci/run installs Debian's chromium)")
	}
	t.Skip("no Chromium (apt-get install chromium)")
	return ""
}

// browser starts headless Chromium and returns a context driving one tab,
// and the console errors and uncaught exceptions the page raised.
func browser(t *testing.T, width, height int) (context.Context, func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 20*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	var mu sync.Mutex
	var errs []string
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs = append(errs, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value))
				}
				errs = append(errs, "console.error: "+strings.Join(parts, " "))
			}
		}
	})
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

// ready waits until the page has loaded the conversation and opened the
// composer.
var ready = chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`))

// clearField empties a form field, as a person selecting its text and deleting
// it would.
func clearField(id string) chromedp.Action[chromedp.Void] {
	return script(`document.getElementById(` + strconv.Quote(id) + `).value = ""`)
}

// script runs JavaScript in the page, for what a person does but
// chromedp's keys do not (emptying a field).
func script(js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](js)(ctx, t)
		return chromedp.Void{}, err
	}
}

// serve runs agentmem in process with the proxy in front of a fake model,
// and the web UI.
func serve(t *testing.T) (*httptest.Server, *app.App) {
	t.Helper()
	return serveAuth(t, httpapi.Auth{})
}

// serveAuth is serve with an authentication mode.
func serveAuth(t *testing.T, auth httpapi.Auth) (*httptest.Server, *app.App) {
	t.Helper()
	mem := apptest.Open(t)
	fake := llmtest.NewServer(t)
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{
		Auth:  auth,
		Proxy: proxy.NewHandler(nil, mem.Service, proxy.Options{Upstream: &proxy.Upstream{BaseURL: fake.BaseURL()}}),
		Web:   web.NewHandler(),
	}))
	t.Cleanup(srv.Close)
	return srv, mem
}

// TestChat: in a real browser, a message typed and sent with the keyboard
// gets the model's streamed reply; the inspector shows the context's
// tokens as the context endpoint counts them; a reload resumes the
// conversation; no console errors; at desktop and phone sizes.
func TestChat(t *testing.T) {
	for _, size := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		t.Run(size.name, func(t *testing.T) {
			srv, _ := serve(t)
			ctx, consoleErrors := browser(t, size.width, size.height)
			err := chromedp.Do(ctx,
				chromedp.EmulateViewport(int64(size.width), int64(size.height)),
				chromedp.Navigate(srv.URL+"/?user=ada"),
				ready,
				chromedp.Focus(chromedp.ID("input")),
				chromedp.SendKeys(chromedp.ID("input"), "Hello there, I live in Porto.\r"),
				chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant[data-done="true"]`)),
				chromedp.WaitVisible(chromedp.CSS(`#threads button[aria-current="true"]`)),
			)
			if err != nil {
				t.Fatal(err)
			}
			reply, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`li.msg.assistant .text`)))
			if err != nil {
				t.Fatal(err)
			}
			location, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil {
				t.Fatal(err)
			}
			hiddenForms, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`["rename-form", "undo", "export"].every(id => getComputedStyle(document.getElementById(id)).display === "none")`))
			if err != nil || !hiddenForms {
				t.Errorf("a hidden panel shows (%v)", err)
			}
			if reply != "echo: Hello there, I live in Porto." {
				t.Errorf("reply %q", reply)
			}
			u, _ := url.Parse(location)
			thread := u.Query().Get("thread")
			if thread == "" {
				t.Fatalf("the URL names no thread: %s", location)
			}
			// The inspector's count is the context endpoint's.
			res, err := http.Post(srv.URL+"/v1/users/ada/threads/"+thread+"/context", "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				Telemetry struct {
					UsedTokens int `json:"used_tokens"`
				} `json:"telemetry"`
			}
			json.NewDecoder(res.Body).Decode(&c)
			res.Body.Close()
			used, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("used")))
			if err != nil {
				t.Fatal(err)
			}
			if used != strconv.Itoa(c.Telemetry.UsedTokens) || c.Telemetry.UsedTokens == 0 {
				t.Errorf("inspector shows %s tokens, the context endpoint %d", used, c.Telemetry.UsedTokens)
			}
			// A reload resumes the conversation.
			if err := chromedp.Do(ctx, chromedp.Reload(), ready, chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant`)), chromedp.WaitVisible(chromedp.ID("operator"))); err != nil {
				t.Fatal(err)
			}
			texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("li.msg .text")].map(e => e.textContent)`))
			if err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if len(texts) != 2 || texts[0] != "Hello there, I live in Porto." || texts[1] != "echo: Hello there, I live in Porto." {
				t.Errorf("after reload: %q", texts)
			}
			dir := os.Getenv("AGENTMEM_SCREENSHOTS")
			if dir == "" {
				dir = t.TempDir()
			}
			if err := os.WriteFile(filepath.Join(dir, "chat-"+size.name+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
			// Dark, as a system that prefers it shows the page.
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
			}); err != nil {
				t.Fatal(err)
			}
			bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
			if err != nil || bg != "rgb(21, 24, 28)" {
				t.Errorf("dark background %q, %v", bg, err)
			}
			if shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "chat-"+size.name+"-dark.png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
			if errs := consoleErrors(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}
}

// TestThreadActions: in the browser, a conversation is renamed, exported,
// deleted and restored; the agent's notes are edited; a memory is
// deleted; each change is the server's.
func TestThreadActions(t *testing.T) {
	srv, mem := serve(t)
	ctx, consoleErrors := browser(t, 1280, 800)
	bg := context.Background()
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	step("send", chromedp.Navigate(srv.URL+"/?user=ada"), ready,
		chromedp.SendKeys(chromedp.ID("input"), "I live in Porto.\r"),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant[data-done="true"]`)), chromedp.WaitVisible(chromedp.ID("toolbar")))
	location, _ := chromedp.Run(ctx, chromedp.Location())
	u, _ := url.Parse(location)
	thread := u.Query().Get("thread")

	step("rename", chromedp.Click(chromedp.ID("rename")), chromedp.WaitVisible(chromedp.ID("rename-input")),
		clearField("rename-input"), chromedp.SendKeys(chromedp.ID("rename-input"), "Porto move"),
		chromedp.Click(chromedp.CSS(`#rename-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.Search(`//nav//button[text()="Porto move"]`)))
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
	step("forget", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#memories li button.forget`)),
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
	step("restore", chromedp.Click(chromedp.ID("restore")), chromedp.WaitVisible(chromedp.Search(`//nav//button[text()="Porto move"]`)),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant`)))
	if th, err := mem.FindThreadByID(bg, "ada", thread); err != nil || th.MessageCount != 2 {
		t.Errorf("the restored thread: %+v, %v", th, err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

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

// TestCitations: beside an answer, what its context drew on: the memory
// relevant to the question, from an earlier conversation.
func TestCitations(t *testing.T) {
	srv, mem := serve(t)
	if _, err := mem.CreateMemory(context.Background(), "cy", agentmem.MemoryInput{Text: "User is allergic to peanuts."}); err != nil {
		t.Fatal(err)
	}
	ctx, consoleErrors := browser(t, 1280, 800)
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?user=cy"),
		ready,
		chromedp.SendKeys(chromedp.ID("input"), "Which snacks suit my peanut allergy?\r"),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant[data-done="true"] details.citations summary`)),
		chromedp.Click(chromedp.CSS(`details.citations summary`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	cited, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`details.citations`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cited, "Drawn on 1 memory") || !strings.Contains(cited, "User is allergic to peanuts.") {
		t.Errorf("citations %q", cited)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestProfileAndKeyboard: the inspector shows the profile with its
// earlier versions and the entities; the chat is reached and used with
// the keyboard alone.
func TestProfileAndKeyboard(t *testing.T) {
	srv, mem := serve(t)
	bg := context.Background()
	for _, text := range []string{"User lives in Oslo.", "User works as a nurse."} {
		if _, err := mem.CreateMemory(bg, "di", agentmem.MemoryInput{Text: text}); err != nil {
			t.Fatal(err)
		}
		if _, err := mem.RefreshProfile(bg, "di"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mem.PutEntity(bg, "di", agentmem.EntityInput{Name: "Night Shift Rota", Type: "workflow"}); err != nil {
		t.Fatal(err)
	}
	ctx, consoleErrors := browser(t, 1280, 800)
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?user=di"),
		ready,
		chromedp.WaitVisible(chromedp.ID("profile-versions")),
	)
	if err != nil {
		t.Fatal(err)
	}
	profile, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("profile")))
	version, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("profile-version")))
	entities, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("entities")))
	if !strings.Contains(profile, "nurse") || version != "version 2" || !strings.Contains(entities, "Night Shift Rota") {
		t.Errorf("profile %q (%s), entities %q", profile, version, entities)
	}
	// The keyboard alone: Tab from the page's start reaches the message box
	// through labelled controls, Enter sends.
	focused := ""
	for i := 0; i < 40 && focused != "input"; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		focused, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	}
	if focused != "input" {
		t.Fatalf("Tab never reached the message box")
	}
	err = chromedp.Do(ctx, chromedp.KeyEvent("Hi from the keyboard"), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant[data-done="true"]`)))
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`li.msg.assistant .text`)))
	if reply != "echo: Hi from the keyboard" {
		t.Errorf("reply %q", reply)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestOperator: an admin sees the operator's view (the store's counts,
// failed jobs, keys, the audit log); a user's key does not, and its chat
// works with the key typed into the page.
func TestOperator(t *testing.T) {
	srv, mem := serveAuth(t, httpapi.Auth{Mode: httpapi.AuthAPIKey})
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
	for _, want := range []string{"users", "eva's app (user eva)", "ops (admin)", "erase"} {
		if !strings.Contains(view, want) {
			t.Errorf("the operator's view lacks %q:\n%s", want, view)
		}
	}
	err = chromedp.Do(ctx, withKey(user.Token, "eva"), chromedp.Navigate(srv.URL+"/?user=eva"), ready,
		chromedp.SendKeys(chromedp.ID("input"), "Hello from eva\r"),
		chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant[data-done="true"]`)))
	if err != nil {
		t.Fatal(err)
	}
	hidden, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("operator").hidden`))
	if !hidden {
		t.Error("a user's key sees the operator's view")
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
