package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem"
)

// value is the flag.Value of a setting or an argument, over the variable
// it sets: a *string, *int, *int64, *float64, *bool, *time.Duration
// (agentmem.ParseAge: 90m, 36h, 30d, 2w, 1d12h) or *[]string
// (comma-separated). Its errors do not repeat the value: the caller
// names the flag, variable or key, and the value.
type value struct{ p any }

func (v value) Set(s string) error {
	switch p := v.p.(type) {
	case *string:
		*p = s
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return errors.New("not a whole number")
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return errors.New("not a whole number")
		}
		*p = n
	case *float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return errors.New("not a number")
		}
		*p = f
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return errors.New("not true or false")
		}
		*p = b
	case *time.Duration:
		d, err := agentmem.ParseAge("duration", strings.TrimSpace(s))
		if err != nil {
			if strings.Contains(agentmem.ErrorMessage(err), "100 years") {
				return errors.New("longer than 100 years")
			}
			return errors.New("not a duration such as 90m, 36h, 30d, 2w or 1d12h")
		}
		*p = d
	case *[]string:
		*p = splitList(s)
	default:
		return fmt.Errorf("unsupported type %T", v.p)
	}
	return nil
}

// String formats the value as it would be given.
func (v value) String() string {
	switch p := v.p.(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		return formatDuration(*p)
	case *[]string:
		return strings.Join(*p, ",")
	}
	return "" // the zero value, which package flag makes to find zero defaults
}

// IsBoolFlag lets a boolean flag go without a value (--insecure).
func (v value) IsBoolFlag() bool { _, ok := v.p.(*bool); return ok }

// kind names the value's type in help.
func (v value) kind() string {
	switch v.p.(type) {
	case *string:
		return "string"
	case *int, *int64:
		return "int"
	case *float64:
		return "number"
	case *bool:
		return "bool"
	case *time.Duration:
		return "duration"
	case *[]string:
		return "list"
	}
	return ""
}

// formatDuration writes d as a person would: 30m, 1h, 2h30m, 7d, 0.
func formatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0"
	case d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// arguments are a command's own flags: what to do this time (which user,
// which file), given on the command line only, with no variable and no
// key in the config file.
type arguments interface {
	flags(fs *flag.FlagSet)
}

// A command is a subcommand with flags: the settings it takes and its
// arguments.
type command struct {
	name     string // "serve", "keys create"
	synopsis string
	in       int              // the settings it takes: inServe, inAdmin, inApp, several, or none
	args     func() arguments // its arguments (nil: none)
}

// takes reports whether c takes the setting name.
func (c command) takes(name string) bool {
	return slices.ContainsFunc(settings, func(s setting) bool { return s.name == name && s.in&c.in != 0 })
}

func findCommand(name string) (command, bool) {
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return commands[i], true
}

// flagSet returns the flags of c: its settings, bound to cfg, then
// --config when it takes settings, then its arguments a.
func (c command) flagSet(cfg *Config, a arguments) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parseCommand prints help and returns errors
	fs.Usage = func() {}
	for _, s := range settings {
		if s.in&c.in != 0 {
			fs.Var(value{s.field(cfg)}, s.name, s.usage)
		}
	}
	if c.in != 0 {
		fs.String("config", "", "JSON file of settings by name, e.g. {\"db\": \"postgres://…\", \"rate-limit\": 50}")
	}
	if a != nil {
		a.flags(fs)
	}
	return fs
}

// parseCommand parses the command line of command name into a Config and
// its arguments a (nil for none), validates the Config, and returns the
// flag set for the positional arguments (fs.Args). -h prints the
// command's usage on stdout and returns flag.ErrHelp (which run treats
// as success).
func parseCommand(name string, args []string, getenv func(string) string, stdout io.Writer, a arguments) (Config, *flag.FlagSet, error) {
	c, ok := findCommand(name)
	if !ok {
		return defaults(), nil, fmt.Errorf("command %q is missing from commands", name)
	}
	cfg, fs, err := c.parse(args, getenv, stdout, a)
	if err == nil && c.in != 0 {
		err = cfg.Validate()
	}
	return cfg, fs, err
}

