package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/plainjson"
	"github.com/toolnexus/toolnexus/internal/telemetry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// errorFallback is the output of an isError result without text.
const errorFallback = "MCP tool returned an error"

// maxPages stops a server whose cursors never end from looping forever.
const maxPages = 1000

// listTools pages through tools/list until nextCursor runs out.
func listTools(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	var all []*sdk.Tool
	params := &sdk.ListToolsParams{}
	seen := map[string]bool{}
	for range maxPages {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			return all, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("the server repeated the cursor %q; its paging is broken", res.NextCursor)
		}
		seen[res.NextCursor] = true
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	return nil, fmt.Errorf("more than %d pages of tools; the server's paging does not end", maxPages)
}

// buildTools turns the server's tool list into registry tools: filtered on
// the original names, named server_tool, schema and description passed
// through. Everything per tool is computed here, once, not per call.
func (s *Source) buildTools(list []*sdk.Tool) []tool.Tool {
	out := make([]tool.Tool, 0, len(list))
	names := make([]string, 0, len(list))
	taken := make(map[string]string, len(list))
	for _, t := range list {
		if t == nil {
			continue
		}
		names = append(names, t.Name)
		if !s.cfg.Tools.Keep(t.Name) {
			continue
		}
		name := s.prefix + tool.Sanitize(t.Name)
		if first, dup := taken[name]; dup {
			s.log.Warn("MCP tool dropped: its name collides with another after sanitizing",
				"server", s.name, "tool", t.Name, "kept", first, "name", name)
			continue
		}
		taken[name] = t.Name
		schema := tool.DefaultInputSchema()
		if t.InputSchema != nil {
			b, err := json.Marshal(t.InputSchema)
			if err == nil && len(b) > 0 && string(b) != "null" {
				schema = b
			}
		}
		out = append(out, s.buildTool(t, name, schema))
	}
	for _, w := range s.cfg.Tools.Unknown(s.name, names) {
		s.log.Warn(w)
	}
	return out
}

// buildTool is one registry tool: the server's name, description, input
// and output schemas and annotations, under the registry name.
func (s *Source) buildTool(t *sdk.Tool, name string, schema json.RawMessage) tool.Tool {
	out := newOutputChecker(t)
	return tool.Tool{
		Name:         name,
		Description:  t.Description,
		InputSchema:  schema,
		Source:       sources.KindMCP.Name,
		Annotations:  annotationsOf(t),
		OutputSchema: out.raw(),
		Run:          s.caller(t.Name, name, out),
	}
}

// caller is the Run function of one tool.
func (s *Source) caller(original, name string, out *outputChecker) tool.Func {
	return func(ctx context.Context, call tool.Call) tool.Result {
		if call.Answer != nil && !s.answersLogin(call.Answer) {
			return out.check(s.resume(ctx, call, name))
		}
		sess, release, instead := s.callSession(ctx, call)
		if sess == nil {
			return *instead
		}
		defer release()
		call.Answer = nil // an answered login (oauth): the call runs afresh
		params := &sdk.CallToolParams{Name: original, Arguments: call.Arguments}
		sess.relay.calls.Add(1)
		defer sess.relay.calls.Add(-1)
		if tool.Streaming(ctx) {
			token, sc := sess.relay.begin(tool.SinkFrom(ctx), params)
			defer sess.relay.end(ctx, token, sc)
		}
		if telemetry.Traced(ctx) {
			// The trace goes on in _meta on every transport (stdio has no
			// headers); streamable HTTP carries the headers too.
			params.Meta = telemetry.InjectMeta(ctx, params.Meta)
		}
		if sess.speaksModern() {
			return out.check(s.callRoundTrip(ctx, sess, params, call, name))
		}
		if s.suspends() {
			return out.check(s.callFlight(ctx, sess, params, call, name))
		}
		res, err := sess.cs.CallTool(ctx, params)
		return out.check(s.finish(ctx, sess, name, res, err))
	}
}

