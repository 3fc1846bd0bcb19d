package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// apiKeyEnv holds the API key of `agentmem mcp --url` when --api-key does
// not give it: a secret, so a variable and not a setting.
const apiKeyEnv = "AGENTMEM_API_KEY"

type mcpArgs struct {
	user, agent, url, apiKey string
}

func (a *mcpArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.user, "user", "", "the user whose memory the tools reach (required)")
	fs.StringVar(&a.agent, "agent", agentmem.DefaultAgent, "the agent whose notes and session the tools use")
	fs.StringVar(&a.url, "url", "", "a running agentmem server to reach (http://127.0.0.1:8080) instead of opening --db")
	fs.StringVar(&a.apiKey, "api-key", "", "the server's API key for --url (default: "+apiKeyEnv+")")
}

// runMCP serves the MCP tools of one user over standard input and output,
// for an MCP host that starts agentmem as its server: on the database
// (--db, with the workers that index and reflect running in this
// process), or on a running server (--url). Logs go to stderr: stdout is
// the protocol's.
func runMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	var a mcpArgs
	cfg, fs, err := parseCommand("mcp", args, getenv, stderr, &a)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("mcp: unexpected argument %q", fs.Arg(0))
	case a.user == "":
		return errors.New("mcp: --user is required: the user whose memory the tools reach")
	}
	log := newLogger(stderr, cfg.LogLevel)
	var svc agentmem.Service
	if a.url != "" {
		if !isHTTPURL(a.url) {
			return fmt.Errorf("mcp: --url must be an http(s) URL such as http://127.0.0.1:8080, not %q", a.url)
		}
		c := client.New(a.url, nil)
		c.APIKey = cmp.Or(a.apiKey, getenv(apiKeyEnv))
		if err := checkServer(ctx, c, a.url, a.user); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		svc = c
	} else {
		acfg, err := cfg.app(getenv, log)
		if err != nil {
			return err
		}
		mem, err := app.Open(ctx, acfg)
		if err != nil {
			return err
		}
		defer mem.Close()
		svc = mem.Service
		if _, _, err := svc.FindThreads(ctx, a.user, agentmem.ThreadFilter{Limit: 1}); err != nil {
			return fmt.Errorf("mcp: --user %q: %s", a.user, agentmem.ErrorMessage(err))
		}
	}
	srv := mcp.NewServer(svc, mcp.Options{
		User:    a.user,
		Agent:   a.agent,
		Version: version(),
		Log:     log,
	})
	err = srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// checkTimeout bounds the call that checks a server at start.
const checkTimeout = 30 * time.Second

// checkServer proves, with one authenticated call (the user's threads,
// one), that the server at url answers and that c's key reaches user:
// otherwise every tool call would fail, each with the same error, in an
// MCP host that shows none of them until a tool is used.
func checkServer(ctx context.Context, c *client.Client, url, user string) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, _, err := c.FindThreads(ctx, user, agentmem.ThreadFilter{Limit: 1})
	switch code := agentmem.ErrorCode(err); {
	case err == nil:
		return nil
	case code == agentmem.EUNAUTHORIZED && c.APIKey == "":
		return fmt.Errorf("the server at %s needs an API key: give --api-key or %s (%s)", url, apiKeyEnv, agentmem.ErrorMessage(err))
	case code == agentmem.EUNAUTHORIZED:
		return fmt.Errorf("the server at %s refused the API key (--api-key or %s): %s", url, apiKeyEnv, agentmem.ErrorMessage(err))
	case code == agentmem.ENOTFOUND || code == agentmem.EFORBIDDEN:
		return fmt.Errorf("the API key does not reach user %q on %s (a user's key reaches that user alone; a tenant's, its users): %s", user, url, agentmem.ErrorMessage(err))
	case code == agentmem.EINVALID:
		return fmt.Errorf("--user %q: %s", user, agentmem.ErrorMessage(err))
	case code == agentmem.EUNAVAILABLE || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cannot reach the server at %s: %v", url, err)
	}
	return fmt.Errorf("the server at %s: %v", url, err)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
