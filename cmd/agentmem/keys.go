package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
)

const keysUsage = `Usage:
  agentmem keys create --scope admin|user:ID|tenant:ID|tenant:ID/user:ID [--name TEXT] [--expires 90d|never] [--db …]
  agentmem keys list   [--tenant ID] [--db …]
  agentmem keys revoke [--db …] KEY_ID
`

// runKeys manages API keys directly in the store, for the operator who
// bootstraps a server (the first admin key cannot come over the API).
// Every change is recorded in the audit log with the actor "cli".
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return errors.New("keys: no subcommand given")
	}
	cfg := defaults()
	fs := flag.NewFlagSet("keys "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbFlags(fs, &cfg, getenv)
	switch args[0] {
	case "create":
		scope := fs.String("scope", "", "admin, user:ID, tenant:ID or tenant:ID/user:ID (required)")
		name := fs.String("name", "", "a label to recognise the key by")
		expires := fs.String("expires", "", "lifetime, e.g. 90d or 12h, or never (the default)")
		if err := cfg.parse(fs, args[1:], getenv); err != nil {
			return err
		}
		if _, err := agentmem.ParseKeyLifetime("--expires", *expires); err != nil {
			return errors.New(agentmem.ErrorMessage(err)) // core would name the API's field, expires_in
		}
		return withService(ctx, cfg, func(ctx context.Context, svc *core.Service) error {
			k, err := svc.CreateKey(ctx, agentmem.KeyInput{Scope: *scope, Name: *name, ExpiresIn: *expires})
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, k.Token)
			fmt.Fprintf(stderr, "created key %s (%s); the token above is shown once and cannot be retrieved again\n", k.Key.ID, k.Key.Scope)
			return nil
		})
	case "list":
		tenant := fs.String("tenant", "", "only keys of this tenant")
		if err := cfg.parse(fs, args[1:], getenv); err != nil {
			return err
		}
		return withService(ctx, cfg, func(ctx context.Context, svc *core.Service) error {
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSCOPE\tNAME\tCREATED\tEXPIRES\tREVOKED")
			f := agentmem.KeyFilter{Limit: agentmem.MaxPageSize}
			if *tenant != "" {
				f.TenantID = tenant
			}
			for {
				keys, next, err := svc.FindKeys(ctx, f)
				if err != nil {
					return err
				}
				for _, k := range keys {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Scope, k.Name, k.CreatedAt.Format(time.RFC3339), timeOrDash(k.ExpiresAt), timeOrDash(k.RevokedAt))
				}
				if f.Cursor = next; next == "" {
					return tw.Flush()
				}
			}
		})
	case "revoke":
		if err := cfg.parse(fs, args[1:], getenv); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("keys revoke: give the ID of the key to revoke (see keys list)")
		}
		return withService(ctx, cfg, func(ctx context.Context, svc *core.Service) error {
			k, err := svc.RevokeKey(ctx, fs.Arg(0))
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked key %s (%s)\n", k.ID, k.Scope)
			return nil
		})
	}
	fmt.Fprint(stderr, keysUsage)
	return fmt.Errorf("keys: unknown subcommand %q", args[0])
}

// timeOrDash formats an optional time for the key list.
func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
