package tool

import (
	"context"
	"errors"
	"time"
)

// Outcome classifies how a call ended. The zero value means "derive it from
// IsError": OutcomeOK for a success, OutcomeToolError for a failure.
type Outcome uint8

// The outcomes, mirroring toolnexus.v1.Outcome.
const (
	OutcomeUnspecified Outcome = iota
	OutcomeOK
	OutcomeToolError
	OutcomeUnknownTool
	OutcomePanic
	OutcomeTimeout
	OutcomeCanceled
	OutcomeInvalidArguments
	OutcomeDenied
	OutcomePending
)

var outcomeNames = [...]string{
	OutcomeUnspecified:      "unspecified",
	OutcomeOK:               "ok",
	OutcomeToolError:        "tool_error",
	OutcomeUnknownTool:      "unknown_tool",
	OutcomePanic:            "panic",
	OutcomeTimeout:          "timeout",
	OutcomeCanceled:         "canceled",
	OutcomeInvalidArguments: "invalid_arguments",
	OutcomeDenied:           "denied",
	OutcomePending:          "pending",
}

// String is the lowercase name used as the metrics label ("ok", "tool_error", ...).
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unspecified"
}

// Result is what one tool call produced.
type Result struct {
	// Output is the text the model reads.
	Output string
	// IsError marks a failed call; Output then says why.
	IsError bool
	// Metadata holds structured, tool-specific details. It must be
	// JSON-encodable (strings, numbers, bools, nil, []any, map[string]any, or
	// values that encoding/json handles). A source may return the same
	// map in many results: it is read-only, and whoever adds to a result's
	// metadata (truncation) puts a copy in its place.
	Metadata map[string]any
	// Outcome refines IsError. Leave it zero and Resolved derives it.
	Outcome Outcome
	// Pending is set when the tool suspended (Outcome == OutcomePending).
	Pending *Pending
	// Throttled is set when a rate limit refused the call before it ran.
	// Front-ends answer it as their wire's throttle (gRPC
	// RESOURCE_EXHAUSTED, JSON-RPC -32029), not as a result.
	Throttled *Throttle
	// Content holds every part of a rich result (text, images, audio,
	// resources) in order; Output is then its text view. Nil for a
	// text-only result. Build it with Rich.
	Content []Content
	// StructuredContent is the result as a JSON object (MCP
	// structuredContent), when the tool returns one; Output then holds its
	// JSON text. Plain JSON values only, read-only like Metadata.
	StructuredContent map[string]any
	// Refusal is set when a sandbox guard or limit refused the call
	// (counted in toolnexus_sandbox_refusals_total); see Refusal.
	Refusal Refusal
}

// Resolved returns the outcome, deriving it from IsError when unset.
func (r Result) Resolved() Outcome {
	if r.Outcome != OutcomeUnspecified {
		return r.Outcome
	}
	if r.IsError {
		return OutcomeToolError
	}
	return OutcomeOK
}

// Success is a successful result.
func Success(output string, metadata map[string]any) Result {
	return Result{Output: output, Metadata: metadata}
}

// Failure is a failed result the model can read and retry from.
func Failure(output string, metadata map[string]any) Result {
	return Result{Output: output, IsError: true, Metadata: metadata}
}

// FailureWith is a failed result with a specific outcome.
func FailureWith(outcome Outcome, output string) Result {
	return Result{Output: output, IsError: true, Outcome: outcome}
}

// Pending describes what a suspended call waits for.
type Pending struct {
	ID        string
	Kind      string
	Prompt    string
	URL       string
	Data      map[string]any
	ExpiresAt time.Time
	// Key is the asker's own name for the request when it is one of a
	// round of requests asked at once (an MCP server's inputRequests
	// key); "" for a request asked alone.
	Key string
	// Round names the round when Key is set: the same for each of its
	// requests, another for every other round (of this call or any
	// other), so that an answer given for one round is never taken for
	// another.
	Round string
	// Also are the round's other requests not answered yet, each with its
	// Key and no ID (it gets one when its turn comes): a door whose client
	// answers a round whole shows them with this one.
	Also []Pending
}

// Suspend is the result of a call that waits for an answer: IsError is set
// (the call did not finish) and the outcome is OutcomePending.
func Suspend(p Pending) Result {
	return Result{Output: p.Prompt, IsError: true, Outcome: OutcomePending, Pending: &p}
}

// Answer resumes a suspended call.
type Answer struct {
	ID     string
	OK     bool
	Data   any
	Reason string
}

// Throttle says which rate limit refused a call and when a retry would be
// admitted.
type Throttle struct {
	// Limit is the limit's config key, e.g. "limits.principals.agent-a".
	Limit      string
	RetryAfter time.Duration
}

// ContextResult is the failure for a call stopped by its context: outcome
// OutcomeTimeout for a deadline, OutcomeCanceled for a cancellation. what
// names the tool in the text ("bash: canceled"). A deadline with a cause
// of its own (context.WithDeadlineCause: the server's limits.timeout) is
// named by it ("bash: timed out after 20ms (limits.timeout)").
func ContextResult(ctx context.Context, what string) Result {
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		if cause := context.Cause(ctx); cause != nil && cause != err {
			return FailureWith(OutcomeTimeout, what+": "+cause.Error())
		}
		return FailureWith(OutcomeTimeout, what+": deadline exceeded")
	}
	return FailureWith(OutcomeCanceled, what+": canceled")
}
