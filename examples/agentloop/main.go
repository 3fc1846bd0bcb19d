// Command agentloop is agentmem in library mode: an agent loop that keeps
// its memory in process. For each line read from standard input it asks
// agentmem for the context (seed 001's "before" hook), calls an
// OpenAI-compatible model with it (OPENAI_API_KEY, OPENAI_BASE_URL,
// AGENTMEM_LLM_MODEL) or, with none configured, prints the context the
// model would get, and records the turn ("after").
//
//	go run ./examples/agentloop --db sqlite:./agent.db --user alice
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/llm/openai"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	db := fs.String("db", "sqlite:./agentloop.db", "database: sqlite:PATH or postgres://…")
	user := fs.String("user", "local-user", "whose memory")
	thread := fs.String("thread", "main", "the conversation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mem, err := app.Open(ctx, app.Config{DB: *db, Getenv: getenv, LLMModel: getenv("AGENTMEM_LLM_MODEL")})
	if err != nil {
		return err
	}
	defer mem.Close()

	var model *openai.Client
	if oc := openai.ConfigFromEnv(getenv); openai.Configured(oc) {
		if m := getenv("AGENTMEM_LLM_MODEL"); m != "" {
			oc.Model = m
		}
		if model, err = openai.New(oc); err != nil {
			return err
		}
	}
	in := bufio.NewScanner(stdin)
	for in.Scan() {
		input := strings.TrimSpace(in.Text())
		if input == "" {
			continue
		}
		c, err := mem.Before(ctx, *user, *thread, input, agentmem.ContextRequest{
			System: "You are a helpful assistant with a long memory.", BudgetTokens: 8000})
		if err != nil {
			return err
		}
		var reply *agentmem.Message
		if model == nil {
			fmt.Fprintf(stdout, "(no model configured: the context a model would get, %d tokens)\n", c.Telemetry.UsedTokens)
			for _, m := range c.Messages {
				fmt.Fprintf(stdout, "  [%s] %s\n", m.Role, m.Content)
			}
		} else {
			resp, err := model.Complete(ctx, agentmem.ChatRequest{Messages: c.Messages})
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, resp.Content)
			reply = &agentmem.Message{Role: agentmem.RoleAssistant, Content: resp.Content}
		}
		if err := mem.After(ctx, *user, *thread, input, reply); err != nil {
			return err
		}
	}
	return in.Err()
}
