package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/chromedp/chromedp"
)

// TestLayout_MessageBoxInView: at 1400×900, a conversation far longer
// than the window scrolls inside its pane: the page itself is no taller
// than the window, the message box is in view without scrolling, and
// the newest message is shown above it.
func TestLayout_MessageBoxInView(t *testing.T) {
	srv, mem := serve(t)
	bg := context.Background()
	if err := mem.CreateThread(bg, "hal", &agentmem.Thread{ID: "long", Title: "A long conversation"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*agentmem.Message
	for i := range 40 {
		msgs = append(msgs, &agentmem.Message{Role: "user", Content: fmt.Sprintf("Question %d: what should I pack for a week of hiking in the Alps in late September?", i)},
			&agentmem.Message{Role: "assistant", Content: fmt.Sprintf("Answer %d: layers, a rain shell, broken-in boots,\nand a warm hat for the mornings.", i)})
	}
	if _, err := mem.AppendMessages(bg, "hal", "long", msgs, ""); err != nil {
		t.Fatal(err)
	}
	const width, height = 1400, 900
	ctx, consoleErrors := browser(t, width, height)
	step := steps(t, ctx)
	step("open", chromedp.EmulateViewport(width, height), chromedp.Navigate(srv.URL+"/?user=hal&thread=long"), ready,
		chromedp.WaitVisible(chromedp.CSS(`li.msg[data-seq="80"]`)))
	type box struct{ Top, Bottom, Left, Right, InnerWidth, InnerHeight, PageHeight, ListHeight, ListScroll float64 }
	got, err := chromedp.Run(ctx, chromedp.Evaluate[box](`(() => {
		const r = document.getElementById("input").getBoundingClientRect();
		const list = document.getElementById("messages");
		return {Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right, InnerWidth: innerWidth, InnerHeight: innerHeight,
			PageHeight: document.scrollingElement.scrollHeight, ListHeight: list.clientHeight, ListScroll: list.scrollHeight};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "layout-1400x900")
	if got.InnerHeight != height || got.InnerWidth != width {
		t.Fatalf("the window is %v×%v, not %d×%d", got.InnerWidth, got.InnerHeight, width, height)
	}
	if got.PageHeight > got.InnerHeight {
		t.Errorf("the page is %v px tall in a %v px window: the whole page scrolls", got.PageHeight, got.InnerHeight)
	}
	if got.Top < 0 || got.Bottom > got.InnerHeight || got.Left < 0 || got.Right > got.InnerWidth {
		t.Errorf("the message box at %+v is not inside the %v×%v window", got, got.InnerWidth, got.InnerHeight)
	}
	if got.ListScroll <= got.ListHeight {
		t.Errorf("the message list (%v px of %v) does not scroll inside its pane: too few messages to test", got.ListHeight, got.ListScroll)
	}
	// The newest message is in view, above the message box.
	last, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector('li.msg[data-seq="80"]').getBoundingClientRect(); return [r.top, r.bottom]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 2 || last[0] < 0 || last[1] > got.Top {
		t.Errorf("the newest message at %v is not in view above the message box (top %v)", last, got.Top)
	}
	// The pages beside it scroll in their own panes too: the inspector's
	// end is reached by scrolling it, not the page.
	scrolls, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const a = document.getElementById("inspector"); return a.scrollHeight > a.clientHeight && getComputedStyle(a).overflowY === "auto"; })()`))
	if err != nil || !scrolls {
		t.Errorf("the inspector does not scroll in its own pane (%v)", err)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestAPIKey_NoKey: with --auth apikey and no key entered, the page
// points at its own API-key box (shown, focused, marked) with a message
// that says to enter a key there, and gives no curl advice; once a key
// is entered, the page loads and the mark goes.
func TestAPIKey_NoKey(t *testing.T) {
	srv, mem := serveAuth(t, httpapi.Auth{Mode: httpapi.AuthAPIKey})
	key, err := mem.CreateKey(context.Background(), agentmem.KeyInput{Scope: "user:ivy", Name: "ivy"})
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		name          string
		width, height int
	}{{"desktop", 1400, 900}, {"phone", 375, 812}} {
		t.Run(size.name, func(t *testing.T) {
			ctx, consoleErrors := browser(t, size.width, size.height)
			step := steps(t, ctx)
			step("open", chromedp.EmulateViewport(int64(size.width), int64(size.height)), chromedp.Navigate(srv.URL+"/"), ready,
				chromedp.WaitVisible(chromedp.ID("notice")))
			type state struct {
				Notice, Page, Focused string
				Visible, Marked       bool
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[state](`(() => {
				const k = document.getElementById("apikey"), r = k.getBoundingClientRect();
				return {Notice: document.getElementById("notice").textContent, Page: document.body.innerText, Focused: document.activeElement.id,
					Visible: k.offsetParent !== null && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth,
					Marked: k.getAttribute("aria-invalid") === "true" && k.closest("label").classList.contains("needed")};
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			shot(t, ctx, "apikey-"+size.name)
			if !got.Visible || !got.Marked || got.Focused != "apikey" {
				t.Errorf("the API-key box: visible %v, marked %v, focused %q (want apikey)", got.Visible, got.Marked, got.Focused)
			}
			if !strings.Contains(got.Notice, "Enter your API key") || !strings.Contains(got.Notice, "API key box") {
				t.Errorf("the notice says %q, not to enter a key in the box", got.Notice)
			}
			if strings.Contains(strings.ToLower(got.Page), "curl") || strings.Contains(got.Page, "Authorization") {
				t.Errorf("the page gives HTTP advice:\n%s", got.Page)
			}
			// The key entered: the page loads as the key's user, and
			// neither the notice nor the mark stays.
			step("enter the key", chromedp.SendKeys(chromedp.ID("apikey"), key.Token+"\t"),
				chromedp.WaitNotVisible(chromedp.ID("notice")), chromedp.WaitVisible(chromedp.ID("threads-empty")))
			after, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[document.getElementById("user").value, document.getElementById("apikey").getAttribute("aria-invalid"), document.querySelector(".key.needed") === null]`))
			if err != nil || len(after) != 3 || after[0] != "ivy" || after[1] != nil || after[2] != true {
				t.Errorf("after entering the key: user, aria-invalid, unmarked = %v (%v)", after, err)
			}
			if errs := consoleErrors(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}
}

// shot saves the window (what a person sees without scrolling) as
// NAME.png in $AGENTMEM_SCREENSHOTS (a temporary folder without it).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("AGENTMEM_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
