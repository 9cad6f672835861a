package builtin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

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
// executes the tool again with Call.Answer set, which finishes it.
//
// The pending ID is derived from the arguments ("question-" and 16 hex
// digits of their SHA-256), so it is stable: the same questions asked again
// get the same ID, and no state is kept between the two calls.
func (t *toolset) question(_ context.Context, c tool.Call) tool.Result {
	if c.Answer != nil {
		return answered(c.Answer)
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
	return tool.Suspend(tool.Pending{
		ID:     pendingID(c.Arguments),
		Kind:   "question",
		Prompt: strings.Join(lines, "\n"),
		Data:   map[string]any{"questions": raw.Questions},
	})
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

func pendingID(args json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, args) != nil {
		buf.Reset()
		buf.Write(args)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "question-" + hex.EncodeToString(sum[:8])
}
