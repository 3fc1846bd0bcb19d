// Command agentmem is the agentmem memory service and its operator tools.
//
//	agentmem serve    [--addr 127.0.0.1:8080] [--db sqlite:./agentmem.db | postgres://…]
//	agentmem migrate  [--db …]
//	agentmem export   --user ID [--thread ID] [--format json|markdown] [--out FILE] [--db …]
//	agentmem import   --user ID [--db …] FILE
//	agentmem cleanup  --older-than 30d [--dry-run] [--db …]
//	agentmem keys     create --scope admin|user:ID|tenant:ID [--expires 90d] | list | revoke ID
//	agentmem eval     locomo --data FILE [--k 1,5,10] [--json] [--searcher hybrid|fulltext|vector|bm25] [--scopes messages,chunks,summaries,memories] [--vector-weight 0.1] [--db …]
//	agentmem demo     [--db FILE]  (seed 001's scenarios through the API, with or without a model)
//	agentmem version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "agentmem:", err)
		}
		os.Exit(1)
	}
}

const usage = `agentmem gives LLM agents a memory.

Usage:
  agentmem serve    [--addr 127.0.0.1:8080] [--db sqlite:./agentmem.db | postgres://…] [--auth none|apikey|header]
  agentmem migrate  [--db …]
  agentmem export   --user ID [--thread ID] [--format json|markdown] [--out FILE] [--db …]
  agentmem import   --user ID [--db …] FILE
  agentmem cleanup  --older-than 30d [--dry-run] [--db …]
  agentmem keys     create --scope admin|user:ID|tenant:ID [--expires 90d] | list | revoke ID
  agentmem eval     locomo --data FILE [--k 1,5,10] [--json] [--searcher hybrid|fulltext|vector|bm25] [--scopes messages,chunks,summaries,memories] [--vector-weight 0.1] [--db …]
  agentmem demo     [--db FILE]  (seed 001's scenarios through the API, with or without a model)
  agentmem version

Every flag can also be set by its AGENTMEM_* environment variable
(--db is AGENTMEM_DB, --addr is AGENTMEM_ADDR, …). Run
"agentmem COMMAND -h" for a command's flags.
`

// run is the whole program; main only supplies the process's environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
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
	case "keys":
		return runKeys(ctx, args, getenv, stdout, stderr)
	case "eval":
		return runEval(ctx, args, getenv, stdout, stderr)
	case "demo":
		return runDemo(ctx, args, getenv, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "agentmem", version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
