package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/eval/memory"
)

// evalMemoryArgs are the arguments of eval memory.
type evalMemoryArgs struct {
	data, db *string
	asJSON   *bool
	wait     time.Duration
}

func (a *evalMemoryArgs) flags(fs *flag.FlagSet) {
	a.data = fs.String("data", "", "the directory of conversation files, one JSON file each (required; see eval/memory)")
	a.asJSON = fs.Bool("json", false, "print the report as JSON, with every conversation's misses")
	a.db = fs.String("db", "", "database to run on: sqlite:PATH or postgres://… (default: a fresh SQLite file in a temporary directory, removed afterwards)")
	a.wait = 5 * time.Minute
	fs.Var(value{&a.wait}, "wait", "how long to wait for the background jobs of a session")
}

// runEvalMemory stores each conversation of --data as a new user of
// agentmem wired as serve wires it with its default settings and no
// model, lets its background jobs run, and prints how much of what the
// user said it knows, and whether it keeps the present (see package
// memory).
//
// As eval locomo, --db does not fall back to AGENTMEM_DB: the evaluation
// writes users named memeval-*.
func runEvalMemory(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	var a evalMemoryArgs
	cfg, fs, err := parseCommand("eval memory", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("eval memory: unexpected argument %q", fs.Arg(0))
	case *a.data == "":
		return errors.New("eval memory: --data is required (a directory of conversation files)")
	}
	convs, err := memory.ReadDir(*a.data)
	if err != nil {
		return fmt.Errorf("eval memory: --data: %w", err)
	}

	prefix := "memeval-"
	if *a.db != "" {
		cfg.DB = *a.db
		// A database of its own may hold the users of an earlier run.
		prefix = fmt.Sprintf("memeval-%d-", time.Now().Unix())
	} else {
		dir, err := os.MkdirTemp("", "agentmem-eval-")
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
		// A throw-away database needs no fsync per commit.
		cfg.DB, cfg.Synchronous = "sqlite:"+filepath.Join(dir, "memory.db"), "NORMAL"
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Serve's settings, but no model whatever the environment says: the
	// evaluation is of the pipeline that works without one.
	acfg, err := cfg.app(func(string) string { return "" }, nil)
	if err != nil {
		return err
	}
	acfg.LLMBaseURL, acfg.LLMModel = "", ""
	mem, err := app.Open(ctx, acfg)
	if err != nil {
		return fmt.Errorf("eval memory: %w", err)
	}
	defer func() { err = errors.Join(err, mem.Close()) }()
	_, space := mem.Model()

	p := newProgress(stderr)
	defer p.Done()
	rep, err := memory.Run(ctx, mem, convs, memory.Options{UserPrefix: prefix, Wait: a.wait, Progress: p,
		SessionDone: func(done, total int) { p.Update("eval memory: %d/%d sessions", done, total) },
		Pipeline:    fmt.Sprintf("serve's defaults, no model (heuristic extraction, extractive summaries, assembled profile), embedder %s", space)})
	if err != nil {
		return fmt.Errorf("eval memory: %w", err)
	}
	p.Done()
	if *a.asJSON {
		return printJSON(stdout, rep)
	}
	return rep.WriteText(stdout)
}
