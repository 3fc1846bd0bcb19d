package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/eval/locomo"
	"github.com/agentmem/agentmem/extract"
	"github.com/agentmem/agentmem/index"
	"github.com/agentmem/agentmem/retrieve"
	"github.com/agentmem/agentmem/tokens"
	"github.com/agentmem/agentmem/window"
)

// runEval runs an evaluation: locomo (retrieval), extraction (memories
// drawn from what users say) or memory (the whole pipeline over labelled
// conversations).
func runEval(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, usage("eval "))
		return nil
	}
	if len(args) > 0 {
		switch args[0] {
		case "locomo":
			return runEvalLocomo(ctx, args[1:], getenv, stdout, stderr)
		case "extraction":
			return runEvalExtraction(ctx, args[1:], getenv, stdout, stderr)
		case "memory":
			return runEvalMemory(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	fmt.Fprint(stderr, usage("eval "))
	if len(args) == 0 {
		return errors.New("eval: name an evaluation (locomo, extraction, memory)")
	}
	if strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("eval: name the evaluation (locomo, extraction or memory) before its flags, e.g. agentmem eval locomo %s", strings.Join(args, " "))
	}
	return fmt.Errorf("eval: unknown evaluation %q (there are locomo, extraction and memory)", args[0])
}

// evalArgs are the arguments of eval locomo.
type evalArgs struct {
	data, ks, scopes, searcher, db, embedder *string
	asJSON, perQuestion                      *bool
	vw                                       *float64
}

func (a *evalArgs) flags(fs *flag.FlagSet) {
	a.data = fs.String("data", "", "the LoCoMo data file, e.g. shared/data/locomo/locomo-dev.json (required)")
	a.ks = fs.String("k", "1,5,10", "the cutoffs of Recall@k and hit@k, comma-separated")
	a.asJSON = fs.Bool("json", false, "print the report as JSON")
	a.perQuestion = fs.Bool("questions", false, "with --json, also print every question's evidence and ranked turns")
	a.scopes = fs.String("scopes", agentmem.ScopeMessages, "what to search, comma-separated: messages, chunks, summaries, memories")
	a.searcher = fs.String("searcher", "hybrid", "hybrid (full-text + vectors, fused), fulltext, vector, bm25 (the baseline over messages), or all (fulltext, vector and hybrid, each on a database of its own, compared)")
	a.vw = fs.Float64("vector-weight", 0, "the weight of the vector signal in hybrid fusion (full-text weighs 1); 0 for serve's for the --embedder")
	a.embedder = fs.String("embedder", "builtin", "the embedder, as serve's --embedder: builtin, lexical or openai (its OPENAI_* variables)")
	a.db = fs.String("db", "", "database to ingest into: sqlite:PATH or postgres://… (default: a fresh SQLite file in a temporary directory, removed afterwards)")
}

// runEvalLocomo stores the conversations of a LoCoMo data file in a fresh
// store, asks every question and prints how much of the evidence the
// search found (see package locomo).
//
// --db does not fall back to AGENTMEM_DB as the other commands do: the
// evaluation writes users named locomo-*, which have no business in the
// database that serve uses unless someone asks for it by name.
func runEvalLocomo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	var a evalArgs
	cfg, fs, err := parseCommand("eval locomo", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	data, ks, asJSON, perQuestion, scopes, searcherName, vw, db := a.data, a.ks, a.asJSON, a.perQuestion, a.scopes, a.searcher, a.vw, a.db
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("eval locomo: unexpected argument %q", fs.Arg(0))
	case *data == "":
		return errors.New("eval locomo: --data is required (the LoCoMo JSON file)")
	}
	k, err := parseKs(*ks)
	if err != nil {
		return err
	}
	scopeList, err := parseScopes(*scopes)
	if err != nil {
		return err
	}
	samples, err := locomo.ReadFile(*data)
	if err != nil {
		return err
	}

	if !(*vw >= 0 && *vw <= 100) {
		return fmt.Errorf("eval locomo: --vector-weight must be between 0 (serve's) and 100, not %v", *vw)
	}
	searchers := []string{*searcherName}
	if *searcherName == "all" {
		if *db != "" {
			return errors.New("eval locomo: --searcher all runs each searcher on a database of its own: leave out --db")
		}
		searchers = []string{"fulltext", "vector", "hybrid"}
	}
	var dir string
	if *db == "" {
		if dir, err = os.MkdirTemp("", "agentmem-eval-"); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	}
	var reps []*locomo.Report
	p := newProgress(stderr)
	defer p.Done()
	for _, name := range searchers {
		c := cfg
		if *db != "" {
			c.DB = *db
		} else {
			// A throw-away database needs no fsync per commit.
			c.DB, c.Synchronous = "sqlite:"+filepath.Join(dir, "locomo-"+name+".db"), "NORMAL"
		}
		label := "eval locomo"
		if len(searchers) > 1 {
			fmt.Fprintf(p, "eval locomo: %s…\n", name)
			label += " (" + name + ")"
		}
		progress := func(stage string, done, total int) { p.Update("%s: %d/%d %s", label, done, total, stage) }
		rep, err := evalLocomo(ctx, c, getenv, &a, name, scopeList, samples, k, progress)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	p.Done()
	if len(reps) > 1 {
		if *asJSON {
			for _, r := range reps {
				r.Questions = nil
			}
			return printJSON(stdout, reps)
		}
		return locomo.WriteComparison(stdout, reps)
	}
	rep := reps[0]
	if !*asJSON {
		return rep.WriteText(stdout)
	}
	if !*perQuestion {
		rep.Questions = nil
	}
	return printJSON(stdout, rep)
}

// evalLocomo runs the evaluation once, with one searcher, on the database
// of cfg, telling progress how far it is (locomo.Options.Progress).
func evalLocomo(ctx context.Context, cfg Config, getenv func(string) string, a *evalArgs, searcherName string, scopeList []string,
	samples []*locomo.Sample, k []int, progress func(stage string, done, total int)) (_ *locomo.Report, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	var embs *app.Embedders
	if searcherName != "bm25" {
		ac, err := cfg.app(getenv, nil)
		if err != nil {
			return nil, err
		}
		ac.Embedder = *a.embedder
		if embs, err = app.NewEmbedders(ctx, ac); err != nil {
			return nil, fmt.Errorf("eval locomo: %w", err)
		}
		if *a.vw != 0 { // both spaces' vectors weigh as told
			embs.VectorWeight, embs.BulkVectorWeight = *a.vw, *a.vw
		}
	}
	indexer, searcher, name, err := evalSearcher(store, embs, searcherName, scopeList)
	if err != nil {
		return nil, err
	}
	rep, err := locomo.Run(ctx, store, indexer, searcher, samples, locomo.Options{K: k, Tokens: tokens.Default(), Searcher: name, Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("eval locomo: %w", err)
	}
	return rep, nil
}

// evalSearcher returns what the evaluation indexes and searches with: the
// hybrid searcher of package retrieve (or one of its signals alone) over
// what package index makes of each conversation with embs (serve's
// embedders for the --embedder), or the BM25 baseline over messages.
func evalSearcher(store agentmem.Store, embs *app.Embedders, name string, scopes []string) (locomo.Indexer, locomo.Searcher, string, error) {
	switch name {
	case "bm25":
		if !slices.Equal(scopes, []string{agentmem.ScopeMessages}) {
			return nil, nil, "", fmt.Errorf("eval locomo: the BM25 baseline searches messages only, not %s", strings.Join(scopes, ","))
		}
		bm25 := locomo.NewBM25Searcher(store)
		return bm25, bm25, "bm25 baseline over messages (lower-cased words, k1 1.2, b 0.75)", nil
	case "hybrid", "fulltext", "vector":
	default:
		return nil, nil, "", fmt.Errorf("eval locomo: --searcher must be hybrid, fulltext, vector or bm25, not %q", name)
	}
	// As serve without a model: the rules weighed by the learned
	// classifiers, which also name a query's intent.
	lrn, err := app.Learned()
	if err != nil {
		return nil, nil, "", err
	}
	ix := &index.Indexer{Store: store, Emb: embs.Emb, Space: embs.Space, Bulk: embs.Bulk, Summarize: (&window.Summarizer{}).SummarizeChunk,
		Extractor: extract.HeuristicExtractor{Learned: lrn}}
	opt := embs.SearchOptions()
	opt.Intent = lrn.Intent
	opt.OwnNames = func(ctx context.Context, userID string) ([]string, error) {
		return extract.OwnNames(ctx, store, userID)
	}
	s := &retrieveSearcher{s: retrieve.New(store, embs.Queries, embs.Space, opt), scopes: scopes}
	if name != "hybrid" {
		s.signals = []string{name}
	}
	spaces := embs.Space
	if embs.Bulk != nil {
		spaces += ", messages and chunks " + embs.Bulk.Space
	}
	desc := fmt.Sprintf("%s over %s (embedder %s)", name, strings.Join(scopes, ", "), spaces)
	if name == "hybrid" {
		desc += fmt.Sprintf(", vector weight %g", embs.VectorWeight)
		if embs.Bulk != nil {
			desc += fmt.Sprintf(" (messages and chunks %g)", embs.BulkVectorWeight)
		}
	}
	return indexConversation(store, ix), s, desc, nil
}

// indexConversation indexes a stored conversation as serve's jobs would
// once its sessions are over: each thread ended (its last turns make a
// chunk), its messages indexed, and an extractive summary of each written
// and embedded (scope summaries).
func indexConversation(store agentmem.Store, ix *index.Indexer) indexerFunc {
	return func(ctx context.Context, userID string) error {
		var threads []*agentmem.Thread
		for f := (agentmem.ThreadFilter{Limit: agentmem.MaxPageSize}); ; {
			page, next, err := store.FindThreads(ctx, userID, f)
			if err != nil {
				return err
			}
			threads = append(threads, page...)
			if f.Cursor = next; next == "" {
				break
			}
		}
		for _, t := range threads {
			if _, err := store.EndThread(ctx, userID, t.ID); err != nil {
				return err
			}
		}
		if err := ix.IndexUser(ctx, userID); err != nil {
			return err
		}
		for _, t := range threads {
			msgs, _, err := store.FindMessages(ctx, userID, t.ID, agentmem.MessageFilter{Limit: agentmem.MaxPageSize})
			if err != nil || len(msgs) == 0 {
				return err
			}
			sum, err := store.PutSummary(ctx, &agentmem.Summary{UserID: userID, ThreadID: t.ID, ThroughSeq: msgs[len(msgs)-1].Seq,
				Text: window.Extractive("", msgs, 150), Method: agentmem.SummaryExtractive})
			if err != nil {
				return err
			}
			if err := ix.EmbedSummary(ctx, sum); err != nil {
				return err
			}
		}
		return nil
	}
}

// indexerFunc adapts a function to locomo.Indexer.
type indexerFunc func(ctx context.Context, userID string) error

func (f indexerFunc) Index(ctx context.Context, userID string) error { return f(ctx, userID) }

// retrieveSearcher adapts retrieve.Searcher to locomo.Searcher.
type retrieveSearcher struct {
	s       *retrieve.Searcher
	scopes  []string
	signals []string
}

func (r *retrieveSearcher) Search(ctx context.Context, userID, query string, topK int) ([]locomo.Hit, error) {
	resp, err := r.s.Search(ctx, userID, retrieve.Request{Query: query, Scopes: r.scopes, TopK: min(topK, retrieve.MaxTopK), Signals: r.signals})
	if agentmem.ErrorCode(err) == agentmem.EINVALID && strings.TrimSpace(query) == "" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	hits := make([]locomo.Hit, len(resp.Results))
	for i, res := range resp.Results {
		scope := map[string]string{"memory": agentmem.ScopeMemories, "chunk": agentmem.ScopeChunks, "summary": agentmem.ScopeSummaries}[res.Kind]
		if scope == "" {
			scope = agentmem.ScopeMessages
		}
		hits[i] = locomo.Hit{Scope: scope, ThreadID: res.ThreadID, SeqFrom: res.SeqFrom, SeqTo: res.SeqTo, Text: res.Text, Score: res.Score}
	}
	return hits, nil
}

// parseKs reads --k: positive integers, comma-separated.
func parseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 1000 {
			return nil, fmt.Errorf("--k: %q is not a number from 1 to 1000", f)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// parseScopes reads --scopes: known scope names, comma-separated.
func parseScopes(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); f {
		case agentmem.ScopeMessages, agentmem.ScopeChunks, agentmem.ScopeSummaries, agentmem.ScopeMemories:
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		default:
			return nil, fmt.Errorf("--scopes: %q is not messages, chunks, summaries or memories", f)
		}
	}
	return out, nil
}
