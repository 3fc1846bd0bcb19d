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
	"time"

	"github.com/agentmem/agentmem"
)

// runMigrate applies pending migrations (serve does this at start too).
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg := defaults()
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbFlags(fs, &cfg, getenv)
	if err := cfg.parse(fs, args, getenv); err != nil {
		return err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrated %s\n", redactDSN(cfg.DB))
	return store.Close()
}

// runExport writes one thread (--thread) or everything of a user as JSON,
// or one thread as Markdown.
func runExport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	cfg := defaults()
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbFlags(fs, &cfg, getenv)
	user := fs.String("user", "", "the user to export (required)")
	thread := fs.String("thread", "", "export only this thread")
	format := fs.String("format", "json", "json or markdown (markdown needs --thread)")
	out := fs.String("out", "-", "output file; - is standard output")
	if err := cfg.parse(fs, args, getenv); err != nil {
		return err
	}
	if err := agentmem.ValidateID("--user", *user); err != nil {
		return errors.New(agentmem.ErrorMessage(err))
	}
	if *format != "json" && (*format != "markdown" || *thread == "") {
		return fmt.Errorf("--format must be json, or markdown with --thread")
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()

	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		w = f
	}
	bw := bufio.NewWriter(w)
	defer func() { err = errors.Join(err, bw.Flush()) }()

	if *thread != "" {
		x, err := agentmem.ExportThread(ctx, store, *user, *thread)
		if err != nil {
			return errors.New(agentmem.ErrorMessage(err))
		}
		if *format == "markdown" {
			_, err = io.WriteString(bw, x.Markdown())
			return err
		}
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		return enc.Encode(x)
	}
	x := agentmem.UserExport{Version: agentmem.ExportVersion, UserID: *user, ExportedAt: time.Now().UTC(), Sessions: []*agentmem.Session{}}
	err = agentmem.ExportUser(ctx, store, *user, func(t *agentmem.ThreadExport) error {
		x.Threads = append(x.Threads, t)
		return nil
	})
	if err != nil {
		return err
	}
	if x.Threads == nil {
		x.Threads = []*agentmem.ThreadExport{}
	}
	enc := json.NewEncoder(bw)
	enc.SetIndent("", "  ")
	return enc.Encode(x)
}

// runImport reads a thread export or a user export (from a file or "-" for
// standard input) and stores its threads as the given user's.
func runImport(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg := defaults()
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbFlags(fs, &cfg, getenv)
	user := fs.String("user", "", "the user to import into (required)")
	if err := cfg.parse(fs, args, getenv); err != nil {
		return err
	}
	if err := agentmem.ValidateID("--user", *user); err != nil {
		return errors.New(agentmem.ErrorMessage(err))
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("import takes one file (or - for standard input)")
	}
	r := stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	var doc struct {
		agentmem.ThreadExport
		Threads []*agentmem.ThreadExport `json:"threads"`
	}
	if err := json.NewDecoder(bufio.NewReader(r)).Decode(&doc); err != nil {
		return fmt.Errorf("read export: %w", err)
	}
	threads := doc.Threads
	if doc.Thread != nil {
		threads = append(threads, &doc.ThreadExport)
	}
	if len(threads) == 0 {
		return fmt.Errorf("the file holds no thread export")
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	for _, x := range threads {
		t, err := store.ImportThread(ctx, *user, x)
		if err != nil {
			return fmt.Errorf("import thread %q: %s", threadID(x), agentmem.ErrorMessage(err))
		}
		fmt.Fprintf(stdout, "imported thread %s (%d messages)\n", t.ID, t.MessageCount)
	}
	return nil
}

func threadID(x *agentmem.ThreadExport) string {
	if x.Thread == nil {
		return ""
	}
	return x.Thread.ID
}

// runCleanup deletes every user's threads not updated for --older-than
// (seed 002's retention), or with --dry-run counts what it would delete.
func runCleanup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg := defaults()
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbFlags(fs, &cfg, getenv)
	olderThan := fs.String("older-than", "", "delete threads not updated for this long, e.g. 30d (required)")
	dryRun := fs.Bool("dry-run", false, "only count what would be deleted")
	if err := cfg.parse(fs, args, getenv); err != nil {
		return err
	}
	if *olderThan == "" {
		return fmt.Errorf("--older-than is required, e.g. --older-than 30d")
	}
	age, err := parseAge(*olderThan)
	if err != nil {
		return err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	cutoff := time.Now().Add(-age)
	var total agentmem.Counts
	users := 0
	for after := ""; ; {
		ids, err := store.FindUserIDs(ctx, after, 500)
		if err != nil {
			return err
		}
		for _, id := range ids {
			c, err := store.DeleteThreadsBefore(ctx, id, cutoff, *dryRun)
			if err != nil {
				return fmt.Errorf("clean up user %q: %w", id, err)
			}
			if c.Threads > 0 {
				users++
			}
			total.Add(c)
		}
		if len(ids) < 500 {
			break
		}
		after = ids[len(ids)-1]
	}
	verb := "deleted"
	if *dryRun {
		verb = "would delete"
	} else {
		detail, _ := json.Marshal(map[string]any{"older_than": *olderThan, "cutoff": cutoff.UTC(), "users": users, "deleted": total})
		if err := store.CreateAuditEvent(ctx, &agentmem.AuditEvent{Actor: "cli", Action: agentmem.AuditCleanup, Detail: detail}); err != nil {
			return fmt.Errorf("record the clean-up in the audit log: %w", err)
		}
	}
	fmt.Fprintf(stdout, "%s %d threads, %d messages, %d elements of %d users (not updated since %s)\n",
		verb, total.Threads, total.Messages, total.Elements, users, cutoff.UTC().Format(time.RFC3339))
	return nil
}
