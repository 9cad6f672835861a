package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

var cmdExec = &command{
	name:     "exec",
	synopsis: "NAME [--args JSON | --args-file FILE | -] [--answer JSON [--answer-id ID] | --decline REASON]",
	summary:  "execute a tool and print its output (exit 1 when the result is an error)",
	run:      runExec,
}

// execFlags are exec's own flags, kept apart from running so the request
// they build can be checked without a server.
type execFlags struct {
	args     string
	argsFile string
	answer   string
	answerID string
	decline  string
	stream   bool
	set      map[string]bool
}

func runExec(c *cli, args []string) error {
	fs := c.flags(`Execute the tool NAME and print its output. The arguments are a JSON object:
--args JSON, --args-file FILE, or - to read them from stdin; none means {}.
They are sent verbatim (exact numbers). A result with is_error goes to
stderr and exits 1; --json prints the whole result as JSON instead.

A tool that needs a person (e.g. question) answers with a pending request;
resume it by running the same call again with --answer JSON (and
--answer-id ID), or refuse it with --decline REASON.

--stream shows the call as it runs: output as the tool writes it (bash),
progress as a bar on stderr (plain lines when stderr is not a terminal)
and the tool's log messages on stderr.`)
	var ef execFlags
	ef.register(fs)
	pos, err := fs.parse(args, 1, 2)
	if err != nil {
		return err
	}
	req, err := ef.request(fs, pos, c.stdin)
	if err != nil {
		return err
	}

	k, ctx, done, err := c.session()
	if err != nil {
		return err
	}
	defer done()
	var res *pb.ToolResult
	shown := ""
	if ef.stream {
		if res, shown, err = c.execStream(ctx, k.reg, req); err != nil {
			return err
		}
	} else {
		resp, err := k.reg.Execute(ctx, req)
		if err != nil {
			return err
		}
		res = resp.GetResult()
	}
	if ef.stream && !c.g.json {
		// The output was shown as it came: print only what the result adds
		// (bash's exit code note), then what text cannot show.
		rest := strings.TrimLeft(strings.TrimPrefix(res.GetOutput(), shown), "\n")
		if shown == "" {
			rest = res.GetOutput()
		}
		res = proto.Clone(res).(*pb.ToolResult)
		defer describeParts(c.stderr, res.GetContent())
		res.Output = rest
	}
	if c.g.json && ef.stream {
		// Already printed, as the last of the event lines.
	} else if c.g.json {
		if err := writeJSON(c.stdout, res); err != nil {
			return err
		}
	} else if res.GetOutcome() == pb.Outcome_OUTCOME_PENDING && res.GetPending() != nil {
		c.printPending(req, res.GetPending())
	} else if res.GetIsError() {
		printText(c.stderr, res.GetOutput())
	} else {
		printText(c.stdout, res.GetOutput())
	}
	if res.GetIsError() {
		return &exitError{code: 1}
	}
	return nil
}

func (ef *execFlags) register(fs *flagSet) {
	fs.StringVar(&ef.args, "args", "", "arguments as a `JSON` object")
	fs.StringVar(&ef.argsFile, "args-file", "", "read the arguments JSON from `FILE`")
	fs.StringVar(&ef.answer, "answer", "", "answer a pending request with this `JSON` value, e.g. '{\"answers\":[\"red\"]}'")
	fs.StringVar(&ef.answerID, "answer-id", "", "the pending request `ID` being answered")
	fs.StringVar(&ef.decline, "decline", "", "decline a pending request, giving the `REASON`")
	fs.BoolVar(&ef.stream, "stream", false, "stream the call: show output as the tool writes it, progress on stderr")
}

// request builds the ExecuteRequest from the parsed fs, the positional
// arguments (NAME and an optional "-"); stdin is read only for "-".
func (ef *execFlags) request(fs *flagSet, pos []string, stdin io.Reader) (*pb.ExecuteRequest, error) {
	// Which flags were given matters, not their values: --args '' is a choice.
	ef.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { ef.set[f.Name] = true })
	req := &pb.ExecuteRequest{Name: pos[0]}
	if req.Name == "" {
		return nil, usagef("the tool NAME is empty")
	}
	fromStdin := false
	if len(pos) == 2 {
		if pos[1] != "-" {
			return nil, usagef("unexpected argument %q: pass arguments with --args JSON, --args-file FILE or - (stdin)", pos[1])
		}
		fromStdin = true
	}
	sources := 0
	for _, on := range []bool{ef.set["args"], ef.set["args-file"], fromStdin} {
		if on {
			sources++
		}
	}
	if sources > 1 {
		return nil, usagef("give the arguments one way only: --args, --args-file or - (stdin)")
	}
	var raw []byte
	switch {
	case ef.set["args"]:
		raw = []byte(ef.args)
	case ef.set["args-file"]:
		b, err := os.ReadFile(ef.argsFile)
		if err != nil {
			return nil, usagef("--args-file: %v", err)
		}
		raw = b
	case fromStdin:
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading the arguments from stdin: %w", err)
		}
		raw = b
	}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if !json.Valid(raw) {
			return nil, usagef("the arguments are not valid JSON: %s", jsonProblem(raw))
		}
		req.Input = &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: strings.TrimSpace(string(raw))}
	}

	switch {
	case ef.set["answer"] && ef.set["decline"]:
		return nil, usagef("--answer and --decline exclude each other: answer the request or decline it")
	case ef.set["answer"]:
		var v any
		if err := json.Unmarshal([]byte(ef.answer), &v); err != nil {
			return nil, usagef("--answer is not valid JSON: %s (quote a plain string: '\"yes\"')", jsonProblem([]byte(ef.answer)))
		}
		data, err := structpb.NewValue(v)
		if err != nil {
			return nil, usagef("--answer: %v", err)
		}
		req.Answer = &pb.Answer{Id: ef.answerID, Ok: true, Data: data}
	case ef.set["decline"]:
		req.Answer = &pb.Answer{Id: ef.answerID, Ok: false, Reason: ef.decline}
	case ef.set["answer-id"]:
		return nil, usagef("--answer-id needs --answer JSON or --decline REASON")
	}
	return req, nil
}

