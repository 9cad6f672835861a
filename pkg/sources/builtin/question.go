package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

type questionItem struct {
	Question string   `json:"question"`
	Header   string   `json:"header"`
	Options  []string `json:"options"`
	Multiple bool     `json:"multiple"`
}

type questionArgs struct {
	Questions []questionItem `json:"questions"`
}

// question suspends the call until a person answers. The first call returns
// a pending result; the caller shows the prompt, collects the answer and
// executes the tool again with the same arguments and Call.Answer set,
// which finishes it.
//
// The question is an entry of the suspended-call store, bound to the call
// that asked (principal, session, tool, canonical arguments), so only that
// call's answer finishes it, once, on whichever replica it reaches; the
// same call asking again while it is open gets the same entry back.
func (t *toolset) question(ctx context.Context, c tool.Call) tool.Result {
	if c.Answer != nil {
		return t.pending.Answer(ctx, c, pending.Answering{Label: "question", Restore: restoreQuestion})
	}
	var a questionArgs
	if r := decodeArgs("question", c, &a); r != nil {
		return *r
	}
	if len(a.Questions) == 0 {
		return *invalid("question: questions is required (a non-empty array of {question, header, options, multiple})")
	}
	lines := make([]string, len(a.Questions))
	for i, q := range a.Questions {
		if strings.TrimSpace(q.Question) == "" {
			return *invalid(fmt.Sprintf("question: questions[%d].question is required", i))
		}
		lines[i] = q.Question
		if len(q.Options) > 0 {
			lines[i] += " (options: " + strings.Join(q.Options, ", ") + ")"
		}
	}
	// Data carries the questions as the model sent them, in plain JSON
	// values (maps and slices), so the server can put them on the wire.
	var raw struct {
		Questions []any `json:"questions"`
	}
	if err := json.Unmarshal(c.Arguments, &raw); err != nil {
		return fail("question: %v", err)
	}
	e, err := t.pending.OpenPortable(ctx, c, "question", nil, true)
	if err != nil {
		return fail("question: %v", err)
	}
	return tool.Suspend(tool.Pending{
		ID:        e.ID,
		Kind:      "question",
		Prompt:    strings.Join(lines, "\n"),
		Data:      map[string]any{"questions": raw.Questions},
		ExpiresAt: e.ExpiresAt,
	})
}

// questionAnswer finishes a question (pending.Resumer): a question keeps
// nothing but its entry, so any replica restores it.
type questionAnswer struct{}

func restoreQuestion(*pending.Entry) (pending.Resumer, error) { return questionAnswer{}, nil }

// Resume takes the answer once and returns it to the model.
func (questionAnswer) Resume(_ context.Context, e *pending.Entry, c tool.Call) tool.Result {
	if err := e.Deliver(*c.Answer); err != nil {
		return fail("question: %v", err)
	}
	return answered(c.Answer)
}

// answered finishes a resumed question: the output is the answer's data as
// compact JSON ({} when there is none) for the model to read.
//
// A decline (ok false and no data) is a failure the model can read, so it
// does not mistake "no answer" for an empty one. An answer that carries
// data counts even when the caller forgot to set ok.
func answered(a *tool.Answer) tool.Result {
	if !a.OK && a.Data == nil {
		msg := "question: the user declined to answer"
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		return tool.Failure(msg, nil)
	}
	if a.Data == nil {
		return tool.Success("{}", nil)
	}
	b, err := json.Marshal(a.Data)
	if err != nil {
		return fail("question: the answer is not JSON-encodable: %v", err)
	}
	return tool.Success(string(b), nil)
}
