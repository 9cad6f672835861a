package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The tools run the same without a server; a failing call is a result the
// model reads, not an error.
func Example_tools() {
	for _, tl := range tools() {
		fmt.Println(tl.Name, tl.Source, string(tl.InputSchema))
	}
	convert, ticket := tools()[0], tools()[1]
	res := convert.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"value":5280,"from":"ft","to":"mi"}`)})
	fmt.Println(res.Output, res.IsError)
	res = ticket.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"id":"T-3"}`)})
	fmt.Println(res.Output, res.IsError)
	// Output:
	// unit_convert acme {"additionalProperties":false,"properties":{"from":{"description":"Unit of value: m, km, ft or mi","type":"string"},"to":{"description":"Unit wanted: m, km, ft or mi","type":"string"},"value":{"description":"The quantity to convert","type":"number"}},"required":["value","from","to"],"type":"object"}
	// ticket_status acme {"additionalProperties":false,"properties":{"id":{"description":"Ticket id such as T-1","type":"string"}},"required":["id"],"type":"object"}
	// {"value":1,"unit":"mi"} false
	// ticket "T-3" not found; known tickets: T-1, T-2 true
}
