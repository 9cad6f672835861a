package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func ExampleNew() {
	greet, err := tool.New("greet", func(ctx context.Context, call tool.Call) tool.Result {
		var args struct {
			Name string `json:"name"`
		}
		if err := call.Decode(&args); err != nil || args.Name == "" {
			return tool.Failure("greet: name is required", nil)
		}
		return tool.Success("hello "+args.Name, map[string]any{"chars": len(args.Name)})
	}, tool.WithDescription("Say hello"))
	if err != nil {
		panic(err)
	}
	fmt.Println(greet.Name, greet.Source, string(greet.InputSchema))

	res := greet.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"name":"Ada"}`)})
	fmt.Println(res.Output, res.Metadata["chars"], res.Resolved())

	res = greet.Execute(context.Background(), tool.Call{})
	fmt.Println(res.Output, res.IsError, res.Resolved())
	// Output:
	// greet custom {"type":"object"}
	// hello Ada 3 ok
	// greet: name is required true tool_error
}

func ExampleNative() {
	add := tool.Must(tool.Native("add", func(ctx context.Context, args map[string]any) (any, error) {
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		if b == 0 {
			return nil, fmt.Errorf("add: b must be non-zero")
		}
		// Any value that is not a string or a Result is rendered as JSON.
		return map[string]float64{"sum": a + b}, nil
	}, tool.WithDescription("Add two numbers")))

	res := add.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"a":2,"b":3}`)})
	fmt.Println(res.Output, res.IsError)
	res = add.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"a":2}`)})
	fmt.Println(res.Output, res.IsError)
	// Output:
	// {"sum":5} false
	// add: b must be non-zero true
}

func ExampleTyped() {
	type shoutArgs struct {
		Text  string `json:"text" description:"what to shout"`
		Times int    `json:"times,omitempty"`
	}
	shout := tool.Must(tool.Typed("shout", func(ctx context.Context, a shoutArgs) (any, error) {
		return strings.Repeat(strings.ToUpper(a.Text)+"!", max(a.Times, 1)), nil
	}))
	fmt.Println(string(shout.InputSchema))

	res := shout.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"text":"hi","times":2}`)})
	fmt.Println(res.Output)
	res = shout.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"text":"hi","times":"two"}`)})
	fmt.Println(res.Output, res.Resolved())
	// Output:
	// {"additionalProperties":false,"properties":{"text":{"description":"what to shout","type":"string"},"times":{"type":"integer"}},"required":["text"],"type":"object"}
	// HI!HI!
	// invalid arguments: field "times": expected integer, got string invalid_arguments
}

func ExampleSanitize() {
	fmt.Println(tool.Sanitize("github/search.issues"))
	fmt.Println(tool.Sanitize("résumé"))
	// Output:
	// github_search_issues
	// r_sum_
}