// callSession is the session a call goes out on: with tokenExchange or
// oauth the caller's own, with the caller's token, else the live one;
// release ends the call's hold on it. When there is none, instead is what
// the call returns: a failure saying why (down: answered now rather than
// after a timeout), or with oauth the PENDING login of a caller not
// connected yet.
func (s *Source) callSession(ctx context.Context, call tool.Call) (sess *session, release func(), instead *tool.Result) {
	if s.callers != nil {
		tok, instead := s.callerToken(ctx, call)
		if instead != nil {
			return nil, nil, instead
		}
		c, msg := s.callerSession(ctx, s.callerOf(ctx, call), tok)
		if c == nil {
			r := tool.Failure(msg, s.meta)
			return nil, nil, &r
		}
		return c.sess, func() { s.callers.release(c) }, nil
	}
	if sess = s.live.Load(); sess == nil {
		r := tool.Failure(s.downText(), s.meta)
		return nil, nil, &r
	}
	return sess, func() {}, nil
}

// finish turns what CallTool returned into the call's result.
func (s *Source) finish(ctx context.Context, sess *session, name string, res *sdk.CallToolResult, err error) tool.Result {
	meta := s.meta
	if err == nil {
		return capOutput(mapResult(res, meta), s.maxOutput)
	}
	if ctx.Err() != nil {
		r := tool.ContextResult(ctx, name)
		r.Metadata = meta
		return r
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		// Either the server answered and refused this call, or the
		// SDK judged the HTTP failure transient (502, 503, 504, 429,
		// a dropped connection) and kept the session: this call
		// failed, the server is not down.
		return tool.Failure(s.redact.Apply(err.Error()), meta)
	}
	// The session itself broke (the process died, the server forgot the
	// session): start over.
	s.sessionDown(sess, err)
	return tool.Failure(s.redact.Apply(fmt.Sprintf("MCP server %q is down (restarting): %v", s.name, err)), meta)
}

// capOutput cuts an output longer than the configured cap on a character
// boundary and says so, as the other sources do; a runaway server must not
// flood the model's context.
func capOutput(r tool.Result, max int) tool.Result {
	if len(r.Output) <= max {
		return r
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(r.Output[cut]) {
		cut--
	}
	r.Output = r.Output[:cut] + tool.TruncationNote(int64(len(r.Output)-cut))
	// The source's metadata map is shared by all its results: add to a copy.
	meta := make(map[string]any, len(r.Metadata)+1)
	for k, v := range r.Metadata {
		meta[k] = v
	}
	meta["truncated"] = true
	r.Metadata = meta
	return r
}

// mapResult maps an MCP result to a tool result: isError → the text parts joined by
// a blank line; otherwise the text parts joined by a newline — what a model
// reads, also when the server sent structuredContent beside them (that goes
// to StructuredContent; a server that sent no text at all gets its JSON as
// the text view). When the server returned anything but text, every part is
// also kept, in order, as the result's Content.
func mapResult(res *sdk.CallToolResult, meta map[string]any) tool.Result {
	r := mapText(res, meta)
	r.Content = richContent(res.Content)
	if !r.IsError && res.StructuredContent != nil {
		r.StructuredContent, _ = plainjson.Of(res.StructuredContent).(map[string]any)
	}
	return r
}

func mapText(res *sdk.CallToolResult, meta map[string]any) tool.Result {
	if res.IsError {
		out := joinText(res.Content, "\n\n")
		if out == "" {
			out = errorFallback
		}
		return tool.Failure(out, meta)
	}
	if text := joinText(res.Content, "\n"); text != "" || res.StructuredContent == nil {
		return tool.Success(text, meta)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return tool.Failure("MCP tool returned structured content that is not JSON: "+err.Error(), meta)
	}
	return tool.Success(string(b), meta)
}

// richContent converts the parts when any is not text (nil otherwise: a
// text-only result is all in Output). Parts of kinds MCP may add later are
// skipped.
func richContent(parts []sdk.Content) []tool.Content {
	rich := false
	for _, c := range parts {
		if _, ok := c.(*sdk.TextContent); !ok {
			rich = true
			break
		}
	}
	if !rich {
		return nil
	}
	out := make([]tool.Content, 0, len(parts))
	for _, c := range parts {
		if tc, ok := contentOf(c); ok {
			out = append(out, tc)
		}
	}
	return out
}

func joinText(parts []sdk.Content, sep string) string {
	n := 0
	var one string
	for _, c := range parts {
		if t, ok := c.(*sdk.TextContent); ok {
			n++
			one = t.Text
		}
	}
	if n <= 1 {
		return one
	}
	var b strings.Builder
	first := true
	for _, c := range parts {
		if t, ok := c.(*sdk.TextContent); ok {
			if !first {
				b.WriteString(sep)
			}
			first = false
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
