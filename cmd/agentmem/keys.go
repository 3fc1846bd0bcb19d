package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/core"
)

// keysCreateArgs are the arguments of keys create.
type keysCreateArgs struct {
	scope, name, expires string
}

func (a *keysCreateArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.scope, "scope", "", "admin, user:ID, tenant:ID or tenant:ID/user:ID (required)")
	fs.StringVar(&a.name, "name", "", "a label to recognise the key by")
	fs.StringVar(&a.expires, "expires", "", "lifetime, e.g. 90d, 2w or 12h, or never (the default)")
}

// keysListArgs are the arguments of keys list.
type keysListArgs struct{ tenant string }

func (a *keysListArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.tenant, "tenant", "", "only keys of this tenant")
}

// runKeys manages API keys directly in the store, for the operator who
// bootstraps a server (the first admin key cannot come over the API).
// Every change is recorded in the audit log with the actor "cli".
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, usage("keys "))
		return errors.New("keys: no subcommand given")
	case isHelp(args[0]):
		fmt.Fprint(stdout, usage("keys "))
		return nil
	case strings.HasPrefix(args[0], "-"):
		fmt.Fprint(stderr, usage("keys "))
		return fmt.Errorf("keys: name the subcommand (create, list or revoke) before its flags, e.g. agentmem keys list %s", strings.Join(args, " "))
	}
	switch args[0] {
	case "create":
		var a keysCreateArgs
		cfg, fs, err := parseCommand("keys create", args[1:], getenv, stdout, &a)
		if err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("keys create: unexpected argument %q", fs.Arg(0))
		}
		if _, err := agentmem.ParseKeyLifetime("--expires", a.expires); err != nil {
			return errors.New(agentmem.ErrorMessage(err)) // core would name the API's field, expires_in
		}
		in := agentmem.KeyInput{Scope: a.scope, Name: a.name, ExpiresIn: a.expires}
		return withService(ctx, cfg, func(ctx context.Context, svc *core.Service) error {
			k, err := svc.CreateKey(ctx, in)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, k.Token)
			fmt.Fprintf(stderr, "created key %s (%s); the token above is shown once and cannot be retrieved again\n", k.Key.ID, k.Key.Scope)
			return nil
		})
	case "list":
		var a keysListArgs
		cfg, fs, err := parseCommand("keys list", args[1:], getenv, stdout, &a)
		if err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("keys list: unexpected argument %q", fs.Arg(0))
		}
		if err := cfg.checkDBExists(); err != nil {
			return err
		}
		return withService(ctx, cfg, func(ctx context.Context, svc *core.Service) error {
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSCOPE\tNAME\tCREATED\tEXPIRES\tREVOKED")
			f := agentmem.KeyFilter{Limit: agentmem.MaxPageSize}
			if a.tenant != "" {
				f.TenantID = &a.tenant
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
		cfg, fs, err := parseCommand("keys revoke", args[1:], getenv, stdout, nil)
		if err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("keys revoke: give the ID of the key to revoke (see keys list)")
		}
		if err := cfg.checkDBExists(); err != nil {
			return err
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
	fmt.Fprint(stderr, usage("keys "))
	return fmt.Errorf("keys: unknown subcommand %q", args[0])
}

// timeOrDash formats an optional time for the key list.
func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
