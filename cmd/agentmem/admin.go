package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/sqlite"
)

// runMigrate applies pending migrations (serve does this at start too).
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, fs, err := parseCommand("migrate", args, getenv, stdout, nil)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate: unexpected argument %q", fs.Arg(0))
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrated %s\n", redactDSN(cfg.DB))
	return store.Close()
}

// cliContext is ctx with the command line's identity: an admin, named
// "cli" in the audit log.
func cliContext(ctx context.Context) context.Context {
	return agentmem.NewContextWithIdentity(ctx, &agentmem.Identity{Via: agentmem.ViaCLI, Scope: agentmem.Scope{Kind: agentmem.ScopeAdmin}})
}

// exportArgs are export's arguments.
type exportArgs struct {
	user, thread, format, out string
	includeDeleted            bool
}

func (a *exportArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.user, "user", "", "the user to export (required)")
	fs.StringVar(&a.thread, "thread", "", "export only this thread")
	fs.StringVar(&a.format, "format", "json", "json or markdown")
	fs.BoolVar(&a.includeDeleted, "include-deleted", false, "export soft-deleted threads too")
	fs.StringVar(&a.out, "out", "-", "output file; - is standard output")
}

// runExport writes one thread (--thread) or everything of a user, as
// JSON (what import takes) or Markdown.
func runExport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	var a exportArgs
	cfg, fs, err := parseCommand("export", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("export: unexpected argument %q", fs.Arg(0))
	case a.user == "":
		return errors.New("--user is required")
	}
	if err := agentmem.CheckExportFormat(a.format); err != nil {
		return fmt.Errorf("--%s", agentmem.ErrorMessage(err))
	}
	if err := cfg.checkDBExists(); err != nil {
		return err
	}
	return withService(ctx, cfg, func(ctx context.Context, svc *core.Service) error {
		if err := checkUser(ctx, svc, cfg, a.user); err != nil {
			return err
		}
		return writeOut(a.out, stdout, func(w io.Writer) error {
			if a.thread == "" {
				return svc.ExportUser(ctx, a.user, agentmem.ExportOptions{Format: a.format, IncludeDeleted: a.includeDeleted}, w)
			}
			x, err := svc.ExportThread(ctx, a.user, a.thread)
			if err != nil {
				return err
			}
			if a.format == agentmem.ExportMarkdown {
				_, err = io.WriteString(w, x.Markdown())
				return err
			}
			return printJSON(w, x)
		})
	})
}

