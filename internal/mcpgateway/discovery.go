package mcpgateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/search"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Progressive discovery (server.mcp.discovery: "search"). A catalog of
// thousands of tools costs a model tens of thousands of tokens per turn in
// tools/list and makes its choice worse; in this mode tools/list shows only
// two tools of the gateway's own, search_tools and call_tool, plus the
// tools pinned by server.mcp.pinned. Every tool stays registered with the
// SDK, so a tool the model found by search is also callable by its own
// name, and every call (by name or through call_tool) is the same core
// Execute with the same allowlists, policy, approvals and limits.
const (
	DiscoveryList   = "list"   // the default: tools/list shows every tool
	DiscoverySearch = "search" // tools/list shows search_tools, call_tool and the pinned tools

	SearchToolName = "search_tools"
	CallToolName   = "call_tool"

	defaultSearchHits = 5
	maxSearchHits     = 20
)

type discovery struct {
	pinned *auth.Principal // server.mcp.pinned as an allowlist; nil pins nothing
	index  search.Cache
}

func isDiscoveryTool(name string) bool { return name == SearchToolName || name == CallToolName }

// listed reports whether tools/list shows the tool in discovery mode.
func (d *discovery) listed(name, source string) bool {
	return isDiscoveryTool(name) || d.pinned != nil && d.pinned.Allows(name, source)
}

func newDiscovery(g *Gateway, pinned []string, embedder *search.Embedder) *discovery {
	d := &discovery{}
	d.index.Embedder = embedder
	d.index.Servers = func() map[string]search.ServerInfo {
		out := map[string]search.ServerInfo{}
		for _, s := range g.core.Sources() {
			out[s.Kind+"/"+s.Name] = search.ServerInfo{Title: s.Title, Description: s.Description}
		}
		return out
	}
	if len(pinned) > 0 {
		d.pinned = auth.NewPrincipal("server.mcp.pinned", pinned, false)
	}
	g.sdk.AddTool(&mcp.Tool{
		Name:        SearchToolName,
		Description: searchToolsDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"the action and what it acts on, in a few plain words, with the product's name when it matters: \"create an issue on GitHub\""},` +
			`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"how many tools to return (default 5)"}},` +
			`"required":["query"]}`),
	}, g.searchTools)
	g.sdk.AddTool(&mcp.Tool{
		Name:        CallToolName,
		Description: "Call a tool found with search_tools by its name, with its arguments.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"the tool's name, as search_tools returned it"},` +
			`"arguments":{"type":"object","description":"the tool's arguments, matching its input schema"}},` +
			`"required":["name"]}`),
	}, g.callByName)
	return d
}

// registryTools allows the registry's tools, not the gateway's own
// search_tools and call_tool: a registry tool of either name is not served
// in discovery mode.
type registryTools struct{}

func (registryTools) Allows(name, _ string) bool { return !isDiscoveryTool(name) }
func (registryTools) ViewKey() string            { return "mcp-registry" }

// searchToolsDescription tells the model how to phrase a query that finds
// a tool: the ranking matches words, so the words a tool's own
// documentation would use work best, and each hit's reason shows which
// ones did.
const searchToolsDescription = "Find the tools for a task among all the tools this server has. " +
	"Describe the task in a few plain words: the action and the thing it acts on, and the product when it matters " +
	"(\"create an issue on GitHub\", \"resize the browser window\", \"list pods in a namespace\"). " +
	"Prefer the words a tool's documentation would use (\"delete\", \"repository\", \"pull request\") over " +
	"slang or a whole story; one task per search. Each hit has its input schema and a reason naming the words it " +
	"matched and where (name, description, parameters, server): if the best hits matched only an incidental word, " +
	"search again with other words. Call a tool found by its own name, or through call_tool."

type foundTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Reason      string          `json:"reason"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// searchTools answers search_tools with the tools the caller may call: its
// view (what /mcp serves, narrowed by its token and its named view).
func (g *Gateway) searchTools(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Query == "" {
		return toCallToolResult(tool.FailureWith(tool.OutcomeInvalidArguments,
			`search_tools needs {"query": "<what the tool should do>"}, e.g. {"query": "send an email"}`)), nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultSearchHits
	}
	limit = min(limit, maxSearchHits)
	// The ranking is made within the caller's view alone (what /mcp serves,
	// what the token allows, less the gateway's own tools), so neither its
	// scores nor its work depend on tools the caller cannot see.
	view := g.view(req.Extra)
	snap := g.core.Registry().Snapshot()
	hits := g.disc.index.For(snap, view.Search(registryTools{})).Search(in.Query, limit, nil).Hits
	out := struct {
		Tools []foundTool `json:"tools"`
		Hint  string      `json:"hint,omitempty"`
	}{Tools: make([]foundTool, len(hits))}
	for i, h := range hits {
		out.Tools[i] = foundTool{Name: h.Entry.Tool.Name, Description: h.Entry.Tool.Description, Reason: h.Reason, InputSchema: mcpSchema(h.Entry.Tool.InputSchema)}
	}
	if len(hits) == 0 {
		out.Hint = fmt.Sprintf("no tool matches %q; name the action and the thing it acts on in other words", in.Query)
	}
	b, _ := json.Marshal(out)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// callByName answers call_tool: the named tool's ordinary tools/call, which
// the core runs under the caller's view like any (a tool /mcp does not
// serve is unknown here too).
func (g *Gateway) callByName(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Name == "" || isDiscoveryTool(in.Name) {
		return toCallToolResult(tool.FailureWith(tool.OutcomeInvalidArguments,
			`call_tool needs {"name": "<a tool search_tools returned>", "arguments": {...}}`)), nil
	}
	inner := *req
	params := *req.Params
	params.Name, params.Arguments = in.Name, in.Arguments
	inner.Params = &params
	return g.callTool(ctx, &inner)
}

// allPages follows tools/list's cursor to the end. In discovery mode the
// short list must come whole on the first page, wherever the gateway's own
// tools and the pinned ones sort among thousands (the SDK pages at 1,000),
// so a client that reads one page still sees search_tools.
func allPages(ctx context.Context, next mcp.MethodHandler, req mcp.Request, first *mcp.ListToolsResult) (*mcp.ListToolsResult, error) {
	lreq, ok := req.(*mcp.ListToolsRequest)
	if !ok {
		return first, nil
	}
	out := *first
	out.Tools = slices.Clone(first.Tools)
	for cursor := first.NextCursor; cursor != ""; {
		r := *lreq
		r.Params = &mcp.ListToolsParams{Cursor: cursor}
		res, err := next(ctx, "tools/list", &r)
		if err != nil {
			return nil, err
		}
		page, ok := res.(*mcp.ListToolsResult)
		if !ok {
			break
		}
		out.Tools = append(out.Tools, page.Tools...)
		cursor = page.NextCursor
	}
	out.NextCursor = ""
	return &out, nil
}
