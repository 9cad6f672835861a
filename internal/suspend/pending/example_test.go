package pending_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// greeting resumes a portable request: all it needs is its state.
type greeting struct{ name string }

func (g greeting) Resume(_ context.Context, e *pending.Entry, c tool.Call) tool.Result {
	if err := e.Deliver(*c.Answer); err != nil {
		return tool.Failure(err.Error(), nil)
	}
	return tool.Success(fmt.Sprintf("hello %s, you said %v", g.name, c.Answer.Data), nil)
}

// A portable request opened on one replica is answered on another that
// shares the store: Store.Answer finds it, checks the call (here with its
// arguments in another key order) and resumes it through the source's
// Restore.
func ExampleStore_Answer() {
	ctx := context.Background()
	shared := suspend.NewMemory(nil, 0)
	a, b := pending.New(shared, pending.Limits{}), pending.New(shared, pending.Limits{})
	call := tool.Call{Name: "greet", Arguments: json.RawMessage(`{"who": "Ada", "lang": "en"}`), Owner: tool.Owner{Principal: "alice"}}
	e, _ := a.OpenPortable(ctx, call, "elicitation", []byte(`"Ada"`), false)

	restore := func(e *pending.Entry) (pending.Resumer, error) {
		var name string
		err := json.Unmarshal(e.State, &name)
		return greeting{name}, err
	}
	answer := tool.Call{Name: "greet", Arguments: json.RawMessage(`{"lang":"en","who":"Ada"}`), Owner: call.Owner,
		Answer: &tool.Answer{ID: e.ID, OK: true, Data: "hi"}}
	fmt.Println(b.Answer(ctx, answer, pending.Answering{Label: "greet", Restore: restore}).Output)
	fmt.Println(b.Answer(ctx, answer, pending.Answering{Label: "greet", Restore: restore}).Output)
	// Output:
	// hello Ada, you said hi
	// greet: no pending request has this id; it was already answered, or never existed
}
