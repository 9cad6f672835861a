package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestQuestionSuspendsThenAnswers(t *testing.T) {
	k := newKit(t)
	args := `{"questions":[{"question":"Pick a color?","header":"Color","options":["red","green"]},{"question":"Confirm?"}]}`
	res := k.run("question", args)
	if !res.IsError || res.Resolved() != tool.OutcomePending || res.Pending == nil {
		t.Fatalf("result = %+v, want a pending result", res)
	}
	p := res.Pending
	if p.Kind != "question" {
		t.Errorf("kind = %q, want question", p.Kind)
	}
	if want := "Pick a color? (options: red, green)\nConfirm?"; p.Prompt != want {
		t.Errorf("prompt = %q, want %q", p.Prompt, want)
	}
	if want := `{"questions":[{"header":"Color","options":["red","green"],"question":"Pick a color?"},{"question":"Confirm?"}]}`; jsonOf(t, p.Data) != want {
		t.Errorf("data = %s, want %s", jsonOf(t, p.Data), want)
	}
	if !strings.HasPrefix(p.ID, "question_") {
		t.Errorf("id = %q", p.ID)
	}
	// Asked again while open, by the same call (whitespace and key order
	// aside): the same question; other questions are another.
	again := k.run("question", strings.ReplaceAll(args, ",", ", "))
	if again.Pending == nil || again.Pending.ID != p.ID {
		t.Errorf("second ID = %+v, want %q", again.Pending, p.ID)
	}
	other := k.run("question", `{"questions":[{"question":"Other?"}]}`)
	if other.Pending == nil || other.Pending.ID == p.ID {
		t.Errorf("other question got the same ID %q", p.ID)
	}

	var data any
	must(t, json.Unmarshal([]byte(`{"answers": ["red"]}`), &data))
	// The resumed call: the answer's data comes back as compact JSON, once.
	check(t, k.answer(args, p.ID, tool.Answer{OK: true, Data: data}), want{output: `{"answers":["red"]}`, outcome: tool.OutcomeOK})
	check(t, k.answer(args, p.ID, tool.Answer{OK: true, Data: data}),
		want{output: "question: no pending request has this id; it was already answered, or never existed", isError: true, outcome: tool.OutcomeToolError})

	for _, c := range []struct {
		name string
		a    tool.Answer
		want want
	}{
		{"empty", tool.Answer{OK: true}, want{output: "{}", outcome: tool.OutcomeOK}},
		{"declined", tool.Answer{Reason: "not now"}, want{output: "question: the user declined to answer: not now", isError: true, outcome: tool.OutcomeToolError}},
		// Data without ok is still an answer: a caller that forgot the
		// flag must not turn a real answer into a decline.
		{"data without ok", tool.Answer{Data: data}, want{output: `{"answers":["red"]}`, outcome: tool.OutcomeOK}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := k.run("question", args).Pending
			check(t, k.answer(args, p.ID, c.a), c.want)
		})
	}
}

// answer executes the question tool with args and an answer to id.
func (k *kit) answer(args, id string, a tool.Answer) tool.Result {
	a.ID = id
	tl := k.tools["question"]
	return tl.Execute(context.Background(), tool.Call{Name: "question", Arguments: json.RawMessage(args), Answer: &a})
}

func TestQuestionErrors(t *testing.T) {
	k := newKit(t)
	tests := []struct {
		name string
		args string
		want string
	}{
		{"missing", `{}`, "question: questions is required (a non-empty array of {question, header, options, multiple})"},
		{"empty", `{"questions": []}`, "question: questions is required (a non-empty array of {question, header, options, multiple})"},
		{"no question text", `{"questions": [{"question": "ok?"}, {"header": "h"}]}`, "question: questions[1].question is required"},
		{"unknown field", `{"questions": [{"question": "ok?", "choices": ["a"]}]}`, `question: invalid arguments: unknown field "choices"; see the tool's input schema`},
		{"not an object", `[1]`, "question: invalid arguments: arguments must be a JSON object, not array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, k.run("question", tc.args), want{output: tc.want, isError: true, outcome: tool.OutcomeInvalidArguments})
		})
	}
}

func TestTodowrite(t *testing.T) {
	k := newKit(t)
	tests := []struct {
		name string
		args string
		want want
	}{
		{"list", `{"todos":[{"id":"1","text":"write tests","completed":true},{"id":"2","text":"ship it","completed":false},{"text":"no id"}]}`,
			want{output: "[x] write tests\n[ ] ship it\n[ ] no id", meta: map[string]any{"todos": []any{
				map[string]any{"id": "1", "text": "write tests", "completed": true},
				map[string]any{"id": "2", "text": "ship it", "completed": false},
				map[string]any{"text": "no id"},
			}}}},
		{"empty", `{"todos":[]}`, want{output: "(no todos)", meta: map[string]any{"todos": []any{}}}},
		{"missing", `{}`, want{output: "todowrite: todos is required (an array of {id, text, completed})", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"wrong type", `{"todos":[{"text":"x","completed":"yes"}]}`,
			want{output: `todowrite: invalid arguments: field "todos.completed" must be a boolean, not string`, isError: true, outcome: tool.OutcomeInvalidArguments}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, k.run("todowrite", tc.args), tc.want) })
	}
	// No state: a second call shows only its own list.
	check(t, k.run("todowrite", `{"todos":[{"id":"9","text":"only","completed":false}]}`), want{output: "[ ] only"})
}
