package feature

import (
	"context"
	"encoding/json"
)

// PromptInput is a round of input requests an MCP server on 2026-07-28
// answers prompts/get with (input_required), on its way up, and the
// client's answers to it, on the way down. Only a door that can show the
// round to its client and carry the answers back asks for it
// (WithPromptInput); for any other, a server's round is an error.
type PromptInput struct {
	// Requests are the server's inputRequests, as JSON (keyed by its own
	// keys); State is its opaque requestState.
	Requests json.RawMessage
	State    string
	// Responses are the client's inputResponses to Requests, as JSON
	// (nil on a first call).
	Responses json.RawMessage
}

type promptInputKey struct{}

// WithPromptInput says the door takes a prompt's round of input requests
// (in the result's Input) and, when in carries Requests, answers a round
// the server asked before.
func WithPromptInput(ctx context.Context, in *PromptInput) context.Context {
	return context.WithValue(ctx, promptInputKey{}, in)
}

// PromptInputFrom is the door's PromptInput, nil when it takes none.
func PromptInputFrom(ctx context.Context) *PromptInput {
	in, _ := ctx.Value(promptInputKey{}).(*PromptInput)
	return in
}
