package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

// runCmd runs the command line args with an empty environment and returns
// its standard output.
func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), err
}

// seed writes a thread with two messages for user into the database at db
// and returns its id; updated is its updated_at.
func seed(t *testing.T, db, user string, updated time.Time) string {
	t.Helper()
	s := testutil.MustOpenSQLiteFile(t, db)
	defer s.Close()
	s.Now = func() time.Time { return updated }
	th := &agentmem.Thread{UserID: user, AgentID: "helper"}
	if err := s.CreateThread(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	_, err := s.AppendMessages(context.Background(), user, th.ID, []*agentmem.Message{{Role: "user", Content: "Hello from " + user}, {Role: "assistant", Content: "Hi!"}}, agentmem.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return th.ID
}

func TestExportImport(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	id := seed(t, db, "alice", time.Now())

	md, err := runCmd(t, "export", "--db", db, "--user", "alice", "--thread", id, "--format", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "# Hello from alice\n") || !strings.Contains(md, "## 👤 User\n\nHello from alice") {
		t.Fatalf("markdown export:\n%s", md)
	}
	out := filepath.Join(dir, "alice.json")
	if _, err := runCmd(t, "export", "--db", db, "--user", "alice", "--out", out); err != nil {
		t.Fatal(err)
	}
	var x agentmem.UserExport
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &x); err != nil || len(x.Threads) != 1 || len(x.Threads[0].Messages) != 2 {
		t.Fatalf("user export: %v, %s", err, b)
	}
	db2 := filepath.Join(dir, "b.db")
	got, err := runCmd(t, "import", "--db", db2, "--user", "bob", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "imported thread "+id+" (2 messages)") {
		t.Fatalf("import said %q", got)
	}
	// Importing again conflicts and says which thread.
	if _, err := runCmd(t, "import", "--db", db2, "--user", "bob", out); err == nil || !strings.Contains(err.Error(), id) {
		t.Fatalf("second import: %v, want a conflict naming %s", err, id)
	}
	for _, bad := range [][]string{
		{"export", "--db", db}, // no user
		{"export", "--db", db, "--user", "alice", "--format", "yaml"}, // bad format
		{"import", "--db", db2, "--user", "bob"},                      // no file
		{"import", "--db", db2, "--user", "bob", filepath.Join(dir, "missing.json")},
		{"cleanup", "--db", db},                            // no age
		{"cleanup", "--db", db, "--older-than", "soon"},    // bad age
		{"serve", "--db", db, "--max-message-bytes", "-1"}, // bad limit
		{"frobnicate"},
	} {
		if _, err := runCmd(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestCleanup(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	old := seed(t, db, "alice", time.Now().Add(-40*24*time.Hour))
	seed(t, db, "bob", time.Now().Add(-31*24*time.Hour))
	recent := seed(t, db, "alice", time.Now().Add(-2*24*time.Hour))

	got, err := runCmd(t, "cleanup", "--db", db, "--older-than", "30d", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "would delete 2 threads, 4 messages, 0 elements of 2 users") {
		t.Fatalf("dry run said %q", got)
	}
	got, err = runCmd(t, "cleanup", "--db", db, "--older-than", "30d")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "deleted 2 threads, 4 messages") {
		t.Fatalf("cleanup said %q", got)
	}
	s := testutil.MustOpenSQLiteFile(t, db)
	if _, err := s.FindThreadByID(context.Background(), "alice", old); agentmem.ErrorCode(err) != agentmem.ENOTFOUND {
		t.Fatalf("old thread: %v", err)
	}
	if _, err := s.FindThreadByID(context.Background(), "alice", recent); err != nil {
		t.Fatalf("recent thread: %v", err)
	}
}

func TestMigrateAndVersion(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	if got, err := runCmd(t, "migrate", "--db", "sqlite:"+db); err != nil || got != "migrated sqlite:"+db+"\n" {
		t.Fatalf("migrate: %q, %v", got, err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("migrate made no database: %v", err)
	}
	if got, err := runCmd(t, "version"); err != nil || !strings.HasPrefix(got, "agentmem ") {
		t.Fatalf("version: %q, %v", got, err)
	}
}

// TestExport_SameAsAPI: the command line's export of a user is the API's,
// memories, notes, profiles and entities included; a failed export leaves
// an existing output file as it was.
func TestExport_SameAsAPI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	seed(t, db, "alice", time.Now())
	s := testutil.MustOpenSQLiteFile(t, db)
	svc := core.New(s, core.Options{})
	ctx := context.Background()
	if _, err := svc.CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User lives in Oslo.", Category: "fact"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EditNotes(ctx, "alice", "helper", agentmem.NotesOp{Operation: agentmem.NotesOverwrite, Content: "# Alice\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PutEntity(ctx, "alice", agentmem.EntityInput{Name: "Oslo", Type: "place"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RefreshProfile(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.NewHandler(nil, svc, httpapi.Options{}))
	resp, err := http.Get(srv.URL + "/v1/users/alice/export")
	if err != nil {
		t.Fatal(err)
	}
	api, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	s.Close()

	out := filepath.Join(dir, "alice.json")
	if _, err := runCmd(t, "export", "--db", db, "--user", "alice", "--out", out); err != nil {
		t.Fatal(err)
	}
	cli, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var a, c map[string]any
	if err := json.Unmarshal(api, &a); err != nil {
		t.Fatalf("API export: %v\n%s", err, api)
	}
	if err := json.Unmarshal(cli, &c); err != nil {
		t.Fatalf("CLI export: %v\n%s", err, cli)
	}
	delete(a, "exported_at")
	delete(c, "exported_at")
	for _, k := range []string{"threads", "sessions", "notes", "memories", "profiles", "entities"} {
		if l, ok := c[k].([]any); !ok || (k != "sessions" && len(l) == 0) {
			t.Errorf("CLI export %s = %v, want a non-empty list", k, c[k])
		}
	}
	if diff := cmp.Diff(a, c); diff != "" {
		t.Fatalf("CLI and API exports differ (-api +cli):\n%s", diff)
	}

	// A failed export (no such database directory… here: a user ID that
	// is not valid) leaves the file as it was.
	if _, err := runCmd(t, "export", "--db", db, "--user", "bad user", "--out", out); err == nil {
		t.Fatal("export of an invalid user succeeded")
	}
	again, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(again, cli) {
		t.Fatalf("the failed export changed %s: %v", out, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".alice.json.*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// TestImport_Indexed: what `agentmem import` restores is indexed by the
// server that opens the database next: the import stores the jobs (it has
// no embedder of its own), and the server's workers embed the imported
// messages and memories, which vector search then finds.
func TestImport_Indexed(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	seed(t, db, "alice", time.Now())
	ctx := context.Background()
	s := testutil.MustOpenSQLiteFile(t, db)
	if _, err := core.New(s, core.Options{}).CreateMemory(ctx, "alice", agentmem.MemoryInput{Text: "User keeps bees on the roof."}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	out := filepath.Join(dir, "alice.json")
	if _, err := runCmd(t, "export", "--db", db, "--user", "alice", "--out", out); err != nil {
		t.Fatal(err)
	}
	db2 := filepath.Join(dir, "b.db")
	if _, err := runCmd(t, "import", "--db", db2, "--user", "bob", out); err != nil {
		t.Fatal(err)
	}

	mem, err := app.Open(ctx, app.Config{DB: "sqlite:" + db2})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, q := range []struct{ scope, query, want string }{
		{"memories", "bees on the roof", "User keeps bees on the roof."},
		{"messages", "hello from alice", "Hello from alice"},
	} {
		var found bool
		for deadline := time.Now().Add(20 * time.Second); !found; time.Sleep(20 * time.Millisecond) {
			resp, err := mem.Search(ctx, "bob", agentmem.SearchRequest{Query: q.query, Scopes: []string{q.scope}, Signals: []string{"vector"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range resp.Results {
				found = found || r.Text == q.want
			}
			if !found && time.Now().After(deadline) {
				t.Fatalf("vector search of %s for %q after the import: %+v, want %q", q.scope, q.query, resp.Results, q.want)
			}
		}
	}
}

// TestAdmin_ReservedUser: the command line cannot reach agentmem's own
// records either (user and tenant IDs starting with _): export, import and
// keys create name the reserved ID.
func TestAdmin_ReservedUser(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	id := seed(t, db, "alice", time.Now())
	out := filepath.Join(dir, "alice.json")
	if _, err := runCmd(t, "export", "--db", db, "--user", "alice", "--thread", id, "--out", out); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"export", "--db", db, "--user", "_agentmem"},
		{"export", "--db", db, "--user", "_agentmem", "--thread", id},
		{"import", "--db", db, "--user", "_agentmem", out},
		{"keys", "create", "--db", db, "--scope", "user:_agentmem"},
		{"keys", "create", "--db", db, "--scope", "tenant:_agentmem"},
	} {
		if _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), `"_agentmem" is reserved`) {
			t.Errorf("%v: %v, want an error saying _agentmem is reserved", args, err)
		}
	}
}

// TestCLI_NoSuchDatabase: a command that reads a database refuses one
// that does not exist, naming it, and does not create it; those that
// make one (migrate, import, keys create, serve, mcp) still do.
func TestCLI_NoSuchDatabase(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such.db")
	if err := os.MkdirAll(filepath.Dir(missing), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"memories", "--db", "sqlite:" + missing, "--user", "alice"},
		{"search", "--db", "sqlite:" + missing, "--user", "alice", "cello"},
		{"context", "--db", "sqlite:" + missing, "--user", "alice", "--thread", "t"},
		{"export", "--db", "sqlite:" + missing, "--user", "alice"},
		{"cleanup", "--db", missing, "--older-than", "30d", "--dry-run"},
		{"backup", "--db", missing, "--out", filepath.Join(dir, "b.db")},
		{"keys", "list", "--db", missing},
		{"keys", "revoke", "--db", missing, "0000000000000000"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			_, err := runCmd(t, args...)
			if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("%v: %v, want an error saying %s does not exist", args, err, missing)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Fatalf("%v created the database: %v", args, err)
			}
		})
	}
	// The default --db is named as such.
	t.Chdir(dir)
	if _, err := runCmd(t, "memories", "--user", "alice"); err == nil || !strings.Contains(err.Error(), "agentmem.db") {
		t.Errorf("memories on the default database, which does not exist: %v", err)
	}
	for _, args := range [][]string{
		{"migrate", "--db", filepath.Join(dir, "m.db")},
		{"keys", "create", "--db", filepath.Join(dir, "k.db"), "--scope", "admin"},
	} {
		if _, err := runCmd(t, args...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestCLI_UnknownUser: export, memories, search and context of a user the
// database does not have are errors naming the user, not an empty answer.
func TestCLI_UnknownUser(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	seed(t, db, "alice", time.Now())
	for _, args := range [][]string{
		{"export", "--db", db, "--user", "ghost"},
		{"export", "--db", db, "--user", "ghost", "--format", "markdown"},
		{"memories", "--db", db, "--user", "ghost"},
		{"search", "--db", db, "--user", "ghost", "hello"},
		{"context", "--db", db, "--user", "ghost", "--thread", "t"},
		{"export", "--db", db, "--user", "tenant:acme/user:alice"},
	} {
		out, err := runCmd(t, args...)
		if err == nil || !strings.Contains(err.Error(), "not found") || out != "" {
			t.Errorf("%v: %q, %v; want nothing printed and an error saying the user is not found", args, out, err)
		}
	}
	if _, err := runCmd(t, "export", "--db", db, "--user", "ghost", "--out", filepath.Join(dir, "ghost.json")); err == nil {
		t.Error("export --user ghost --out FILE succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "ghost.json")); !os.IsNotExist(err) {
		t.Errorf("export of an unknown user wrote its file: %v", err)
	}
	if got, err := runCmd(t, "memories", "--db", db, "--user", "alice"); err != nil || !strings.Contains(got, "no memories") {
		t.Errorf("memories of alice, who has none: %q, %v", got, err)
	}
}

// TestImport_NotAnExport: a file that is not an export (another JSON
// document, or no JSON) is an error saying so, and imports nothing.
func TestImport_NotAnExport(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	for _, body := range []string{`{"hello":1}`, `[1,2]`, `null`, `"text"`, `{"version":2}`, `{"threads":[]}`, `not json`} {
		file := filepath.Join(dir, "x.json")
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := runCmd(t, "import", "--db", db, "--user", "bob", file)
		if err == nil || !(strings.Contains(err.Error(), "not an agentmem export") || strings.Contains(err.Error(), "not JSON")) || strings.Contains(out, "imported") {
			t.Errorf("import of %s: %q, %v; want an error saying it is not an export", body, out, err)
		}
	}
	// An empty export is one: it imports nothing, and says so.
	file := filepath.Join(dir, "empty.json")
	os.WriteFile(file, []byte(`{"version":2,"user_id":"alice","threads":[]}`), 0o600)
	if out, err := runCmd(t, "import", "--db", db, "--user", "bob", file); err != nil || !strings.Contains(out, "imported: nothing") {
		t.Errorf("import of an empty export: %q, %v", out, err)
	}
}
