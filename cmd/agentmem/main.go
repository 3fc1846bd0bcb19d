// Command agentmem is the agentmem memory service and its operator tools.
//
//	agentmem serve    [--addr 127.0.0.1:8080] [--db sqlite:./agentmem.db | postgres://…] [--config agentmem.json]
//	agentmem migrate  [--db …]
//	agentmem export   --user ID [--thread ID] [--format json|markdown] [--out FILE] [--db …]
//	agentmem import   --user ID [--db …] FILE
//	agentmem cleanup  --older-than 30d [--dry-run] [--db …]
//	agentmem backup   --out FILE [--db …]  (SQLite, online; PostgreSQL: pg_dump)
//	agentmem keys     create --scope admin|user:ID|tenant:ID [--expires 90d] | list | revoke ID
//	agentmem eval     locomo --data FILE [--k 1,5,10] [--json] [--searcher hybrid|fulltext|vector|bm25|all] [--embedder builtin|lexical|openai] [--scopes messages,chunks,summaries,memories] [--vector-weight 0.1] [--db …]
//	agentmem eval     extraction [--data FILE] [--json]
//	agentmem demo     [--db FILE]  (three scenarios through the API: recall, reflection, compression; with or without a model)
//	agentmem version
//
// Settings come from flags, AGENTMEM_* variables and a JSON config file
// (config.go); "agentmem COMMAND -h" lists a command's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentmem:", err)
		os.Exit(1)
	}
}

// commands are the subcommands with flags, in the order of the usage.
var commands = []command{
	{name: "serve", in: inServe | inApp, synopsis: "[--addr 127.0.0.1:8080] [--db sqlite:./agentmem.db | postgres://…] [--auth none|apikey|header] [--config agentmem.json]"},
	{name: "migrate", in: inAdmin, synopsis: "[--db …]"},
	{name: "export", in: inAdmin, synopsis: "--user ID [--thread ID] [--format json|markdown] [--out FILE] [--db …]", args: func() arguments { return new(exportArgs) }},
	{name: "import", in: inAdmin, synopsis: "--user ID [--on-conflict fail|skip|replace] [--db …] FILE", args: func() arguments { return new(importArgs) }},
	{name: "cleanup", in: inAdmin, synopsis: "--older-than 30d [--dry-run] [--db …]", args: func() arguments { return new(cleanupArgs) }},
	{name: "backup", in: inAdmin, synopsis: "--out FILE [--db …]  (an online copy of the SQLite database; PostgreSQL: pg_dump)", args: func() arguments { return new(backupArgs) }},
	{name: "keys create", in: inAdmin, synopsis: "--scope admin|user:ID|tenant:ID|tenant:ID/user:ID [--name TEXT] [--expires 90d] [--db …]", args: func() arguments { return new(keysCreateArgs) }},
	{name: "keys list", in: inAdmin, synopsis: "[--tenant ID] [--db …]", args: func() arguments { return new(keysListArgs) }},
	{name: "keys revoke", in: inAdmin, synopsis: "[--db …] KEY_ID"},
	{name: "eval locomo", synopsis: "--data FILE [--k 1,5,10] [--json] [--searcher hybrid|fulltext|vector|bm25|all] [--embedder builtin|lexical|openai] [--scopes messages,chunks,summaries,memories] [--vector-weight 0.1] [--db …]", args: func() arguments { return new(evalArgs) }},
	{name: "eval memory", synopsis: "--data DIR [--json] [--wait 5m] [--db …]  (memories, changes of fact, search and contexts over labelled multi-session conversations, without a model)", args: func() arguments { return new(evalMemoryArgs) }},
	{name: "eval extraction", synopsis: "[--data FILE] [--json]  (memories drawn from first-person statements, without a model)", args: func() arguments { return new(evalExtractionArgs) }},
	{name: "search", in: inApp, synopsis: "--user ID [--scopes memories,messages | --kinds insights,chunks] [--top-k 10] [--json] [--db … | --url http://…] QUERY", args: func() arguments { return new(searchArgs) }},
	{name: "context", in: inApp, synopsis: "--user ID --thread ID [--budget N] [--format text|messages|responses] [--json] [--db … | --url http://…] [INPUT]", args: func() arguments { return new(contextArgs) }},
	{name: "memories", in: inApp, synopsis: "--user ID [--limit 50] [--json] [--db … | --url http://…]", args: func() arguments { return new(memoriesArgs) }},
	{name: "mcp", in: inApp, synopsis: "--user ID [--agent ID] [--db … | --url http://… [--api-key KEY]]  (the MCP tools over stdin/stdout, for an MCP host)", args: func() arguments { return new(mcpArgs) }},
	{name: "demo", synopsis: "[--db FILE]  (three scenarios through the API: recall, reflection, compression; with or without a model)", args: func() arguments { return new(demoArgs) }},
}

// usage lists the commands whose names start with prefix ("" for all).
func usage(prefix string) string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	for _, c := range commands {
		if strings.HasPrefix(c.name, prefix) {
			fmt.Fprintf(&b, "  agentmem %-12s %s\n", c.name, c.synopsis)
		}
	}
	if prefix == "" {
		b.WriteString("  agentmem version\n")
	}
	return b.String()
}

const about = `agentmem gives LLM agents a memory.

`

const settingsHelp = `
Settings (flags such as --db) can also be given by their AGENTMEM_*
environment variables (--db is AGENTMEM_DB, --rate-limit is
AGENTMEM_RATE_LIMIT, …) or in a JSON config file (--config FILE or
AGENTMEM_CONFIG) by name: {"db": "postgres://…", "rate-limit": 50}.
A flag wins over its variable, which wins over the config file.
Run "agentmem COMMAND -h" for a command's flags.
`

// run is the whole program; main only supplies the process's
// environment. Help (-h) is success; errors read as an operator reads
// them (cliError).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := runCommand(ctx, args, getenv, stdin, stdout, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return cliError{err}
}

func runCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, about+usage("")+settingsHelp)
		return errors.New("no command given")
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, args, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args, getenv, stdout, stderr)
	case "export":
		return runExport(ctx, args, getenv, stdout, stderr)
	case "import":
		return runImport(ctx, args, getenv, stdin, stdout, stderr)
	case "cleanup":
		return runCleanup(ctx, args, getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, args, getenv, stdout, stderr)
	case "keys":
		return runKeys(ctx, args, getenv, stdout, stderr)
	case "eval":
		return runEval(ctx, args, getenv, stdout, stderr)
	case "demo":
		return runDemo(ctx, args, getenv, stdout, stderr)
	case "mcp":
		return runMCP(ctx, args, getenv, stdin, stdout, stderr)
	case "search":
		return runSearch(ctx, args, getenv, stdout, stderr)
	case "context":
		return runContext(ctx, args, getenv, stdout, stderr)
	case "memories":
		return runMemories(ctx, args, getenv, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "agentmem", version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, about+usage("")+settingsHelp)
		return nil
	}
	fmt.Fprint(stderr, usage(""))
	return fmt.Errorf("unknown command %q", cmd)
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}
