// Command toolnexus is the command-line client of a toolnexus server: list
// and describe tools, execute them (answering suspended calls), export their
// schemas for a model provider, watch the registry change, and inspect the
// sources, skills and health of a running server.
//
// Tables are for people; --json prints machine output for scripts. Exit
// codes: 0 success, 1 a tool result with is_error or a failed RPC, 2 a
// usage error (the command line itself is wrong).
//
//	toolnexus list
//	toolnexus exec debug_echo --args '{"hello":"world"}'
//	echo '{"ms":10}' | toolnexus exec debug_sleep -
//	toolnexus export --format anthropic > tools.json
//	toolnexus --addr dns:///toolnexus.internal:50051 --token "$TOKEN" health
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

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func main() {
	// Ctrl-C ends `watch` (and cancels any call in flight) cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runContext(ctx, os.Stdin, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole CLI as a function, so tests drive it in-process.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), os.Stdin, args, stdout, stderr)
}

// command is one subcommand. run parses its own arguments with the
// FlagSet built by cli.flags, so each command owns its help text.
type command struct {
	name     string
	synopsis string // arguments after the command name, for the usage line
	summary  string // one line, for the command list
	run      func(c *cli, args []string) error
}

var commands = []*command{
	cmdList, cmdDescribe, cmdExec, cmdExport, cmdWatch, cmdSearch,
	cmdSources, cmdSkills, cmdSkillsPrompt, cmdReload, cmdHealth,
	cmdSessions, cmdDeleteSession,
	cmdApprovals, cmdApprove, cmdDeny,
	cmdResources, cmdTemplates, cmdRead, cmdPrompts, cmdPrompt,
	cmdConnect, cmdConnections, cmdDisconnect,
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// cli carries what every command needs: the streams, the global flags and
// the caller's context (cancelled by Ctrl-C).
type cli struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	g      globals
	cmd    *command
}

func runContext(ctx context.Context, stdin io.Reader, args []string, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	c.g.init()
	fs := flag.NewFlagSet("toolnexus", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.g.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.mainUsage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "toolnexus: %s\nRun 'toolnexus --help' for usage.\n", flagProblem(err))
		return 2
	}
	c.g.noteSet(fs)
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "toolnexus: no command given")
		c.mainUsage(stderr)
		return 2
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		if len(rest) == 0 {
			c.mainUsage(stdout)
			return 0
		}
		name, rest = rest[0], []string{"--help"}
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "toolnexus: unknown command %q; the commands are: %s\nRun 'toolnexus --help' for usage.\n",
			name, strings.Join(commandNames(), ", "))
		return 2
	}
	c.cmd = cmd
	return c.exitCode(cmd.run(c, rest))
}

func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// Errors a command returns, mapped to exit codes by exitCode.
var errHelpShown = errors.New("help shown")

// usageError is a mistake on the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError ends with a code after the command already said why (a tool
// result with is_error, health not SERVING).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func (c *cli) exitCode(err error) int {
	var (
		ue *usageError
		ee *exitError
	)
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "toolnexus %s: %s\nRun 'toolnexus %s --help' for usage.\n", c.cmd.name, ue.msg, c.cmd.name)
		return 2
	case errors.As(err, &ee):
		return ee.code
	}
	st, ok := status.FromError(err)
	if !ok {
		fmt.Fprintf(c.stderr, "toolnexus %s: %v\n", c.cmd.name, err)
		return 1
	}
	fmt.Fprintf(c.stderr, "toolnexus %s: %s: %s\n", c.cmd.name, st.Code(), st.Message())
	switch st.Code() {
	case codes.Unavailable:
		fmt.Fprintf(c.stderr, "Is a toolnexus server listening at %s? Set the address with --addr or TOOLNEXUS_ADDR.\n", c.g.addr)
	case codes.DeadlineExceeded:
		fmt.Fprintf(c.stderr, "The call took longer than --timeout %s; give it more time with --timeout.\n", c.g.timeout)
	}
	return 1
}

func (c *cli) mainUsage(w io.Writer) {
	fmt.Fprint(w, `toolnexus is the command-line client of a toolnexus tool server.

Usage: toolnexus [global flags] COMMAND [flags] [arguments]

Commands:
`)
	tw := newTable(w)
	for _, cmd := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", cmd.name, cmd.summary)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nGlobal flags (accepted before or after the command):")
	printGlobalFlags(w)
	fmt.Fprint(w, `
Run 'toolnexus COMMAND --help' for a command's flags.
Exit codes: 0 ok, 1 tool error (is_error) or RPC failure, 2 usage error.
`)
}