// writeOut calls write with standard output (name "-") or with a
// temporary file beside name, renamed to name once write succeeded: a
// failed export never truncates or replaces an existing file.
func writeOut(name string, stdout io.Writer, write func(io.Writer) error) (err error) {
	if name == "-" {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

// checkUser returns an error naming user when the database of cfg has
// no such user (nothing stored of theirs): reading them would answer
// nothing, as if they had nothing, when the name was mistaken.
func checkUser(ctx context.Context, svc agentmem.AdminService, cfg Config, user string) error {
	users, _, err := svc.FindUsers(ctx, agentmem.UserFilter{UserID: &user, Limit: 1})
	if err != nil {
		return err
	}
	if len(users) == 0 {
		return fmt.Errorf("user %q not found in %s: it holds nothing of theirs", user, redactDSN(cfg.DB))
	}
	return nil
}

// withService opens the store of cfg and calls fn with the application
// core over it, as the command line's identity (an admin). Jobs it asks
// for (indexing an import) are stored and run by serve.
func withService(ctx context.Context, cfg Config, fn func(context.Context, *core.Service) error) error {
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	svc := core.New(store, core.Options{Indexer: &index.Indexer{Store: store, Jobs: store}})
	err = fn(cliContext(ctx), svc)
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	return err
}

// importArgs are import's arguments.
type importArgs struct{ user, onConflict string }

func (a *importArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.user, "user", "", "the user to import into (required)")
	fs.StringVar(&a.onConflict, "on-conflict", "fail", "what to do with records the user already has: fail (import nothing), skip or replace")
}

// runImport reads a thread export or a user export (from a file or "-" for
// standard input) and restores it as the given user's, all of it or
// nothing; imported messages are indexed by serve's workers.
func runImport(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	var a importArgs
	cfg, fs, err := parseCommand("import", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	user, onConflict := &a.user, &a.onConflict
	switch {
	case *user == "":
		return errors.New("--user is required")
	case fs.NArg() != 1:
		return fmt.Errorf("import takes one file (or - for standard input)")
	case *onConflict != agentmem.OnConflictFail && *onConflict != agentmem.OnConflictSkip && *onConflict != agentmem.OnConflictReplace:
		return fmt.Errorf("--on-conflict must be fail, skip or replace, not %q", *onConflict) // core would name the API's on_conflict
	}
	p := newProgress(stderr)
	defer p.Done()
	name, r := fs.Arg(0), stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
		if fi, err := f.Stat(); err == nil {
			p.Update("import: reading %s (%s)", name, formatMiB(fi.Size()))
		}
	} else {
		name = "standard input"
		p.Update("import: reading standard input")
	}
	b, err := io.ReadAll(bufio.NewReader(r))
	if err != nil {
		return fmt.Errorf("read export: %w", err)
	}
	kind, err := exportKind(name, b)
	if err != nil {
		return err
	}
	if kind == "thread" && *onConflict != agentmem.OnConflictFail {
		return fmt.Errorf("--on-conflict %s takes a user export; %s is one thread's export, imported whole or not at all (a clash is an error)", *onConflict, name)
	}
	p.Update("import: decoding %s (%s)", name, formatMiB(int64(len(b))))
	return withService(ctx, cfg, func(ctx context.Context, svc *core.Service) error {
		if kind == "thread" {
			var x agentmem.ThreadExport
			if err := json.Unmarshal(b, &x); err != nil {
				return fmt.Errorf("read export: %w", err)
			}
			p.Update("import: storing thread %s (%d messages)", threadID(&x), len(x.Messages))
			t, err := svc.ImportThread(ctx, *user, &x)
			p.Done()
			if err != nil {
				return fmt.Errorf("import thread %q: %s", threadID(&x), agentmem.ErrorMessage(err))
			}
			fmt.Fprintf(stdout, "imported thread %s (%d messages)\n", t.ID, t.MessageCount)
			return nil
		}
		var x agentmem.UserExport
		if err := json.Unmarshal(b, &x); err != nil {
			return fmt.Errorf("read export: %w", err)
		}
		messages := 0
		for _, t := range x.Threads {
			messages += len(t.Messages)
		}
		p.Update("import: storing %d threads, %d messages and %d memories", len(x.Threads), messages, len(x.Memories))
		res, err := svc.ImportUser(ctx, *user, &x, agentmem.ImportOptions{OnConflict: *onConflict})
		p.Done()
		if agentmem.ErrorCode(err) == agentmem.ECONFLICT {
			// The clash's advice names the API's parameter; here it is a flag.
			msg := strings.Replace(agentmem.ErrorMessage(err), agentmem.ClashHint, "Import with --on-conflict skip or replace.", 1)
			return errors.New(msg)
		}
		if err != nil {
			return err
		}
		printed := map[string]bool{} // a thread the file holds twice is imported once
		for _, t := range x.Threads {
			if slices.Contains(res.ThreadIDs, t.Thread.ID) && !printed[t.Thread.ID] {
				printed[t.Thread.ID] = true
				fmt.Fprintf(stdout, "imported thread %s (%d messages)\n", t.Thread.ID, len(t.Messages))
			}
		}
		fmt.Fprintf(stdout, "imported: %s\n", counts(res.Imported))
		if c := counts(res.Skipped); c != "nothing" {
			fmt.Fprintf(stdout, "skipped (the user's kept): %s\n", c)
		}
		if c := counts(res.Replaced); c != "nothing" {
			fmt.Fprintf(stdout, "replaced: %s\n", c)
		}
		if c := counts(res.Duplicates); c != "nothing" {
			fmt.Fprintf(stdout, "repeated in the file (imported once): %s\n", c)
		}
		return nil
	})
}

// counts writes import counts for a person to read: those not zero
// (those not zero), or "nothing".
func counts(c agentmem.ImportCounts) string {
	var parts []string
	for _, n := range []struct {
		n           int
		one, plural string
	}{
		{c.Threads, "thread", "threads"}, {c.Messages, "message", "messages"}, {c.Memories, "memory", "memories"},
		{c.Notes, "notes version", "notes versions"}, {c.Profiles, "profile version", "profile versions"},
		{c.Entities, "entity", "entities"}, {c.Sessions, "session", "sessions"}, {c.Reflections, "reflection", "reflections"},
	} {
		switch {
		case n.n == 1:
			parts = append(parts, "1 "+n.one)
		case n.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n.n, n.plural))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// exportKind tells what the import file name holds, by the fields of
// its JSON object: "thread" (one thread's export: version and thread) or
// "user" (a user's: version and any of user_id, threads, memories…).
// Anything else is not an export, and an error saying so: importing it
// would import nothing, and say only that.
func exportKind(name string, b []byte) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return "", fmt.Errorf("read export %s: not JSON: %v", name, err)
		}
		return "", fmt.Errorf("%s is not an agentmem export: want a JSON object, as agentmem export writes", name)
	}
	if _, ok := fields["version"]; !ok { // null too
		return "", fmt.Errorf("%s is not an agentmem export: it has no \"version\" (agentmem export writes a user's, GET …/threads/THREAD/export a thread's)", name)
	}
	if _, ok := fields["thread"]; ok {
		return "thread", nil
	}
	for _, k := range []string{"user_id", "threads", "sessions", "notes", "memories", "profiles", "entities", "reflections"} {
		if _, ok := fields[k]; ok {
			return "user", nil
		}
	}
	return "", fmt.Errorf("%s is not an agentmem export: it has neither a thread nor any of a user export's user_id, threads, memories, notes, profiles, entities, sessions and reflections", name)
}

