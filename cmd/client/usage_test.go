package main

import (
	"strings"
	"testing"
)

// Usage errors exit 2 with a message naming the problem, before any
// connection is made (the address points nowhere on purpose).
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args  []string
		stdin string
		want  string
	}{
		{nil, "", "toolnexus: no command given"},
		{[]string{"frobnicate"}, "", `toolnexus: unknown command "frobnicate"; the commands are: list, describe, exec`},
		{[]string{"--bogus", "list"}, "", "toolnexus: unknown flag --bogus"},
		{[]string{"--timeout", "soon", "list"}, "", `invalid value "soon" for flag -timeout`},
		{[]string{"list", "--bogus"}, "", "toolnexus list: unknown flag --bogus"},
		{[]string{"list", "extra"}, "", `toolnexus list: takes no arguments, got "extra"`},
		{[]string{"describe"}, "", "toolnexus describe: missing the NAME argument"},
		{[]string{"describe", "a", "b"}, "", `toolnexus describe: unexpected argument "b"`},
		{[]string{"exec"}, "", "toolnexus exec: missing the NAME argument"},
		{[]string{"exec", "x", "y"}, "", `toolnexus exec: unexpected argument "y": pass arguments with --args JSON, --args-file FILE or - (stdin)`},
		{[]string{"exec", "x", "--args", "{}", "-"}, "{}", "give the arguments one way only"},
		{[]string{"exec", "x", "--args", "{}", "--args-file", "f"}, "", "give the arguments one way only"},
		{[]string{"exec", "x", "--args", `{"a":`}, "", "toolnexus exec: the arguments are not valid JSON: unexpected end of JSON input"},
		{[]string{"exec", "x", "-"}, `{"a" 1}`, "the arguments are not valid JSON: invalid character '1' after object key (at byte 6)"},
		{[]string{"exec", "x", "--args-file", "/nonexistent/args.json"}, "", "toolnexus exec: --args-file: open /nonexistent/args.json: no such file or directory"},
		{[]string{"exec", "x", "--answer", "yes"}, "", "--answer is not valid JSON"},
		{[]string{"exec", "x", "--answer", "1", "--decline", "no"}, "", "--answer and --decline exclude each other"},
		{[]string{"exec", "x", "--answer-id", "p1"}, "", "--answer-id needs --answer JSON or --decline REASON"},
		{[]string{"exec", "", "--args", "{}"}, "", "the tool NAME is empty"},
		{[]string{"export"}, "", "toolnexus export: --format is required: openai, anthropic or gemini"},
		{[]string{"export", "--format", "cohere"}, "", `--format "cohere" is not a format; use openai, anthropic or gemini`},
		{[]string{"watch", "--count", "-1"}, "", "--count must be >= 0"},
		{[]string{"health", "now"}, "", `toolnexus health: takes no arguments, got "now"`},
		{[]string{"--addr", "", "health"}, "", "--addr is empty"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"--addr", "127.0.0.1:1"}, tc.args...)
			r := runCLI(t, tc.stdin, args...).want(t, 2)
			if !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("stderr %q\nwant it to contain %q", r.stderr, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("usage error wrote to stdout: %q", r.stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	main := runCLI(t, "", "--help").want(t, 0).stdout
	for _, cmd := range commands {
		if !strings.Contains(main, "\n  "+cmd.name+" ") {
			t.Errorf("--help does not list %s", cmd.name)
		}
		for _, args := range [][]string{{cmd.name, "--help"}, {cmd.name, "-h"}, {"help", cmd.name}} {
			r := runCLI(t, "", args...).want(t, 0)
			if !strings.HasPrefix(r.stdout, "Usage: toolnexus "+cmd.name+" ") || !strings.Contains(r.stdout, "\nGlobal flags:\n  --addr ADDR") {
				t.Errorf("%v:\n%s", args, r.stdout)
			}
		}
	}
	if r := runCLI(t, "", "help").want(t, 0); r.stdout != main {
		t.Error("`help` differs from --help")
	}
	// Command flags are listed with their argument names and defaults.
	ex := runCLI(t, "", "exec", "--help").stdout
	if !strings.Contains(ex, "\nFlags:\n") || !strings.Contains(ex, "--args JSON ") || !strings.Contains(ex, "--answer-id ID ") {
		t.Errorf("exec --help:\n%s", ex)
	}
}

func TestHelpNeverShowsTheToken(t *testing.T) {
	t.Setenv("TOOLNEXUS_TOKEN", "do-not-print-me")
	for _, args := range [][]string{{"--help"}, {"list", "--help"}, {"--token", "flag-secret", "exec", "--help"}} {
		r := runCLI(t, "", args...).want(t, 0)
		if strings.Contains(r.stdout, "do-not-print-me") || strings.Contains(r.stdout, "flag-secret") {
			t.Fatalf("%v printed the token:\n%s", args, r.stdout)
		}
	}
}
