package mcp

//lint:file-ignore SA1019 sampling is deprecated in the newest MCP protocol but still what servers on the earlier ones (server-everything among them) ask for; toolnexus passes it to the caller.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolnexus/toolnexus/internal/plainjson"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The PendingRequest kinds an MCP server's requests become.
const (
	KindElicitation = "elicitation"
	KindSampling    = "sampling"
	// KindRoots is an upstream on 2026-07-28 asking for the client's
	// roots (roundtrip.go); older upstreams are offered no roots.
	KindRoots = "roots"
)

// The elicitation actions (MCP ElicitResult.action).
const (
	actionAccept  = "accept"
	actionDecline = "decline"
	actionCancel  = "cancel"
)

// codeDeclined is the JSON-RPC error a declined or unanswered sampling
// request gets (sampling has no decline result; MCP clients answer -1).
const codeDeclined = -1

// offerAnswers declares the elicitation and sampling capabilities the
// server's config leaves on, with the handlers that suspend the call.
func (s *Source) offerAnswers(opts *sdk.ClientOptions, sess *session) {
	if s.cfg.elicitation() {
		opts.ElicitationHandler = s.elicitHandler(sess)
	}
	if s.cfg.sampling() {
		opts.CreateMessageHandler = s.sampleHandler(sess)
	}
}

// elicitHandler answers a server's elicitation/create with what the caller
// answers: accept with its content, decline, or cancel when nobody answered
// in time (or the request belonged to no single call).
func (s *Source) elicitHandler(sess *session) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		p := req.Params
		mode := p.Mode
		if mode == "" {
			mode = "form"
		}
		data := map[string]any{"mode": mode}
		if p.RequestedSchema != nil {
			data["requestedSchema"] = plainjson.Of(p.RequestedSchema)
		}
		a, declined := s.serverAsk(ctx, sess, tool.Pending{Kind: KindElicitation, Prompt: p.Message, URL: p.URL, Data: data}, data["requestedSchema"])
		switch {
		case declined != "":
			return &sdk.ElicitResult{Action: actionCancel}, nil // an elicitation result has no room for the reason; the call's result has it
		case !a.OK:
			return &sdk.ElicitResult{Action: actionDecline}, nil
		}
		content, _ := plainjson.Of(a.Data).(map[string]any)
		return &sdk.ElicitResult{Action: actionAccept, Content: content}, nil
	}
}

// sampleHandler answers a server's sampling/createMessage with the
// CreateMessageResult the caller (its agent's model) produced.
func (s *Source) sampleHandler(sess *session) func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	return func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
		data, ok := plainjson.Of(req.Params).(map[string]any)
		if !ok {
			// Sent empty, the caller's model would answer a request it
			// never saw: refuse it to the server instead.
			return nil, &jsonrpc.Error{Code: codeDeclined, Message: "the sampling request's parameters could not be encoded as JSON to show the caller"}
		}
		delete(data, "_meta")
		a, declined := s.serverAsk(ctx, sess, tool.Pending{Kind: KindSampling, Prompt: lastUserText(req.Params), Data: data}, nil)
		switch {
		case declined != "":
			return nil, &jsonrpc.Error{Code: codeDeclined, Message: "toolnexus declined the sampling request: " + declined}
		case !a.OK:
			msg := "the caller declined the sampling request"
			if a.Reason != "" {
				msg += ": " + a.Reason
			}
			return nil, &jsonrpc.Error{Code: codeDeclined, Message: msg}
		}
		res, err := samplingResult(a.Data)
		if err != nil { // checked before delivery; kept for safety
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		return res, nil
	}
}

// checkAnswer refuses, before the server sees it, an answer it would
// refuse: elicitation content that is not an object matching
// requestedSchema, a sampling result that is not a CreateMessageResult. ""
// means it is fine; a decline always is.
func checkAnswer(e *pending.Entry, a tool.Answer) string {
	if !a.OK {
		return ""
	}
	switch e.Kind {
	case KindElicitation:
		content, ok := plainjson.Of(a.Data).(map[string]any)
		if !ok {
			return "the elicitation answer's data must be an object with the fields of requestedSchema"
		}
		if e.Check == nil {
			return ""
		}
		if err := validateAgainst(e.Check, content); err != nil {
			return "the answer does not match the requestedSchema (correct it and answer again): " + err.Error()
		}
	case KindSampling:
		if _, err := samplingResult(a.Data); err != nil {
			return err.Error()
		}
	case KindRoots:
		if _, err := rootsResult(a.Data); err != nil {
			return err.Error()
		}
	}
	return ""
}

// samplingResult reads a sampling answer: a CreateMessageResult
// ({"role", "content", "model", "stopReason"}), or just its text.
func samplingResult(v any) (*sdk.CreateMessageResult, error) {
	if text, ok := v.(string); ok {
		return &sdk.CreateMessageResult{Role: "assistant", Model: "unknown", Content: &sdk.TextContent{Text: text}}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the sampling answer is not JSON: %v", err)
	}
	var res sdk.CreateMessageResult
	if err := json.Unmarshal(b, &res); err != nil || res.Content == nil {
		return nil, fmt.Errorf(`the sampling answer's data must be a CreateMessageResult such as {"role": "assistant", "content": {"type": "text", "text": "..."}, "model": "..."}, or a string`)
	}
	if res.Role == "" {
		res.Role = "assistant"
	}
	if res.Model == "" {
		res.Model = "unknown"
	}
	return &res, nil
}

// validateAgainst checks v against a JSON Schema given as plain JSON values.
func validateAgainst(schema any, v any) error {
	sch, err := compileSchema(schema)
	if err != nil {
		return fmt.Errorf("the server's schema does not compile: %v", err)
	}
	return validateCompiled(sch, v)
}

// validateCompiled checks v (plain JSON values) against a compiled schema.
func validateCompiled(sch *jsonschema.Schema, v any) error {
	vb, err := json.Marshal(v)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(vb))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// compileSchema compiles a JSON Schema given as plain JSON values.
func compileSchema(schema any) (*jsonschema.Schema, error) {
	sb, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sb))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	// An absolute URL of no file: a relative name would be resolved
	// against the server's working directory, and the caller told
	// "file:///<server cwd>/schema.json" in every validation error.
	const url = "toolnexus:///elicitation/requestedSchema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// lastUserText is the text of the last user message of a sampling request:
// what a person would be shown as the question.
func lastUserText(p *sdk.CreateMessageParams) string {
	if p == nil {
		return ""
	}
	for i := len(p.Messages) - 1; i >= 0; i-- {
		m := p.Messages[i]
		if m == nil || m.Role != "user" {
			continue
		}
		if t, ok := m.Content.(*sdk.TextContent); ok {
			return t.Text
		}
	}
	return p.SystemPrompt
}
