package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// descriptionWidth keeps the list table readable in an 120-column terminal.
const descriptionWidth = 72

var cmdList = &command{
	name:     "list",
	synopsis: "[--source S]... [--name N]... [--json]",
	summary:  "list the tools (NAME SOURCE DESCRIPTION), sorted by name",
	run:      runList,
}

func runList(c *cli, args []string) error {
	fs := c.flags(`List the tools this caller may use, sorted by name, across every page.
With --json, prints {"revision", "tools"} with each tool's full schema.`)
	var srcs, names multi
	fs.Var(&srcs, "source", "only tools from source `S` (repeatable, or a,b)")
	// --sources is the name ListToolsRequest.sources (and the docs) use.
	fs.Var(&srcs, "sources", "the same as --source")
	fs.Var(&names, "name", "only the tool named `N` (repeatable, or a,b)")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListToolsResponse, error) {
		return listAll(ctx, k, &pb.ListToolsRequest{Sources: srcs, Names: names})
	}, func(all *pb.ListToolsResponse) error {
		tw := newTable(c.stdout)
		fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION")
		for _, t := range all.Tools {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.GetName(), t.GetSource(), cell(t.GetDescription(), descriptionWidth))
		}
		return tw.Flush()
	})
}

// listAll follows the pages of ListTools into one response.
func listAll(ctx context.Context, k *conn, req *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	all := &pb.ListToolsResponse{}
	for {
		resp, err := k.reg.ListTools(ctx, req)
		if err != nil {
			return nil, err
		}
		if all.Revision == 0 {
			all.Revision = resp.GetRevision()
		}
		all.Tools = append(all.Tools, resp.GetTools()...)
		if resp.GetNextPageToken() == "" {
			return all, nil
		}
		req.PageToken = resp.GetNextPageToken()
	}
}

var cmdDescribe = &command{
	name:     "describe",
	synopsis: "NAME [--json]",
	summary:  "show one tool: description and input schema",
	run:      runDescribe,
}

func runDescribe(c *cli, args []string) error {
	fs := c.flags(`Show one tool: its source, full description and input JSON Schema.`)
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.Tool, error) {
		resp, err := k.reg.GetTool(ctx, &pb.GetToolRequest{Name: pos[0]})
		return resp.GetTool(), err
	}, c.printTool)
}

func (c *cli) printTool(t *pb.Tool) error {
	fmt.Fprintf(c.stdout, "Name:    %s\nSource:  %s\n", t.GetName(), t.GetSource())
	if d := strings.TrimSpace(t.GetDescription()); d != "" {
		fmt.Fprintf(c.stdout, "\n%s\n", d)
	}
	fmt.Fprintln(c.stdout, "\nInput schema:")
	schema, err := protojson.Marshal(t.GetInputSchema())
	if err != nil {
		return err
	}
	return writeIndented(c.stdout, schema)
}

// exportFormats maps the --format names to the proto enum.
var exportFormats = map[string]pb.ExportFormat{
	"openai":    pb.ExportFormat_EXPORT_FORMAT_OPENAI,
	"anthropic": pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC,
	"gemini":    pb.ExportFormat_EXPORT_FORMAT_GEMINI,
}

var cmdExport = &command{
	name:     "export",
	synopsis: "--format openai|anthropic|gemini [--source S]... [--name N]...",
	summary:  "print the tools as the JSON a model provider's API takes",
	run:      runExport,
}

