package web_test

import (
	"cmp"
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
	"github.com/agentmem/agentmem/metrics"
	"github.com/agentmem/agentmem/proxy"
	"github.com/agentmem/agentmem/web"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
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

// serveAuth is serve with an authentication mode, and options that
// change agentmem's configuration.
func serveAuth(t *testing.T, auth httpapi.Auth, options ...func(*app.Config)) (*httptest.Server, *app.App) {
	t.Helper()
	mem := apptest.Open(t, options...)
	fake := llmtest.NewServer(t)
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{
		Auth:    withKeys(auth, mem),
		Proxy:   proxy.NewHandler(nil, mem.Service, proxy.Options{Upstream: &proxy.Upstream{BaseURL: fake.BaseURL()}}),
		Web:     web.NewHandler(),
		Metrics: metrics.Handler(prometheus.NewRegistry()),
	}))
	t.Cleanup(srv.Close)
	return srv, mem
}

// steps runs a test's browser steps, failing it with the step's name.
func steps(t *testing.T, ctx context.Context) func(what string, actions ...chromedp.Action[chromedp.Void]) {
	return func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// textOf returns an element's text, failing the test without one.
func textOf(t *testing.T, ctx context.Context, sel chromedp.CSS) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return s
}

// screenshot saves the whole page as NAME.png in $AGENTMEM_SCREENSHOTS
// (a temporary folder without it).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := cmp.Or(os.Getenv("AGENTMEM_SCREENSHOTS"), t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
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
			if len(texts) != 2 || texts[0] != "Hello there, I live in Porto." || texts[1] != "echo: Hello there, I live in Porto." {
				t.Errorf("after reload: %q", texts)
			}
			screenshot(t, ctx, "chat-"+size.name)
			// Every control a person can reach has a name a screen reader
			// says.
			unnamed, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("input, textarea, button, select, summary, a[href]")]
				.filter(e => e.offsetParent !== null && !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.textContent.trim())
				.map(e => e.outerHTML.slice(0, 80))`))
			if err != nil || len(unnamed) > 0 {
				t.Errorf("controls without a name: %q (%v)", unnamed, err)
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
			screenshot(t, ctx, "chat-"+size.name+"-dark")
			if errs := consoleErrors(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
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

// withKeys is auth with mem's API keys.
func withKeys(auth httpapi.Auth, mem *app.App) httpapi.Auth {
	auth.Keys = mem.Store()
	return auth
}
