package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// MustCreateKey makes a key with agentmem.NewAPIKey, stores it and returns
// it with its token.
func MustCreateKey(tb testing.TB, s agentmem.Store, sc agentmem.Scope, now time.Time, ttl time.Duration) (string, *agentmem.APIKey) {
	tb.Helper()
	token, k, err := agentmem.NewAPIKey(sc, "key of "+sc.String(), now, ttl)
	if err != nil {
		tb.Fatalf("NewAPIKey(%v): %v", sc, err)
	}
	k.CreatedBy = "cli"
	if err := s.CreateKey(ctx, k); err != nil {
		tb.Fatalf("CreateKey: %v", err)
	}
	return token, k
}

// mustParseKey returns an API key token's ID and secret, failing tb if
// it is no token.
func mustParseKey(tb testing.TB, token string) (id, secret string) {
	tb.Helper()
	id, secret, err := agentmem.ParseAPIKey(token)
	if err != nil {
		tb.Fatalf("ParseAPIKey(%q): %v", token, err)
	}
	return id, secret
}

// allKeys pages through FindKeys with f (its Limit per page) and returns
// every key listed and the number of pages.
func allKeys(tb testing.TB, s agentmem.Store, f agentmem.KeyFilter) ([]*agentmem.APIKey, int) {
	tb.Helper()
	all := []*agentmem.APIKey{}
	for pages := 1; ; pages++ {
		page, next, err := s.FindKeys(ctx, f)
		if err != nil {
			tb.Fatalf("FindKeys: %v", err)
		}
		if page == nil || f.Limit > 0 && len(page) > f.Limit {
			tb.Fatalf("page of %d keys (nil: %v), limit %d", len(page), page == nil, f.Limit)
		}
		all = append(all, page...)
		if f.Cursor = next; next == "" {
			return all, pages
		}
	}
}