// jsonProblem names what is wrong with b and where.
func jsonProblem(b []byte) string {
	var v any
	err := json.Unmarshal(b, &v)
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "unknown problem"
}

// printPending shows what a suspended tool waits for and the exact command
// that answers it.
func (c *cli) printPending(req *pb.ExecuteRequest, p *pb.PendingRequest) {
	w := c.stdout
	kind := p.GetKind()
	if kind == "" {
		kind = "input"
	}
	fmt.Fprintf(w, "PENDING: %s waits for %s", req.GetName(), kind)
	if p.GetId() != "" {
		fmt.Fprintf(w, " (id %s)", p.GetId())
	}
	fmt.Fprintln(w)
	if prompt := strings.TrimSpace(p.GetPrompt()); prompt != "" {
		fmt.Fprintln(w)
		for _, line := range strings.Split(prompt, "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if p.GetUrl() != "" {
		fmt.Fprintf(w, "\nOpen: %s\n", p.GetUrl())
	}
	if p.GetExpiresAt() != nil {
		fmt.Fprintf(w, "\nAnswer before %s.\n", p.GetExpiresAt().AsTime().UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "\nTo answer, run%s:\n  %s\n", c.tokenSource(), c.answerCommand(req, p))
}

// tokenSource says where the answering command takes the token from: it
// never carries the token itself (the output may land in a log or a
// model's context), so it names the variable the CLI reads.
func (c *cli) tokenSource() string {
	switch {
	case c.g.token == "":
		return ""
	case c.g.set["token"]:
		return " (first put the token you gave --token in TOOLNEXUS_TOKEN: it is not printed)"
	default:
		return " (with the token in TOOLNEXUS_TOKEN, as now)"
	}
}

// answerCommand is the command line that resumes the call, complete with
// nothing but the token in TOOLNEXUS_TOKEN: the address and the session
// however they were given (flag or environment: a one-off variable is gone
// by the next command, and an approval is bound to its session), the TLS
// flags, the same tool and arguments, plus --answer. The answer shown is a
// template for the kind of request.
func (c *cli) answerCommand(req *pb.ExecuteRequest, p *pb.PendingRequest) string {
	parts := []string{"toolnexus"}
	if c.g.addr != defaultAddr {
		parts = append(parts, "--addr", shellQuote(c.g.addr))
	}
	for _, f := range []struct {
		name, val string
	}{{"ca", c.g.ca}, {"cert", c.g.cert}, {"key", c.g.key}, {"server-name", c.g.serverName}} {
		if c.g.set[f.name] && f.val != "" {
			parts = append(parts, "--"+f.name, shellQuote(f.val))
		}
	}
	if c.g.session != "" {
		parts = append(parts, "--session", shellQuote(c.g.session))
	}
	if c.g.tls && c.g.ca == "" && c.g.cert == "" {
		parts = append(parts, "--tls")
	}
	parts = append(parts, "exec", shellQuote(req.GetName()))
	if a := req.GetArgumentsJson(); a != "" {
		parts = append(parts, "--args", shellQuote(a))
	}
	if p.GetId() != "" {
		parts = append(parts, "--answer-id", shellQuote(p.GetId()))
	}
	parts = append(parts, "--answer", shellQuote(answerTemplate(p)))
	return strings.Join(parts, " ")
}

// answerTemplate suggests the answer's shape: for a question, one answer
// per question (the first option where there are options).
func answerTemplate(p *pb.PendingRequest) string {
	if p.GetKind() == "question" {
		qs := p.GetData().GetFields()["questions"].GetListValue().GetValues()
		answers := make([]string, 0, len(qs))
		for _, q := range qs {
			ans := "YOUR ANSWER"
			if opts := q.GetStructValue().GetFields()["options"].GetListValue().GetValues(); len(opts) > 0 && opts[0].GetStringValue() != "" {
				ans = opts[0].GetStringValue()
			}
			answers = append(answers, ans)
		}
		if len(answers) == 0 {
			answers = append(answers, "YOUR ANSWER")
		}
		b, _ := json.Marshal(map[string]any{"answers": answers})
		return string(b)
	}
	if p.GetKind() == "approval" {
		// The approval itself is the answer; run this once an approver has
		// approved (toolnexus approve ID).
		return "true"
	}
	return `"YOUR ANSWER"`
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
