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

	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/proxy"
	"github.com/agentmem/agentmem/web"
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
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
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

// serve runs agentmem in process with the proxy in front of a fake model,
// and the web UI.
func serve(t *testing.T) (*httptest.Server, *app.App) {
	t.Helper()
	mem, err := app.Open(context.Background(), app.Config{DB: "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	fake := llmtest.NewServer(t)
	srv := httptest.NewServer(httpapi.NewHandler(nil, mem.Service, httpapi.Options{
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
				chromedp.WaitVisible(chromedp.ID("input")),
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
			if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`li.msg.assistant`))); err != nil {
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
			if errs := consoleErrors(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}
}
