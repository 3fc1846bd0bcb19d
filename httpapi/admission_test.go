package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/window"
	"github.com/prometheus/client_golang/prometheus"
)

// heldStore holds each full-text search until release is closed, and
// says on entered when one has begun: the searches admitted stay
// running for as long as the test needs, whatever the machine's speed.
type heldStore struct {
	agentmem.Store
	entered chan struct{}
	release chan struct{}
}

func (s *heldStore) SearchText(ctx context.Context, userID string, q agentmem.TextQuery) ([]agentmem.TextHit, error) {
	s.entered <- struct{}{}
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.SearchText(ctx, userID, q)
}

// TestAdmission_SearchFlood: 40 searches at once on a server that
// admits 2 (their full-text queries held until the test lets them go):
// the 2 admitted answer 200 once let go, the 38 others 503 with
// Retry-After, without waiting for them; meanwhile an append is stored
// (201), /readyz is 200, and a context is built (200) without its
// memories, saying so; /metrics counts the refusals. Then searches are
// admitted again.
func TestAdmission_SearchFlood(t *testing.T) {
	testutil.Backends(t, func(t *testing.T, store agentmem.Store) {
		const flood, slots = 40, 2
		held := &heldStore{Store: store, entered: make(chan struct{}, flood), release: make(chan struct{})}
		adm := core.NewAdmitter(core.Admission{Search: slots, Wait: 20 * time.Millisecond})
		searcher := retrieve.New(held, nil, "", retrieve.Options{Admit: adm.SearchAdmit()})
		win := window.New(held, held, window.Options{Memories: &retrieve.MemoryProvider{Searcher: searcher}})
		reg := prometheus.NewRegistry()
		srv := MustServeMetered(t, held, core.Options{Searcher: searcher, Window: win, Admitter: adm}, httpapi.Options{}, reg)
		base := srv.URL + "/v1/users/alice"
		if resp, b := Do(t, http.MethodPost, base+"/threads", nil, `{"id":"t"}`); resp.StatusCode != http.StatusCreated {
			t.Fatalf("create thread: %d %s", resp.StatusCode, b)
		}
		if resp, b := Do(t, http.MethodPost, base+"/threads/t/messages", nil, `{"messages":[{"role":"user","content":"I pack the tent."}]}`); resp.StatusCode != http.StatusCreated {
			t.Fatalf("append: %d %s", resp.StatusCode, b)
		}

		type answer struct {
			status     int
			retryAfter string
			body       string
		}
		answers := make(chan answer, flood)
		var wg sync.WaitGroup
		for range flood {
			wg.Go(func() {
				resp, b := Do(t, http.MethodPost, base+"/search", nil, `{"query":"tent","scopes":["messages"]}`)
				answers <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
			})
		}
		defer func() {
			select {
			case <-held.release:
			default:
				close(held.release) // a failed test lets the held searches go
			}
			wg.Wait()
		}()
		// Every search but the admitted ones is answered while those are
		// held: the refused ones did not wait for them.
		statuses := map[int]int{}
		for i := range flood - slots {
			var a answer
			select {
			case a = <-answers:
			case <-time.After(30 * time.Second): // a guard against a hang, not a measure
				t.Fatalf("%d searches answered in 30 s while %d were admitted and held: the others wait instead of being refused (%d running)",
					i, slots, len(held.entered))
			}
			statuses[a.status]++
			if a.status != http.StatusServiceUnavailable || a.retryAfter == "" || !strings.Contains(a.body, "busy") {
				t.Errorf("search during the flood: %d, Retry-After %q, %s; want 503 with Retry-After, saying the server is busy", a.status, a.retryAfter, a.body)
			}
		}
		if n := len(held.entered); n != slots {
			t.Errorf("%d searches running, want the %d admitted", n, slots)
		}

		// Cheap requests go on meanwhile.
		if resp, b := Do(t, http.MethodPost, base+"/threads/t/messages", nil, `{"messages":[{"role":"user","content":"And the stove."}]}`); resp.StatusCode != http.StatusCreated {
			t.Errorf("append during the flood: %d %s, want 201", resp.StatusCode, b)
		}
		if resp, b := Do(t, http.MethodGet, srv.URL+"/readyz", nil, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("/readyz during the flood: %d %s, want 200", resp.StatusCode, b)
		}
		resp, b := Do(t, http.MethodPost, base+"/threads/t/context", nil, `{"input":"What do I pack?"}`)
		var c agentmem.Context
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &c) != nil {
			t.Errorf("context during the flood: %d %s, want 200", resp.StatusCode, b)
		} else if !strings.Contains(strings.Join(c.Telemetry.Warnings, " "), "memories are unavailable") {
			t.Errorf("context during the flood: warnings %q, want one saying the memories were left out", c.Telemetry.Warnings)
		}
		_, metrics := Do(t, http.MethodGet, srv.URL+"/metrics", nil, "")
		want := fmt.Sprintf(`agentmem_admission_rejected_total{work="search"} %d`, flood-slots+1) // and the context's memories
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(metrics), "agentmem_admission"))
		}

		// The admitted searches finish; searches are admitted again.
		close(held.release)
		for range slots {
			if a := <-answers; a.status != http.StatusOK {
				t.Errorf("admitted search: %d %s, want 200", a.status, a.body)
			}
		}
		wg.Wait()
		if resp, b := Do(t, http.MethodPost, base+"/search", nil, `{"query":"stove","scopes":["messages"]}`); resp.StatusCode != http.StatusOK {
			t.Errorf("search after the flood: %d %s, want 200", resp.StatusCode, b)
		}
		t.Logf("flood of %d searches, %d admitted: %v", flood, slots, statuses)
	})
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
	}
	return strings.Join(out, "\n")
}
