package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/eval/extraction"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/llm/lexical"
	"github.com/agentmem/agentmem/sqlite"
)

// evalExtractionArgs are the arguments of eval extraction.
type evalExtractionArgs struct {
	data   *string
	asJSON *bool
}

func (a *evalExtractionArgs) flags(fs *flag.FlagSet) {
	a.data = fs.String("data", "", "the statement corpus (default: eval/extraction/testdata/statements.json, built in)")
	a.asJSON = fs.Bool("json", false, "print the report as JSON, with what was extracted from every statement and how every change case ended")
}

// runEvalExtraction runs the statement corpus through the extractor that
// works without a model (extract.Heuristic) and its change cases through
// consolidation on a throw-away SQLite database, and prints precision,
// recall and change accuracy (see package extraction).
func runEvalExtraction(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	var a evalExtractionArgs
	_, fs, err := parseCommand("eval extraction", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("eval extraction: unexpected argument %q", fs.Arg(0))
	}
	var corpus *extraction.Corpus
	if *a.data == "" {
		corpus, err = extraction.Default()
	} else {
		corpus, err = extraction.ReadFile(*a.data)
	}
	if err != nil {
		return fmt.Errorf("eval extraction: --data: %w", err)
	}

	dir, err := os.MkdirTemp("", "agentmem-eval-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	// A throw-away database needs no fsync per commit.
	store, err := sqlite.Open(ctx, filepath.Join(dir, "extraction.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()

	emb := lexical.New(0) // serve's embedder without a model
	rep, err := extraction.Run(ctx, corpus, extraction.Options{Extract: extract.Heuristic, Store: store, Emb: emb, Space: emb.Space(),
		Name: fmt.Sprintf("extract.Heuristic (no model), consolidated by the rules with the built-in embedder %s", emb.Space())})
	if err != nil {
		return fmt.Errorf("eval extraction: %w", err)
	}
	if !*a.asJSON {
		return rep.WriteText(stdout)
	}
	return printJSON(stdout, rep)
}