func runExport(c *cli, args []string) error {
	fs := c.flags(`Print the tool list as the exact JSON a model provider's API takes:
  openai     [{"type":"function","function":{"name","description","parameters"}}]
  anthropic  [{"name","description","input_schema"}]
  gemini     [{"functionDeclarations":[...]}]
With --defer-loading (anthropic only), Anthropic's tool search tool comes first
and every tool not matching a --pin glob is marked "defer_loading": true.`)
	format := fs.String("format", "", "provider shape `FORMAT`: openai, anthropic or gemini (required)")
	deferLoading := fs.Bool("defer-loading", false, "anthropic: add the tool search tool and defer loading the tools")
	var srcs, names, pins multi
	fs.Var(&pins, "pin", "with --defer-loading: keep tools matching glob `G` loaded (repeatable, or a,b)")
	fs.Var(&srcs, "source", "only tools from source `S` (repeatable, or a,b)")
	fs.Var(&names, "name", "only the tool named `N` (repeatable, or a,b)")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	f, ok := exportFormats[strings.ToLower(*format)]
	if !ok {
		if *format == "" {
			return usagef("--format is required: openai, anthropic or gemini")
		}
		return usagef("--format %q is not a format; use openai, anthropic or gemini", *format)
	}
	k, ctx, done, err := c.session()
	if err != nil {
		return err
	}
	defer done()
	resp, err := k.reg.ExportTools(ctx, &pb.ExportToolsRequest{Format: f, Sources: srcs, Names: names, DeferLoading: *deferLoading, Pinned: pins})
	if err != nil {
		return err
	}
	// The export is JSON already, with or without --json.
	return writeIndented(c.stdout, []byte(resp.GetJson()))
}

var cmdWatch = &command{
	name:     "watch",
	synopsis: "[--source S]... [--name N]... [--count N]",
	summary:  "print each registry revision (+added -removed ~changed) until Ctrl-C",
	run:      runWatch,
}

func runWatch(c *cli, args []string) error {
	fs := c.flags(`Print the tool list now, then every change to it: one block per registry
revision with +added, -removed and ~changed tool names. Runs until Ctrl-C,
--count messages, or the --timeout if one is given. With --json, prints one
JSON object per revision per line.`)
	var srcs, names multi
	fs.Var(&srcs, "source", "only tools from source `S` (repeatable, or a,b)")
	fs.Var(&names, "name", "only the tool named `N` (repeatable, or a,b)")
	count := fs.Int("count", 0, "stop after `N` revisions (0: no limit)")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	if *count < 0 {
		return usagef("--count must be >= 0 (0 means no limit)")
	}
	k, err := c.dial()
	if err != nil {
		return err
	}
	defer k.Close()

	// A watch is meant to run for as long as the person wants; the default
	// --timeout would end it after 30s, so it applies only when given.
	ctx, cancel := c.ctx, func() {}
	if c.g.set["timeout"] {
		ctx, cancel = c.callContext()
	}
	defer cancel()
	stream, err := k.reg.WatchTools(ctx, &pb.WatchToolsRequest{Sources: srcs, Names: names})
	if err != nil {
		return err
	}
	for n := 0; *count == 0 || n < *count; n++ {
		msg, err := stream.Recv()
		if err != nil {
			// Ctrl-C or the --timeout given: the watch ended as asked. The
			// server may notice the propagated deadline before our own timer.
			if errors.Is(err, io.EOF) || ctx.Err() != nil ||
				(c.g.set["timeout"] && status.Code(err) == codes.DeadlineExceeded) {
				return nil
			}
			return err
		}
		if c.g.json {
			err = writeJSONLine(c.stdout, msg)
		} else {
			err = printRevision(c.stdout, msg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func printRevision(w io.Writer, m *pb.WatchToolsResponse) error {
	kind := "change"
	if m.GetSnapshot() {
		kind = "snapshot"
	}
	fmt.Fprintf(w, "revision %d (%s, %d tools)\n", m.GetRevision(), kind, len(m.GetTools()))
	for _, n := range m.GetAdded() {
		fmt.Fprintf(w, "+%s\n", n)
	}
	for _, n := range m.GetRemoved() {
		fmt.Fprintf(w, "-%s\n", n)
	}
	for _, n := range m.GetChanged() {
		fmt.Fprintf(w, "~%s\n", n)
	}
	return nil
}
