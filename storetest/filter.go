package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

// testFindThreadsFilters: FindThreads selects by tags (threads having all
// of them) and by updated_at, since inclusive and before exclusive, also
// across pages.
func testFindThreadsFilters(t *testing.T, s agentmem.Store) {
	old := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "old", Tags: []string{"work"}})
	time.Sleep(2 * time.Millisecond) // distinct updated_at values
	mid := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "mid", Tags: []string{"work", "urgent"}})
	time.Sleep(2 * time.Millisecond)
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "new", Tags: []string{"home", "a,b"}})
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "bobs", Tags: []string{"work"}})
	if !old.UpdatedAt.Before(mid.UpdatedAt) {
		t.Fatalf("updated_at of old %v, of mid %v; want old first", old.UpdatedAt, mid.UpdatedAt)
	}
	at := mid.UpdatedAt
	for _, c := range []struct {
		name string
		f    agentmem.ThreadFilter
		want []string
	}{
		{"Tag", agentmem.ThreadFilter{Tags: []string{"work"}}, []string{"mid", "old"}},
		{"Tags", agentmem.ThreadFilter{Tags: []string{"work", "urgent"}}, []string{"mid"}},
		{"TagWithComma", agentmem.ThreadFilter{Tags: []string{"a,b"}}, []string{"new"}},
		{"TagTrimmed", agentmem.ThreadFilter{Tags: []string{" home "}}, []string{"new"}},
		{"NoSuchTag", agentmem.ThreadFilter{Tags: []string{"none"}}, nil},
		{"Since", agentmem.ThreadFilter{UpdatedSince: &at}, []string{"new", "mid"}},
		{"Before", agentmem.ThreadFilter{UpdatedBefore: &at}, []string{"old"}},
		{"SinceBefore", agentmem.ThreadFilter{UpdatedSince: &at, UpdatedBefore: &at}, nil},
		{"SinceAndTag", agentmem.ThreadFilter{UpdatedSince: &at, Tags: []string{"work"}}, []string{"mid"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := threadIDs(t, s, "alice", c.f)
			if !slices.Equal(got, c.want) {
				t.Fatalf("threads %q, want %q", got, c.want)
			}
		})
	}
	t.Run("ErrInvalid", func(t *testing.T) {
		far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, c := range []struct {
			f    agentmem.ThreadFilter
			want string
		}{
			{agentmem.ThreadFilter{Tags: []string{""}}, "tag must not be empty."},
			{agentmem.ThreadFilter{Tags: []string{"a\x00"}}, "tag may not contain NUL characters."},
			{agentmem.ThreadFilter{Tags: make([]string, agentmem.MaxTags+1)}, "tag"},
			{agentmem.ThreadFilter{UpdatedSince: &far}, "since must be between the years 1 and 9999."},
			{agentmem.ThreadFilter{UpdatedBefore: &far}, "until must be between the years 1 and 9999."},
			{agentmem.ThreadFilter{AgentID: ptr("a\x00")}, "agent_id"},
			{agentmem.ThreadFilter{Status: ptr("open")}, "status must be"},
		} {
			_, _, err := s.FindThreads(ctx, "alice", c.f)
			wantCode(t, err, agentmem.EINVALID)
			if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, c.want) {
				t.Errorf("FindThreads(%+v): %q, want %q in it", c.f, msg, c.want)
			}
		}
	})
}