func threadID(x *agentmem.ThreadExport) string {
	if x.Thread == nil {
		return ""
	}
	return x.Thread.ID
}

// cleanupArgs are cleanup's arguments.
type cleanupArgs struct {
	olderThan time.Duration
	dryRun    bool
}

func (a *cleanupArgs) flags(fs *flag.FlagSet) {
	fs.Var(value{&a.olderThan}, "older-than", "delete threads not updated for this long, e.g. 30d or 2w (required)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "only count what would be deleted")
}

// runCleanup deletes every user's threads not updated for --older-than
// (seed 002's retention), or with --dry-run counts what it would delete.
func runCleanup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var a cleanupArgs
	cfg, fs, err := parseCommand("cleanup", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("cleanup: unexpected argument %q", fs.Arg(0))
	case !given(fs, "older-than"):
		return fmt.Errorf("--older-than is required, e.g. --older-than 30d")
	case a.olderThan <= 0:
		return fmt.Errorf("--older-than %v would delete every thread; give a positive age such as 30d", a.olderThan)
	}
	if err := cfg.checkDBExists(); err != nil {
		return err
	}
	dryRun := &a.dryRun
	cutoff := time.Now().Add(-a.olderThan)
	var res *agentmem.CleanupResult
	err = withService(ctx, cfg, func(ctx context.Context, svc *core.Service) (err error) {
		res, err = svc.Cleanup(ctx, cutoff, *dryRun)
		return err
	})
	if err != nil {
		return err
	}
	verb := "deleted"
	if *dryRun {
		verb = "would delete"
	}
	total, users := res.Deleted, res.Users
	fmt.Fprintf(stdout, "%s %d threads, %d messages, %d elements of %d users (not updated since %s)\n",
		verb, total.Threads, total.Messages, total.Elements, users, cutoff.UTC().Format(time.RFC3339))
	return nil
}

// backupArgs are backup's arguments.
type backupArgs struct{ out string }

func (a *backupArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.out, "out", "", "the backup file to write; it must not exist (required)")
}

// backuper is a store that copies itself online (SQLite's).
type backuper interface {
	Backup(ctx context.Context, path string) (sqlite.BackupResult, error)
}

// runBackup writes an online backup of the SQLite database to --out while
// serve may be running: one consistent snapshot, checked before it is
// named --out. A PostgreSQL database is backed up with pg_dump.
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var a backupArgs
	cfg, fs, err := parseCommand("backup", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("backup: unexpected argument %q", fs.Arg(0))
	case a.out == "":
		return errors.New("--out is required: the file to write the backup to")
	}
	if err := cfg.checkDBExists(); err != nil {
		return err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	b, ok := store.(backuper)
	if !ok {
		return fmt.Errorf("backup copies a SQLite database; back PostgreSQL up with pg_dump: pg_dump --format=custom --file=%s '%s' (restore with pg_restore --clean --dbname=…)", a.out, redactDSN(cfg.DB))
	}
	// The copy cannot say how far it is, but its file can: it grows
	// towards the database's size (less, once compacted), then is checked.
	p := newProgress(stderr)
	defer p.Done()
	var dbSize int64
	if path, ok := sqliteFile(cfg.DB); ok {
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(path + suffix); err == nil {
				dbSize += fi.Size()
			}
		}
	}
	partial := sqlite.BackupPartial(a.out)
	p.Poll(func() string {
		fi, err := os.Stat(partial)
		if err != nil {
			return "backup: starting"
		}
		return fmt.Sprintf("backup: %s copied (the database is %s)", formatMiB(fi.Size()), formatMiB(dbSize))
	})
	start := time.Now()
	res, err := b.Backup(ctx, a.out)
	p.Done()
	for _, name := range res.Removed {
		fmt.Fprintf(stderr, "removed %s: the partial copy of a backup that did not finish (killed)\n", name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s: %.1f MiB in %s, integrity ok\n", redactDSN(cfg.DB), a.out, float64(res.Size)/(1<<20), time.Since(start).Round(time.Millisecond))
	return nil
}
