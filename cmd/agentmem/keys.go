package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/agentmem/agentmem"
)

const keysUsage = `Usage:
  agentmem keys create --scope admin|user:ID|tenant:ID|tenant:ID/user:ID [--name TEXT] [--expires 90d] [--db …]
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
	ctx = agentmem.NewContextWithIdentity(ctx, &agentmem.Identity{Via: "cli", Scope: agentmem.Scope{Kind: agentmem.ScopeAdmin}})
	switch args[0] {
	case "create":
		scope := fs.String("scope", "", "admin, user:ID, tenant:ID or tenant:ID/user:ID (required)")
		name := fs.String("name", "", "a label to recognise the key by")
		expires := fs.String("expires", "", "lifetime, e.g. 90d or 12h (default: never expires)")
		if err := cfg.parse(fs, args[1:], getenv); err != nil {
			return err
		}
		sc, err := agentmem.ParseScope(*scope)
		if err != nil {
			return errors.New(agentmem.ErrorMessage(err))
		}
		var ttl time.Duration
		if *expires != "" {
			if ttl, err = agentmem.ParseAge("--expires", *expires); err != nil {
				return errors.New(agentmem.ErrorMessage(err))
			}
		}
		token, k, err := agentmem.NewAPIKey(sc, *name, time.Now(), ttl)
		if err != nil {
			return errors.New(agentmem.ErrorMessage(err))
		}
		k.CreatedBy = "cli"
		return withStore(ctx, cfg, func(store agentmem.Store) error {
			if err := store.CreateKey(ctx, k); err != nil {
				return err
			}
			detail, _ := json.Marshal(map[string]string{"scope": sc.String(), "name": *name})
			if err := store.CreateAuditEvent(ctx, &agentmem.AuditEvent{Actor: "cli", Action: agentmem.AuditKeyCreate,
				TenantID: sc.TenantID, UserID: sc.UserID, Target: k.ID, Detail: detail}); err != nil {
				return err
			}
			fmt.Fprintln(stdout, token)
			fmt.Fprintf(stderr, "created key %s (%s); the token above is shown once and cannot be retrieved again\n", k.ID, sc)
			return nil
		})
	case "list":
		tenant := fs.String("tenant", "", "only keys of this tenant")
		if err := cfg.parse(fs, args[1:], getenv); err != nil {
			return err
		}
		return withStore(ctx, cfg, func(store agentmem.Store) error {
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSCOPE\tNAME\tCREATED\tEXPIRES\tREVOKED")
			f := agentmem.KeyFilter{Limit: agentmem.MaxPageSize}
			if *tenant != "" {
				f.TenantID = tenant
			}
			for {
				keys, next, err := store.FindKeys(ctx, f)
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
		return withStore(ctx, cfg, func(store agentmem.Store) error {
			k, err := store.RevokeKey(ctx, fs.Arg(0))
			if err != nil {
				return err
			}
			if err := store.CreateAuditEvent(ctx, &agentmem.AuditEvent{Actor: "cli", Action: agentmem.AuditKeyRevoke,
				TenantID: k.Scope.TenantID, UserID: k.Scope.UserID, Target: k.ID}); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked key %s (%s)\n", k.ID, k.Scope)
			return nil
		})
	}
	fmt.Fprint(stderr, keysUsage)
	return fmt.Errorf("keys: unknown subcommand %q", args[0])
}

// withStore opens the store of cfg, runs fn, and closes it. A store error
// with a client-safe message is shown as that message.
func withStore(ctx context.Context, cfg Config, fn func(agentmem.Store) error) error {
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	err = fn(store)
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	var e *agentmem.Error
	if errors.As(err, &e) {
		return errors.New(e.Message)
	}
	return err
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