// testFindThreadsTitle: FindThreads selects the threads whose title
// contains the text, ignoring the case of ASCII letters, taking % and _
// (and the escape character) literally, also across pages.
func testFindThreadsTitle(t *testing.T, s agentmem.Store) {
	for id, title := range map[string]string{
		"trip":     "Trip to Lisbon",
		"notes":    "LISBON notes",
		"pct":      "100% sure_thing",
		"words":    "100 percent sure thing",
		"off":      "Budget 50%off",
		"slash":    `back\slash`,
		"untitled": "",
	} {
		MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: id, Title: title, AgentID: "a"})
	}
	MustCreateThread(t, s, &agentmem.Thread{UserID: "bob", ID: "bobs", Title: "Lisbon"})
	MustCreateThread(t, s, &agentmem.Thread{UserID: "alice", ID: "other", Title: "Lisbon again", AgentID: "b"})
	for _, c := range []struct {
		name string
		f    agentmem.ThreadFilter
		want []string // sorted
	}{
		{"Word", agentmem.ThreadFilter{Title: ptr("lisbon")}, []string{"notes", "other", "trip"}},
		{"MixedCase", agentmem.ThreadFilter{Title: ptr("LiSbOn NoTeS")}, []string{"notes"}},
		{"Percent", agentmem.ThreadFilter{Title: ptr("100%")}, []string{"pct"}},
		{"PercentAlone", agentmem.ThreadFilter{Title: ptr("%")}, []string{"off", "pct"}},
		{"Underscore", agentmem.ThreadFilter{Title: ptr("e_t")}, []string{"pct"}},
		{"UnderscoreAlone", agentmem.ThreadFilter{Title: ptr("_")}, []string{"pct"}},
		{"Backslash", agentmem.ThreadFilter{Title: ptr(`k\s`)}, []string{"slash"}},
		{"BackslashPercent", agentmem.ThreadFilter{Title: ptr(`\%`)}, nil},
		{"Empty", agentmem.ThreadFilter{Title: ptr("")}, []string{"notes", "off", "other", "pct", "slash", "trip", "untitled", "words"}},
		{"None", agentmem.ThreadFilter{Title: ptr("Porto")}, nil},
		{"AndAgent", agentmem.ThreadFilter{Title: ptr("lisbon"), AgentID: ptr("a")}, []string{"notes", "trip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := threadIDs(t, s, "alice", c.f)
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("threads %q, want %q", got, c.want)
			}
		})
	}
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []struct {
			title, want string
		}{
			{"a\x00", "q may not contain NUL characters."},
			{"\xff", "q is not valid UTF-8."},
			{strings.Repeat("é", agentmem.MaxTitleRunes+1), "q is longer than"},
		} {
			_, _, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{Title: &c.title})
			wantCode(t, err, agentmem.EINVALID)
			if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, c.want) {
				t.Errorf("FindThreads(title %.20q): %q, want %q in it", c.title, msg, c.want)
			}
		}
	})
}

// testFilterText: text with NUL or invalid UTF-8 in a filter is EINVALID
// naming the filter on every backend (PostgreSQL cannot hold NUL; SQLite
// would compare it and find nothing).
func testFilterText(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	bad := ptr("a\x00b")
	for _, c := range []struct {
		name, want string
		find       func() error
	}{
		{"ThreadAgent", "agent_id", func() error {
			_, _, err := s.FindThreads(ctx, "alice", agentmem.ThreadFilter{AgentID: bad})
			return err
		}},
		{"MemoryCategory", "category may not contain NUL characters.", func() error {
			_, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{Category: bad})
			return err
		}},
		{"MemoryAgent", "agent_id", func() error {
			_, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{AgentID: bad})
			return err
		}},
		{"MemoryThread", "thread_id", func() error {
			_, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{ThreadID: bad})
			return err
		}},
		{"MemoryInvalidUTF8", "category is not valid UTF-8.", func() error {
			_, _, err := s.FindMemories(ctx, "alice", agentmem.MemoryFilter{Category: ptr("\xff")})
			return err
		}},
		{"EntityType", "type", func() error {
			_, _, err := s.FindEntities(ctx, "alice", agentmem.EntityFilter{Type: bad})
			return err
		}},
		{"EntityRefAction", "action", func() error {
			_, _, err := s.FindEntityRefs(ctx, "alice", agentmem.EntityRefFilter{ThreadID: th.ID, Action: bad})
			return err
		}},
		{"ElementMessage", "message_id", func() error {
			_, _, err := s.FindElements(ctx, "alice", th.ID, agentmem.ElementFilter{MessageID: bad})
			return err
		}},
		{"JobKind", "kind may not contain NUL characters.", func() error {
			_, _, err := s.FindJobs(ctx, agentmem.JobFilter{Kind: bad})
			return err
		}},
		{"JobUser", "user_id may not contain NUL characters.", func() error {
			_, _, err := s.FindJobs(ctx, agentmem.JobFilter{UserID: bad})
			return err
		}},
		{"AuditAction", "action may not contain NUL characters.", func() error {
			_, _, err := s.FindAuditEvents(ctx, agentmem.AuditFilter{Action: bad})
			return err
		}},
		{"AuditTenant", "tenant_id may not contain NUL characters.", func() error {
			_, _, err := s.FindAuditEvents(ctx, agentmem.AuditFilter{TenantID: bad})
			return err
		}},
		{"AuditUser", "user_id may not contain NUL characters.", func() error {
			_, _, err := s.FindAuditEvents(ctx, agentmem.AuditFilter{UserID: bad})
			return err
		}},
		{"KeyTenant", "tenant_id may not contain NUL characters.", func() error {
			_, _, err := s.FindKeys(ctx, agentmem.KeyFilter{TenantID: bad})
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.find()
			wantCode(t, err, agentmem.EINVALID)
			if msg := agentmem.ErrorMessage(err); !strings.Contains(msg, c.want) {
				t.Fatalf("%q, want %q in it", msg, c.want)
			}
		})
	}
}

