package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/client"
)

// target says where the query commands read: the database of --db (as
// serve would, with its embedder and context settings), or a running
// server (--url).
type target struct {
	user, url, apiKey string
	json              bool
}

func (a *target) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.user, "user", "", "the user (required)")
	fs.StringVar(&a.url, "url", "", "a running agentmem server (http://127.0.0.1:8080) instead of opening --db")
	fs.StringVar(&a.apiKey, "api-key", "", "the server's API key for --url (default: "+apiKeyEnv+")")
	fs.BoolVar(&a.json, "json", false, "print JSON, for scripts, instead of a table")
}

// with runs fn on the service of the target: of a database that exists,
// and a user it has (a mistaken name is an error, not an empty answer).
func (a *target) with(ctx context.Context, cfg Config, getenv func(string) string, stderr io.Writer, fn func(context.Context, agentmem.Service) error) error {
	if a.user == "" {
		return errors.New("--user is required")
	}
	if a.url != "" {
		if !isHTTPURL(a.url) {
			return fmt.Errorf("--url must be an http(s) URL such as http://127.0.0.1:8080, not %q", a.url)
		}
		c := client.New(a.url, nil)
		c.APIKey = cmp.Or(a.apiKey, getenv(apiKeyEnv))
		return fn(ctx, c)
	}
	if err := cfg.checkDBExists(); err != nil {
		return err
	}
	acfg, err := cfg.app(getenv, newLogger(stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	mem, err := app.New(ctx, acfg)
	if err != nil {
		return err
	}
	ctx = cliContext(ctx)
	err = checkUser(ctx, mem.Service, cfg, a.user)
	if err == nil {
		err = fn(ctx, mem.Service)
	}
	if cerr := mem.Close(); err == nil {
		err = cerr
	}
	return err
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// clip shortens s to n runes on one line, for a table cell.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

type searchArgs struct {
	target
	scopes, kinds string
	topK          int
}

func (a *searchArgs) flags(fs *flag.FlagSet) {
	a.target.flags(fs)
	fs.StringVar(&a.scopes, "scopes", "", "comma-separated: memories, messages, chunks, summaries (default: memories and messages)")
	fs.StringVar(&a.kinds, "kinds", "", "instead of --scopes, comma-separated kinds: memories (facts), insights, messages, chunks, summaries")
	fs.IntVar(&a.topK, "top-k", agentmem.DefaultTopK, "how many results")
}

// runSearch prints what hybrid search finds of a user for a query.
func runSearch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var a searchArgs
	cfg, fs, err := parseCommand("search", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	query := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(query) == "" {
		return errors.New(`search: give the query: agentmem search --user alice "what does she eat?"`)
	}
	req := agentmem.SearchRequest{Query: query, TopK: a.topK}
	if a.scopes != "" {
		req.Scopes = splitList(a.scopes)
	}
	if a.kinds != "" {
		req.Kinds = splitList(a.kinds)
	}
	return a.with(ctx, cfg, getenv, stderr, func(ctx context.Context, svc agentmem.Service) error {
		res, err := svc.Search(ctx, a.user, req)
		if err != nil {
			return err
		}
		if a.json {
			return printJSON(stdout, res)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SCORE\tKIND\tTHREAD\tTEXT")
		for _, r := range res.Results {
			fmt.Fprintf(tw, "%.3f\t%s\t%s\t%s\n", r.Score, r.Kind, r.ThreadID, clip(r.Text, 90))
		}
		if len(res.Results) == 0 {
			fmt.Fprintln(tw, "-\t-\t-\tnothing found")
		}
		for _, w := range res.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		return tw.Flush()
	})
}

type contextArgs struct {
	target
	thread, model, format string
	budget                int
}

func (a *contextArgs) flags(fs *flag.FlagSet) {
	a.target.flags(fs)
	fs.StringVar(&a.thread, "thread", "", "the thread (required)")
	fs.IntVar(&a.budget, "budget", 0, "the token budget (default: the server's)")
	fs.StringVar(&a.model, "model", "", "the model whose tokenizer counts (default: the server's)")
	fs.StringVar(&a.format, "format", agentmem.FormatText, "messages, responses or text")
}

// runContext prints the context a model would get for a thread and an
// input, and its telemetry.
func runContext(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var a contextArgs
	cfg, fs, err := parseCommand("context", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	if a.thread == "" {
		return errors.New("context: --thread is required")
	}
	req := agentmem.ContextRequest{Input: strings.Join(fs.Args(), " "), BudgetTokens: a.budget, Model: a.model, Format: a.format}
	return a.with(ctx, cfg, getenv, stderr, func(ctx context.Context, svc agentmem.Service) error {
		c, err := svc.BuildContext(ctx, a.user, a.thread, req)
		if err != nil {
			return err
		}
		if a.json {
			return printJSON(stdout, c)
		}
		switch c.Format {
		case agentmem.FormatText:
			fmt.Fprintln(stdout, c.Text)
		case agentmem.FormatResponses:
			fmt.Fprintf(stdout, "instructions:\n%s\n\ninput:\n%s\n", c.Instructions, c.Input)
		default:
			for _, m := range c.Messages {
				fmt.Fprintf(stdout, "[%s] %s\n", m.Role, m.Content)
			}
		}
		t := c.Telemetry
		fmt.Fprintf(stdout, "\n— %d of %d tokens (%.0f%%), %s, %s; %d messages in, %d left out", t.UsedTokens, t.BudgetTokens, 100*t.Fraction,
			t.Model, t.Strategy, t.IncludedMessages, t.OmittedMessages)
		if t.SummaryBehind {
			fmt.Fprint(stdout, "; the summary is behind")
		}
		fmt.Fprintln(stdout)
		for _, w := range t.Warnings {
			fmt.Fprintln(stdout, "— warning:", w)
		}
		return nil
	})
}

type memoriesArgs struct {
	target
	limit int
}

func (a *memoriesArgs) flags(fs *flag.FlagSet) {
	a.target.flags(fs)
	fs.IntVar(&a.limit, "limit", 50, "how many, newest first")
}

// runMemories lists a user's memories.
func runMemories(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var a memoriesArgs
	cfg, fs, err := parseCommand("memories", args, getenv, stdout, &a)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("memories: unexpected argument %q", fs.Arg(0))
	}
	return a.with(ctx, cfg, getenv, stderr, func(ctx context.Context, svc agentmem.Service) error {
		ms, _, err := svc.FindMemories(ctx, a.user, agentmem.MemoryFilter{Limit: a.limit})
		if err != nil {
			return err
		}
		if a.json {
			return printJSON(stdout, ms)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tCATEGORY\tTEXT")
		for _, m := range ms {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.ID, m.Kind, m.Category, clip(m.Text, 90))
		}
		if len(ms) == 0 {
			fmt.Fprintln(tw, "-\t-\t-\tno memories")
		}
		return tw.Flush()
	})
}