// newestKeysFirst is FindKeys' order: created_at, then id, descending.
func newestKeysFirst(a, b *agentmem.APIKey) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// newestEventsFirst is FindAuditEvents' order: at, then id, descending.
func newestEventsFirst(a, b *agentmem.AuditEvent) int {
	if c := b.At.Compare(a.At); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

func testKeys(t *testing.T, s agentmem.Store) {
	admin := agentmem.Scope{Kind: agentmem.ScopeAdmin}
	token, k := MustCreateKey(t, s, admin, time.Now(), 0)
	got, err := s.FindKeyByID(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(k, got); diff != "" {
		t.Fatalf("FindKeyByID mismatch (-want +got):\n%s", diff)
	}

	t.Run("Verify", func(t *testing.T) {
		id, secret, err := agentmem.ParseAPIKey(token)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.FindKeyByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := stored.Verify(secret, time.Now()); err != nil {
			t.Fatalf("Verify with the right secret: %v", err)
		}
		otherToken, _, err := agentmem.NewAPIKey(admin, "", time.Now(), 0)
		if err != nil {
			t.Fatalf("NewAPIKey: %v", err)
		}
		_, otherSecret := mustParseKey(t, otherToken)
		wantCode(t, stored.Verify(otherSecret, time.Now()), agentmem.EUNAUTHORIZED)

		// A key made two hours ago to last one hour.
		made := time.Now().Add(-2 * time.Hour)
		expToken, _ := MustCreateKey(t, s, agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "alice"}, made, time.Hour)
		expID, expSecret := mustParseKey(t, expToken)
		exp, err := s.FindKeyByID(ctx, expID)
		if err != nil {
			t.Fatal(err)
		}
		if exp.ExpiresAt == nil || !exp.ExpiresAt.Equal(agentmem.Timestamp(made.Add(time.Hour))) {
			t.Fatalf("ExpiresAt=%v, want %v", exp.ExpiresAt, made.Add(time.Hour))
		}
		if err := exp.Verify(expSecret, made.Add(30*time.Minute)); err != nil {
			t.Fatalf("Verify before expiry: %v", err)
		}
		wantCode(t, exp.Verify(expSecret, *exp.ExpiresAt), agentmem.EUNAUTHORIZED)
		wantCode(t, exp.Verify(expSecret, time.Now()), agentmem.EUNAUTHORIZED)

		revToken, _ := MustCreateKey(t, s, agentmem.Scope{Kind: agentmem.ScopeTenant, TenantID: "acme"}, time.Now(), 24*time.Hour)
		revID, revSecret := mustParseKey(t, revToken)
		revoked, err := s.RevokeKey(ctx, revID)
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, revoked.Verify(revSecret, time.Now()), agentmem.EUNAUTHORIZED)
		stored, err = s.FindKeyByID(ctx, revID)
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, stored.Verify(revSecret, time.Now()), agentmem.EUNAUTHORIZED)
	})
	t.Run("Revoke", func(t *testing.T) {
		_, k := MustCreateKey(t, s, agentmem.Scope{Kind: agentmem.ScopeUser, TenantID: "acme", UserID: "bob"}, time.Now(), 0)
		before := time.Now().Truncate(time.Microsecond)
		first, err := s.RevokeKey(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		if first.RevokedAt == nil || first.RevokedAt.Before(before) || first.RevokedAt.After(after) {
			t.Fatalf("RevokedAt=%v, want between %v and %v", first.RevokedAt, before, after)
		}
		want := *k
		want.RevokedAt = first.RevokedAt
		if diff := cmp.Diff(&want, first); diff != "" {
			t.Fatalf("revoked key mismatch (-want +got):\n%s", diff)
		}
		time.Sleep(2 * time.Millisecond)
		again, err := s.RevokeKey(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("second revocation changed the key (-first +second):\n%s", diff)
		}
		stored, err := s.FindKeyByID(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, stored); diff != "" {
			t.Fatalf("stored revoked key mismatch (-want +got):\n%s", diff)
		}
		_, err = s.RevokeKey(ctx, "0123456789abcdef")
		wantCode(t, err, agentmem.ENOTFOUND)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		const id = "0123456789abcdef"
		_, err := s.FindKeyByID(ctx, id)
		wantCode(t, err, agentmem.ENOTFOUND)
		if msg := agentmem.ErrorMessage(err); strings.Contains(msg, id) {
			t.Fatalf("not-found message %q echoes the key ID", msg)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		dup := *k
		dup.Scope, dup.Name = agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "mallory"}, "impostor"
		wantCode(t, s.CreateKey(ctx, &dup), agentmem.ECONFLICT)
		got, err := s.FindKeyByID(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(k, got); diff != "" {
			t.Fatalf("key changed by a conflicting create (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, sc := range []agentmem.Scope{
			{},
			{Kind: "root"},
			{Kind: agentmem.ScopeAdmin, UserID: "alice"},
			{Kind: agentmem.ScopeTenant},
			{Kind: agentmem.ScopeTenant, TenantID: "acme", UserID: "bob"},
			{Kind: agentmem.ScopeUser},
			{Kind: agentmem.ScopeUser, UserID: "a/b"},
		} {
			bad := &agentmem.APIKey{ID: "fedcba9876543210", Hash: k.Hash, Scope: sc, CreatedAt: time.Now()}
			if err := s.CreateKey(ctx, bad); agentmem.ErrorCode(err) != agentmem.EINVALID {
				t.Fatalf("CreateKey with scope %+v: %v, want invalid", sc, err)
			}
		}
		wantCode(t, s.CreateKey(ctx, &agentmem.APIKey{Hash: k.Hash, Scope: admin}), agentmem.EINVALID)
		_, err := s.FindKeyByID(ctx, "fedcba9876543210")
		wantCode(t, err, agentmem.ENOTFOUND)
	})
	t.Run("SurvivesDeleteUser", func(t *testing.T) {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: "carol"})
		MustAppend(t, s, "carol", th.ID, agentmem.RoleUser, "hi")
		_, k := MustCreateKey(t, s, agentmem.Scope{Kind: agentmem.ScopeUser, UserID: "carol"}, time.Now(), 0)
		if _, err := s.DeleteUser(ctx, "carol"); err != nil {
			t.Fatal(err)
		}
		got, err := s.FindKeyByID(ctx, k.ID)
		if err != nil {
			t.Fatalf("carol's key after erasing carol: %v", err)
		}
		if diff := cmp.Diff(k, got); diff != "" || got.RevokedAt != nil {
			t.Fatalf("key changed by DeleteUser (-want +got):\n%s", diff)
		}
	})
}

