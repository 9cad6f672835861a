package main

import (
	"context"
	"fmt"
	"strings"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// The MCP servers' resources and prompts (FeatureService).

var cmdResources = &command{
	name:     "resources",
	synopsis: "[--json]",
	summary:  "list the MCP servers' resources you may read (URI SERVER NAME TYPE)",
	run:      runResources,
}

func runResources(c *cli, args []string) error {
	fs := c.flags(`List the resources of the MCP servers behind the server, as /mcp serves
them: sorted by URI; a URI two servers offer is served as
toolnexus://SERVER/URI for the one whose name sorts first.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListResourcesResponse, error) {
		return pb.NewFeatureServiceClient(k.cc).ListResources(ctx, &pb.ListResourcesRequest{PageSize: maxListPage})
	}, func(resp *pb.ListResourcesResponse) error {
		rows := make([][]string, len(resp.GetResources()))
		for i, r := range resp.GetResources() {
			rows[i] = []string{r.GetUri(), r.GetServer(), r.GetName(), dash(r.GetMimeType())}
		}
		return c.printRows("No resources.", "URI\tSERVER\tNAME\tTYPE", rows)
	})
}

// maxListPage asks for the largest page FeatureService returns.
const maxListPage = 10000

var cmdTemplates = &command{
	name:     "templates",
	synopsis: "[--json]",
	summary:  "list the MCP servers' resource templates (URI-TEMPLATE SERVER NAME)",
	run:      runTemplates,
}

func runTemplates(c *cli, args []string) error {
	fs := c.flags(`List the resource templates of the MCP servers: read any URI a template
matches with 'toolnexus read URI'.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListResourceTemplatesResponse, error) {
		return pb.NewFeatureServiceClient(k.cc).ListResourceTemplates(ctx, &pb.ListResourceTemplatesRequest{PageSize: maxListPage})
	}, func(resp *pb.ListResourceTemplatesResponse) error {
		rows := make([][]string, len(resp.GetResourceTemplates()))
		for i, t := range resp.GetResourceTemplates() {
			rows[i] = []string{t.GetUriTemplate(), t.GetServer(), t.GetName()}
		}
		return c.printRows("No resource templates.", "URI-TEMPLATE\tSERVER\tNAME", rows)
	})
}

var cmdRead = &command{
	name:     "read",
	synopsis: "URI [--json]",
	summary:  "read a resource: its text, or its size and type for bytes",
	run:      runRead,
}

func runRead(c *cli, args []string) error {
	fs := c.flags(`Read one resource of an MCP server by its URI (from 'toolnexus resources',
or any URI a template matches). Text is printed as it is; binary contents
are described (use --json for them, base64).`)
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ReadResourceResponse, error) {
		return pb.NewFeatureServiceClient(k.cc).ReadResource(ctx, &pb.ReadResourceRequest{Uri: pos[0]})
	}, func(resp *pb.ReadResourceResponse) error {
		for _, part := range resp.GetContents() {
			if b, ok := part.GetContents().(*pb.ResourceContent_Blob); ok {
				fmt.Fprintf(c.stdout, "[%d bytes of %s at %s]\n", len(b.Blob), dash(part.GetMimeType()), part.GetUri())
				continue
			}
			fmt.Fprint(c.stdout, part.GetText())
			if !strings.HasSuffix(part.GetText(), "\n") {
				fmt.Fprintln(c.stdout)
			}
		}
		return nil
	})
}

var cmdPrompts = &command{
	name:     "prompts",
	synopsis: "[--json]",
	summary:  "list the MCP servers' prompts (NAME SERVER ARGUMENTS DESCRIPTION)",
	run:      runPrompts,
}

func runPrompts(c *cli, args []string) error {
	fs := c.flags(`List the prompts of the MCP servers, named as tools are (the server's prefix
and the prompt's own name); a required argument is marked with '*'.`)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.ListPromptsResponse, error) {
		return pb.NewFeatureServiceClient(k.cc).ListPrompts(ctx, &pb.ListPromptsRequest{PageSize: maxListPage})
	}, func(resp *pb.ListPromptsResponse) error {
		rows := make([][]string, len(resp.GetPrompts()))
		for i, p := range resp.GetPrompts() {
			var names []string
			for _, a := range p.GetArguments() {
				if a.GetRequired() {
					names = append(names, a.GetName()+"*")
				} else {
					names = append(names, a.GetName())
				}
			}
			rows[i] = []string{p.GetName(), p.GetServer(), dash(strings.Join(names, ",")), p.GetDescription()}
		}
		return c.printRows("No prompts.", "NAME\tSERVER\tARGUMENTS\tDESCRIPTION", rows)
	})
}

var cmdPrompt = &command{
	name:     "prompt",
	synopsis: "NAME [--arg KEY=VALUE]... [--json]",
	summary:  "fill in a prompt and print its messages",
	run:      runPrompt,
}

// argFlags collects repeated --arg KEY=VALUE.
type argFlags map[string]string

func (a argFlags) String() string { return "" }

func (a argFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	a[k] = val
	return nil
}

func runPrompt(c *cli, args []string) error {
	fs := c.flags(`Fill in one prompt of an MCP server with its arguments and print its
messages, each after its role.`)
	vals := argFlags{}
	fs.Var(vals, "arg", "an argument as `KEY=VALUE` (repeat for more)")
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	return unary(c, func(ctx context.Context, k *conn) (*pb.GetPromptResponse, error) {
		return pb.NewFeatureServiceClient(k.cc).GetPrompt(ctx, &pb.GetPromptRequest{Name: pos[0], Arguments: vals})
	}, func(resp *pb.GetPromptResponse) error {
		for _, m := range resp.GetMessages() {
			fmt.Fprintf(c.stdout, "%s: %s\n", m.GetRole(), describeContent(m.GetContent()))
		}
		return nil
	})
}

// describeContent is a prompt message as one line of text.
func describeContent(p *pb.Content) string {
	switch k := p.GetKind().(type) {
	case *pb.Content_Text:
		return k.Text.GetText()
	case *pb.Content_Image:
		return fmt.Sprintf("[image %s, %d bytes]", k.Image.GetMimeType(), len(k.Image.GetData()))
	case *pb.Content_Audio:
		return fmt.Sprintf("[audio %s, %d bytes]", k.Audio.GetMimeType(), len(k.Audio.GetData()))
	case *pb.Content_Resource:
		if t, ok := k.Resource.GetContents().(*pb.ResourceContent_Text); ok {
			return fmt.Sprintf("[resource %s] %s", k.Resource.GetUri(), t.Text)
		}
		return fmt.Sprintf("[resource %s]", k.Resource.GetUri())
	}
	return "[unknown content]"
}

// printRows prints a table, or empty when there are no rows.
func (c *cli) printRows(empty, header string, rows [][]string) error {
	if len(rows) == 0 {
		fmt.Fprintln(c.stdout, empty)
		return nil
	}
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