// testDotIDs: "." and ".." are not IDs: a URL path cannot carry them (it
// would be cleaned away), so records created with them could never be
// reached.
func testDotIDs(t *testing.T, s agentmem.Store) {
	th := MustCreateThread(t, s, &agentmem.Thread{UserID: "alice"})
	for _, id := range []string{".", ".."} {
		for _, c := range []struct {
			name, want string
			create     func() error
		}{
			{"Thread", "id", func() error { return s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", ID: id}) }},
			{"Agent", "agent_id", func() error { return s.CreateThread(ctx, &agentmem.Thread{UserID: "alice", AgentID: id}) }},
			{"Message", "messages[0].id", func() error {
				_, err := s.AppendMessages(ctx, "alice", th.ID, []*agentmem.Message{{ID: id, Role: agentmem.RoleUser}}, agentmem.AppendOptions{})
				return err
			}},
			{"Element", "id", func() error { return s.CreateElement(ctx, "alice", th.ID, &agentmem.Element{ID: id}) }},
			{"Memory", "id", func() error { return s.CreateMemory(ctx, &agentmem.Memory{UserID: "alice", ID: id, Text: "x"}) }},
			{"Entity", "id", func() error { return s.PutEntities(ctx, "alice", []*agentmem.Entity{{ID: id, Name: "x"}}) }},
			{"User", "user_id", func() error { return s.CreateThread(ctx, &agentmem.Thread{UserID: id}) }},
		} {
			t.Run(c.name+"/"+id, func(t *testing.T) {
				err := c.create()
				wantCode(t, err, agentmem.EINVALID)
				if want := c.want + ` may not be "." or "..".`; agentmem.ErrorMessage(err) != want {
					t.Fatalf("%q, want %q", agentmem.ErrorMessage(err), want)
				}
			})
		}
	}
	if got := allMessages(t, s, "alice", th.ID); len(got) != 0 {
		t.Fatalf("%d messages stored", len(got))
	}
}

// threadIDs returns the IDs of the user's threads that f selects, read a
// page of one at a time, so that the filter is also checked across pages.
func threadIDs(t *testing.T, s agentmem.Store, userID string, f agentmem.ThreadFilter) []string {
	t.Helper()
	var ids []string
	f.Limit = 1
	for {
		page, next, err := s.FindThreads(ctx, userID, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range page {
			ids = append(ids, th.ID)
		}
		if f.Cursor = next; next == "" {
			return ids
		}
	}
}