func testFindKeys(t *testing.T, s agentmem.Store) {
	base := agentmem.Timestamp(time.Now().Add(-time.Hour))
	tenants := map[string][]agentmem.Scope{
		"acme":   {{Kind: agentmem.ScopeTenant, TenantID: "acme"}, {Kind: agentmem.ScopeUser, TenantID: "acme", UserID: "bob"}},
		"globex": {{Kind: agentmem.ScopeTenant, TenantID: "globex"}},
		"":       {{Kind: agentmem.ScopeAdmin}, {Kind: agentmem.ScopeUser, UserID: "alice"}},
	}
	var all []*agentmem.APIKey
	byTenant := map[string][]*agentmem.APIKey{}
	for i := range 23 {
		tenant := []string{"acme", "acme", "globex", ""}[i%4]
		sc := tenants[tenant][i%len(tenants[tenant])]
		// Pairs of keys share a creation time: the ID breaks the tie.
		ttl := time.Duration(i%2) * time.Hour
		_, k := MustCreateKey(t, s, sc, base.Add(time.Duration(i/2)*time.Second), ttl)
		all = append(all, k)
		byTenant[tenant] = append(byTenant[tenant], k)
	}
	slices.SortFunc(all, newestKeysFirst)
	got, pages := allKeys(t, s, agentmem.KeyFilter{Limit: 5})
	if pages != 5 {
		t.Fatalf("listed %d keys in %d pages, want 23 in 5", len(got), pages)
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Fatalf("FindKeys mismatch (-want +got):\n%s", diff)
	}

	t.Run("TenantFilter", func(t *testing.T) {
		for tenant, want := range byTenant {
			slices.SortFunc(want, newestKeysFirst)
			got, _ := allKeys(t, s, agentmem.KeyFilter{TenantID: &tenant, Limit: 4})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("tenant %q: keys mismatch (-want +got):\n%s", tenant, diff)
			}
		}
	})
	t.Run("Empty", func(t *testing.T) {
		nobody := "nobody"
		page, next, err := s.FindKeys(ctx, agentmem.KeyFilter{TenantID: &nobody})
		if err != nil || page == nil || len(page) != 0 || next != "" {
			t.Fatalf("FindKeys(tenant nobody) = %v, %q, %v; want an empty non-nil page", page, next, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, _, err := s.FindKeys(ctx, agentmem.KeyFilter{Cursor: "garbage!"})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindKeys(ctx, agentmem.KeyFilter{Limit: -1})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindKeys(ctx, agentmem.KeyFilter{Limit: agentmem.MaxPageSize + 1})
		wantCode(t, err, agentmem.EINVALID)
	})
}

// allAuditEvents pages through FindAuditEvents with f (its Limit per page)
// and returns every event listed.
func allAuditEvents(tb testing.TB, s agentmem.Store, f agentmem.AuditFilter) []*agentmem.AuditEvent {
	tb.Helper()
	all := []*agentmem.AuditEvent{}
	for {
		page, next, err := s.FindAuditEvents(ctx, f)
		if err != nil {
			tb.Fatalf("FindAuditEvents: %v", err)
		}
		if page == nil || f.Limit > 0 && len(page) > f.Limit {
			tb.Fatalf("page of %d events (nil: %v), limit %d", len(page), page == nil, f.Limit)
		}
		all = append(all, page...)
		if f.Cursor = next; next == "" {
			return all
		}
	}
}

func testAudit(t *testing.T, s agentmem.Store) {
	before := time.Now().Truncate(time.Microsecond)
	first := &agentmem.AuditEvent{Actor: "cli", Action: agentmem.AuditCleanup}
	if err := s.CreateAuditEvent(ctx, first); err != nil {
		t.Fatal(err)
	}
	if first.ID == "" || first.At.Before(before) || first.At.After(time.Now()) || string(first.Detail) != "{}" {
		t.Fatalf("created event = %+v; want an ID, At now and Detail {}", first)
	}

	// Older events, three to a time (the ID breaks the tie), of three
	// actions, two tenants and four users.
	base := agentmem.Timestamp(time.Now().Add(-time.Hour))
	all := []*agentmem.AuditEvent{first}
	actions := []string{agentmem.AuditKeyCreate, agentmem.AuditUserErase, agentmem.AuditThreadErase}
	for i := range 30 {
		e := &agentmem.AuditEvent{
			At:     base.Add(time.Duration(i/3) * time.Millisecond),
			Actor:  "key:0123456789abcdef",
			Action: actions[i%3],
			UserID: fmt.Sprintf("u%d", i%4),
			Target: fmt.Sprintf("t-%d", i),
			Detail: json.RawMessage(fmt.Sprintf(` {"n": %d} `, i)),
		}
		if i%2 == 0 {
			e.TenantID = "acme"
		}
		if err := s.CreateAuditEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	slices.SortFunc(all, newestEventsFirst)
	if all[0] != first {
		t.Fatalf("the event created last at the current time is not the newest")
	}

	str := func(s string) *string { return &s }
	since := base.Add(4 * time.Millisecond)
	for _, tt := range []struct {
		name string
		f    agentmem.AuditFilter
		keep func(e *agentmem.AuditEvent) bool
	}{
		{"All", agentmem.AuditFilter{}, func(e *agentmem.AuditEvent) bool { return true }},
		{"Action", agentmem.AuditFilter{Action: str(agentmem.AuditUserErase)}, func(e *agentmem.AuditEvent) bool { return e.Action == agentmem.AuditUserErase }},
		{"Tenant", agentmem.AuditFilter{TenantID: str("acme")}, func(e *agentmem.AuditEvent) bool { return e.TenantID == "acme" }},
		{"NoTenant", agentmem.AuditFilter{TenantID: str("")}, func(e *agentmem.AuditEvent) bool { return e.TenantID == "" }},
		{"User", agentmem.AuditFilter{UserID: str("u1")}, func(e *agentmem.AuditEvent) bool { return e.UserID == "u1" }},
		{"Since", agentmem.AuditFilter{Since: &since}, func(e *agentmem.AuditEvent) bool { return !e.At.Before(since) }},
		{"Combined", agentmem.AuditFilter{Action: str(agentmem.AuditKeyCreate), TenantID: str("acme"), Since: &since},
			func(e *agentmem.AuditEvent) bool {
				return e.Action == agentmem.AuditKeyCreate && e.TenantID == "acme" && !e.At.Before(since)
			}},
		{"None", agentmem.AuditFilter{UserID: str("nobody")}, func(e *agentmem.AuditEvent) bool { return false }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := []*agentmem.AuditEvent{}
			for _, e := range all {
				if tt.keep(e) {
					want = append(want, e)
				}
			}
			for _, limit := range []int{0, 1, 4} {
				f := tt.f
				f.Limit = limit
				got := allAuditEvents(t, s, f)
				if diff := cmp.Diff(want, got, jsonEqual()); diff != "" {
					t.Fatalf("limit %d: events mismatch (-want +got):\n%s", limit, diff)
				}
			}
		})
	}

	t.Run("Fields", func(t *testing.T) {
		at := time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.FixedZone("x", -5*3600))
		e := &agentmem.AuditEvent{ID: "ev-1", At: at, Actor: "header:acme/bob", Action: agentmem.AuditUserExport,
			TenantID: "acme", UserID: "bob", Target: "bob", Detail: json.RawMessage(`{"threads":2,"nested":{"a":[1,"x"]}}`)}
		if err := s.CreateAuditEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
		if !e.At.Equal(at.Truncate(time.Microsecond)) || e.At.Location() != time.UTC {
			t.Fatalf("At=%v, want %v in UTC", e.At, at.Truncate(time.Microsecond))
		}
		got, _, err := s.FindAuditEvents(ctx, agentmem.AuditFilter{Action: str(agentmem.AuditUserExport)})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]*agentmem.AuditEvent{e}, got, jsonEqual()); diff != "" {
			t.Fatalf("stored event mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		wantCode(t, s.CreateAuditEvent(ctx, &agentmem.AuditEvent{ID: first.ID, Actor: "cli", Action: agentmem.AuditCleanup}), agentmem.ECONFLICT)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, e := range []*agentmem.AuditEvent{
			{Actor: "cli", Action: agentmem.AuditCleanup, Detail: json.RawMessage(`[1]`)},
			{Actor: "cli", Action: agentmem.AuditCleanup, Detail: json.RawMessage(`{"a":`)},
			{ID: "has space", Actor: "cli", Action: agentmem.AuditCleanup},
		} {
			wantCode(t, s.CreateAuditEvent(ctx, e), agentmem.EINVALID)
		}
		_, _, err := s.FindAuditEvents(ctx, agentmem.AuditFilter{Cursor: "garbage!"})
		wantCode(t, err, agentmem.EINVALID)
		_, _, err = s.FindAuditEvents(ctx, agentmem.AuditFilter{Limit: agentmem.MaxPageSize + 1})
		wantCode(t, err, agentmem.EINVALID)
	})
	t.Run("SurvivesDeleteUser", func(t *testing.T) {
		th := MustCreateThread(t, s, &agentmem.Thread{UserID: "carol"})
		MustAppend(t, s, "carol", th.ID, agentmem.RoleUser, "hi")
		created := &agentmem.AuditEvent{Actor: "cli", Action: agentmem.AuditKeyCreate, UserID: "carol", Target: "0123456789abcdef"}
		if err := s.CreateAuditEvent(ctx, created); err != nil {
			t.Fatal(err)
		}
		c, err := s.DeleteUser(ctx, "carol")
		if err != nil {
			t.Fatal(err)
		}
		erased := &agentmem.AuditEvent{Actor: "cli", Action: agentmem.AuditUserErase, UserID: "carol", Target: "carol",
			Detail: json.RawMessage(fmt.Sprintf(`{"threads":%d,"messages":%d}`, c.Threads, c.Messages))}
		if err := s.CreateAuditEvent(ctx, erased); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteUser(ctx, "carol"); err != nil {
			t.Fatal(err)
		}
		want := []*agentmem.AuditEvent{erased, created}
		slices.SortFunc(want, newestEventsFirst)
		got := allAuditEvents(t, s, agentmem.AuditFilter{UserID: str("carol")})
		if diff := cmp.Diff(want, got, jsonEqual()); diff != "" {
			t.Fatalf("carol's audit events after erasing her (-want +got):\n%s", diff)
		}
	})
}
