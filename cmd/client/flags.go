package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Defaults of the global flags.
const (
	defaultAddr    = "127.0.0.1:50051"
	defaultTimeout = 30 * time.Second
)

// globals are the connection and output flags every command accepts,
// before or after the command name.
type globals struct {
	addr       string
	token      string
	session    string
	timeout    time.Duration
	tls        bool
	ca         string
	cert       string
	key        string
	serverName string
	json       bool

	// set records the globals given explicitly (e.g. --timeout also bounds
	// `watch`, but only when asked for).
	set map[string]bool
}

// globalFlag documents one global flag; help prints these texts rather
// than the current values, so a --token never shows up in help output.
type globalFlag struct {
	name, arg, usage string
}

var globalFlags = []globalFlag{
	{"addr", "ADDR", "server HOST:PORT, or dns:///HOST:PORT to spread calls over all its addresses\n(round robin; env TOOLNEXUS_ADDR, default " + defaultAddr + ")"},
	{"token", "TOKEN", "sent as \"authorization: Bearer TOKEN\" (env TOOLNEXUS_TOKEN; prefer the env\nvar: flags show up in the process list)"},
	{"session", "ID", "run calls in this session's own workspace, sent as the \"toolnexus-session\"\nmetadata (env TOOLNEXUS_SESSION; 1-64 of A-Z a-z 0-9 _ . -)"},
	{"timeout", "DURATION", "deadline of each call, e.g. 5s or 2m; 0 for none (default 30s; bounds watch\nonly when given)"},
	{"tls", "", "connect with TLS, verifying the server against the system roots (or --ca)"},
	{"ca", "FILE", "PEM CA bundle to verify the server with (implies --tls)"},
	{"cert", "FILE", "PEM client certificate for mutual TLS (with --key; implies --tls)"},
	{"key", "FILE", "PEM private key of --cert"},
	{"server-name", "NAME", "TLS server name to verify, when it differs from the --addr host"},
	{"json", "", "machine output: JSON instead of tables"},
}

func (g *globals) init() {
	g.addr = envOr("TOOLNEXUS_ADDR", defaultAddr)
	g.token = strings.TrimSpace(os.Getenv("TOOLNEXUS_TOKEN"))
	g.session = strings.TrimSpace(os.Getenv("TOOLNEXUS_SESSION"))
	g.timeout = defaultTimeout
	g.set = map[string]bool{}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// register binds the globals to fs. The current values are the defaults,
// so registering them again on a command's FlagSet keeps what was parsed
// before the command name.
func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.addr, "addr", g.addr, "")
	fs.StringVar(&g.token, "token", g.token, "")
	fs.StringVar(&g.session, "session", g.session, "")
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "")
	fs.BoolVar(&g.tls, "tls", g.tls, "")
	fs.StringVar(&g.ca, "ca", g.ca, "")
	fs.StringVar(&g.cert, "cert", g.cert, "")
	fs.StringVar(&g.key, "key", g.key, "")
	fs.StringVar(&g.serverName, "server-name", g.serverName, "")
	fs.BoolVar(&g.json, "json", g.json, "")
}

func (g *globals) noteSet(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) { g.set[f.Name] = true })
}

func isGlobal(name string) bool {
	for _, f := range globalFlags {
		if f.name == name {
			return true
		}
	}
	return false
}

func printGlobalFlags(w io.Writer) {
	tw := newTable(w)
	for _, f := range globalFlags {
		printFlag(tw, f.name, f.arg, f.usage)
	}
	tw.Flush()
}

func printFlag(w io.Writer, name, arg, usage string) {
	left := "--" + name
	if arg != "" {
		left += " " + arg
	}
	lines := strings.Split(usage, "\n")
	fmt.Fprintf(w, "  %s\t%s\n", left, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(w, "  \t%s\n", l)
	}
}

// flagSet is one command's FlagSet with the globals registered on it too.
type flagSet struct {
	*flag.FlagSet
	c    *cli
	desc string
}

// flags starts a command's FlagSet; desc is the help text under the usage line.
func (c *cli) flags(desc string) *flagSet {
	fs := flag.NewFlagSet("toolnexus "+c.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are printed by parse, to the right stream
	c.g.register(fs)
	return &flagSet{FlagSet: fs, c: c, desc: desc}
}

// parse parses flags and positional arguments in any order (`exec NAME
// --args X` and `exec --args X NAME` both work); after "--" everything is
// positional. It checks the positional count against min and max (-1: no
// limit) and prints help for --help.
func (fs *flagSet) parse(args []string, min, max int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.usage(fs.c.stdout)
				return nil, errHelpShown
			}
			return nil, usagef("%s", flagProblem(err))
		}
		rest := fs.Args()
		consumed := args[:len(args)-len(rest)]
		if len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	fs.c.g.noteSet(fs.FlagSet)
	switch {
	case len(pos) == 0 && min > 0:
		return nil, usagef("missing the %s argument", strings.Fields(fs.c.cmd.synopsis)[0])
	case len(pos) < min:
		return nil, usagef("expected at least %d arguments, got %d", min, len(pos))
	case max >= 0 && len(pos) > max:
		if max == 0 {
			return nil, usagef("takes no arguments, got %q", pos[0])
		}
		return nil, usagef("unexpected argument %q", pos[max])
	}
	return pos, nil
}

func (fs *flagSet) usage(w io.Writer) {
	c := fs.c
	fmt.Fprintf(w, "Usage: toolnexus %s %s\n\n%s\n", c.cmd.name, c.cmd.synopsis, strings.TrimSpace(fs.desc))
	tw := newTable(w)
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if isGlobal(f.Name) {
			return
		}
		if first {
			tw.Flush()
			fmt.Fprintln(w, "\nFlags:")
			first = false
		}
		arg, usage := flag.UnquoteUsage(f)
		if arg == "value" {
			arg = "VALUE"
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		printFlag(tw, f.Name, arg, usage)
	})
	tw.Flush()
	fmt.Fprintln(w, "\nGlobal flags:")
	printGlobalFlags(w)
}

// multi is a repeatable string flag (--source a --source b); a comma list
// (--source a,b) works too.
type multi []string

func (m *multi) String() string { return strings.Join(*m, ",") }

func (m *multi) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*m = append(*m, s)
		}
	}
	return nil
}

// flagProblem words the flag package's errors the way the flags are
// documented (with two dashes).
func flagProblem(err error) string {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		return "unknown flag --" + name
	}
	return err.Error()
}
