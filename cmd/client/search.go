package main

import (
	"context"
	"fmt"
	"strings"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

var cmdSearch = &command{
	name:     "search",
	synopsis: "QUERY... [--limit N] [--source S]... [--json]",
	summary:  "find tools by what they do (SCORE NAME SOURCE DESCRIPTION), best first",
	run:      runSearch,
}

func runSearch(c *cli, args []string) error {
	fs := c.flags(`Rank the tools this caller may use against a free-text query, best first:
  toolnexus search open an issue on github
The words after search are the query (quote them or not). With --json,
prints {"tools": [{"tool", "score"}], "revision"}.`)
	var srcs multi
	fs.Var(&srcs, "source", "only tools from source `S` (repeatable, or a,b)")
	limit := fs.Int("limit", 10, "at most `N` tools (the server caps it at 100)")
	pos, err := fs.parse(args, 1, -1)
	if err != nil {
		return err
	}
	if *limit < 1 {
		return usagef("--limit must be at least 1")
	}
	query := strings.Join(pos, " ")
	return unary(c, func(ctx context.Context, k *conn) (*pb.SearchToolsResponse, error) {
		return k.reg.SearchTools(ctx, &pb.SearchToolsRequest{Query: query, PageSize: int32(min(*limit, 1<<20)), Sources: srcs})
	}, func(resp *pb.SearchToolsResponse) error {
		if len(resp.GetTools()) == 0 {
			_, err := fmt.Fprintf(c.stdout, "no tool matches %q; try other words, or `toolnexus list`\n", query)
			return err
		}
		tw := newTable(c.stdout)
		fmt.Fprintln(tw, "SCORE\tNAME\tSOURCE\tDESCRIPTION")
		for _, h := range resp.GetTools() {
			t := h.GetTool()
			fmt.Fprintf(tw, "%.2f\t%s\t%s\t%s\n", h.GetScore(), t.GetName(), t.GetSource(), cell(t.GetDescription(), descriptionWidth))
		}
		return tw.Flush()
	})
}
