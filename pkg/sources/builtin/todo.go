package builtin

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

type todoItem struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

type todoArgs struct {
	Todos *[]todoItem `json:"todos"`
}

// todowrite renders the list it is given. It keeps no state: the model
// sends the whole list every time, and reads it back as a checklist.
func (t *toolset) todowrite(_ context.Context, c tool.Call) tool.Result {
	var a todoArgs
	if r := decodeArgs("todowrite", c, &a); r != nil {
		return *r
	}
	if a.Todos == nil {
		return *invalid("todowrite: todos is required (an array of {id, text, completed})")
	}
	// Metadata carries the list as plain JSON values, as the model sent it.
	var raw struct {
		Todos []any `json:"todos"`
	}
	_ = json.Unmarshal(c.Arguments, &raw)
	if raw.Todos == nil {
		raw.Todos = []any{}
	}
	meta := map[string]any{"todos": raw.Todos}
	if len(*a.Todos) == 0 {
		return tool.Success("(no todos)", meta)
	}
	lines := make([]string, len(*a.Todos))
	for i, td := range *a.Todos {
		box := "[ ] "
		if td.Completed {
			box = "[x] "
		}
		lines[i] = box + td.Text
	}
	return tool.Success(strings.Join(lines, "\n"), meta)
}