// parse is parseCommand before validation. Each setting comes from its
// flag, else its AGENTMEM_* variable, else the config file (--config,
// else AGENTMEM_CONFIG), else defaults().
func (c command) parse(args []string, getenv func(string) string, stdout io.Writer, a arguments) (Config, *flag.FlagSet, error) {
	cfg := defaults()
	fs := c.flagSet(&cfg, a)
	if err := parseInterleaved(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printUsage(stdout, fs)
			return cfg, fs, err
		}
		return cfg, fs, fmt.Errorf("%s: %v (see agentmem %s -h)", c.name, err, c.name)
	}
	if c.in == 0 {
		return cfg, fs, nil
	}
	var file map[string]string
	path := fs.Lookup("config").Value.String()
	if path == "" {
		path = getenv(configEnv)
	}
	if path != "" {
		var err error
		if file, err = readConfigFile(path); err != nil {
			return cfg, fs, err
		}
	}
	cfg.from = map[string]string{}
	for _, s := range settings {
		switch {
		case s.in&c.in == 0:
		case given(fs, s.name):
			cfg.from[s.name] = "--" + s.name
		case getenv(s.env()) != "":
			env := getenv(s.env())
			if err := (value{s.field(&cfg)}).Set(env); err != nil {
				return cfg, fs, fmt.Errorf("%s=%q: %v", s.env(), env, err)
			}
			cfg.from[s.name] = s.env()
		default:
			v, ok := file[s.name]
			if !ok {
				continue
			}
			if err := (value{s.field(&cfg)}).Set(v); err != nil {
				return cfg, fs, fmt.Errorf("config file %s: %s %q: %v", path, s.name, v, err)
			}
			cfg.from[s.name] = s.name + " in " + path
		}
	}
	return cfg, fs, nil
}

// parseInterleaved parses args into fs as fs.Parse does, but takes flags
// after positional arguments too (agentmem search "shellfish" --user
// priya): package flag stops at the first argument that is not a flag, so
// each time it does, that argument is set aside and the rest parsed again.
// After "--" every argument is positional. fs.Args() then holds the
// positional arguments in their order.
func parseInterleaved(fs *flag.FlagSet, args []string) error {
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			positional = append(positional, left...) // all after "--"
			break
		}
		positional = append(positional, left[0])
		rest = left[1:]
	}
	// Parsing "--" alone leaves the flags set and makes positional
	// fs.Args().
	return fs.Parse(append([]string{"--"}, positional...))
}

// given reports whether the flag name is on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// printUsage writes c's synopsis and flags: its settings, with their
// variables and defaults, then its arguments.
func (c command) printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: agentmem %s %s\n", c.name, c.synopsis)
	var sets, args []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if c.takes(f.Name) || f.Name == "config" && c.in != 0 {
			sets = append(sets, f)
		} else {
			args = append(args, f)
		}
	})
	if len(args) > 0 {
		fmt.Fprintf(w, "\nArguments:\n")
		for _, f := range args {
			printFlag(w, f, "")
		}
	}
	if len(sets) > 0 {
		fmt.Fprintf(w, "\nSettings (a flag wins over its variable, which wins over the --config file):\n")
		for _, f := range sets {
			env := "AGENTMEM_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
			printFlag(w, f, env)
		}
	}
}

func printFlag(w io.Writer, f *flag.Flag, env string) {
	kind := "string"
	if v, ok := f.Value.(value); ok {
		kind = v.kind()
	} else if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		kind = "bool"
	}
	fmt.Fprintf(w, "  --%s %s\n    \t%s", f.Name, kind, f.Usage)
	var notes []string
	if env != "" {
		notes = append(notes, env)
	}
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
		notes = append(notes, "default "+f.DefValue)
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(notes, ", "))
	}
	fmt.Fprintln(w)
}

// cliError is err as an operator reads it: agentmem errors give their
// message, not their code (the text of agentmem.Error.Error, for logs).
type cliError struct{ err error }

func (e cliError) Error() string {
	text := e.err.Error()
	for _, ae := range agentmemErrors(e.err, nil) {
		text = strings.ReplaceAll(text, ae.Error(), ae.Message)
	}
	return text
}

func (e cliError) Unwrap() error { return e.err }

// agentmemErrors appends the *agentmem.Error values of err's tree to out.
func agentmemErrors(err error, out []*agentmem.Error) []*agentmem.Error {
	if ae, ok := err.(*agentmem.Error); ok {
		out = append(out, ae)
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			out = agentmemErrors(inner, out)
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			out = agentmemErrors(inner, out)
		}
	}
	return out
}
