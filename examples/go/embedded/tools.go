package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// source labels these tools in ListTools, ListSources and the metrics, so a
// dashboard filtered by source="acme" shows exactly your own tools.
const source = "acme"

// convertArgs is unit_convert's input. tool.Typed derives the JSON Schema the
// model sees from it: field names from the json tags, required unless
// omitempty, descriptions from the jsonschema tags.
type convertArgs struct {
	Value float64 `json:"value" jsonschema:"description=The quantity to convert"`
	From  string  `json:"from" jsonschema:"description=Unit of value: m, km, ft or mi"`
	To    string  `json:"to" jsonschema:"description=Unit wanted: m, km, ft or mi"`
}

// converted is rendered as JSON, the output the model reads.
type converted struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// metres per unit.
var lengthUnits = map[string]float64{"m": 1, "km": 1000, "ft": 0.3048, "mi": 1609.344}

func unitConvert(_ context.Context, a convertArgs) (any, error) {
	from, ok := lengthUnits[a.From]
	if !ok {
		return nil, fmt.Errorf("unknown unit %q in from; use one of %s", a.From, unitNames())
	}
	to, ok := lengthUnits[a.To]
	if !ok {
		return nil, fmt.Errorf("unknown unit %q in to; use one of %s", a.To, unitNames())
	}
	// Four decimals are plenty for a model and keep the output stable.
	v := math.Round(a.Value*from/to*1e4) / 1e4
	return converted{Value: v, Unit: a.To}, nil
}

func unitNames() string {
	names := make([]string, 0, len(lengthUnits))
	for n := range lengthUnits {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// ticketArgs is ticket_status's input.
type ticketArgs struct {
	ID string `json:"id" jsonschema:"description=Ticket id such as T-1"`
}

// tickets stands in for your own system of record.
var tickets = map[string]string{
	"T-1": "open: login page times out under load",
	"T-2": "closed: typo in the invoice footer",
}

func ticketStatus(_ context.Context, a ticketArgs) (any, error) {
	if s, ok := tickets[a.ID]; ok {
		return s, nil
	}
	known := make([]string, 0, len(tickets))
	for id := range tickets {
		known = append(known, id)
	}
	slices.Sort(known)
	// A returned error is a failed result (is_error) the model reads and
	// can recover from, never a gRPC error.
	return nil, fmt.Errorf("ticket %q not found; known tickets: %s", a.ID, strings.Join(known, ", "))
}

// tools builds the tools once at start-up: the schemas are derived here,
// not on every call.
func tools() []tool.Tool {
	return []tool.Tool{
		tool.Must(tool.Typed("unit_convert", unitConvert,
			tool.WithDescription("Convert a length between metres (m), kilometres (km), feet (ft) and miles (mi)."),
			tool.WithSource(source))),
		tool.Must(tool.Typed("ticket_status", ticketStatus,
			tool.WithDescription("Look up the status of a support ticket by its id."),
			tool.WithSource(source))),
	}
}
