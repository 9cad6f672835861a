package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

type address struct {
	Street string `json:"street" description:"street and number"`
	Zip    string `json:"zip,omitempty"`
}

type Embedded struct {
	Trace string `json:"trace,omitempty"`
}

// allKinds exercises every rule of the schema derivation.
type allKinds struct {
	Embedded
	S        string            `json:"s" jsonschema:"description=a string, with a comma,minLength=1"`
	B        bool              `json:"b"`
	I        int               `json:"i"`
	I8       int8              `json:"i8,omitempty"`
	I64      int64             `json:"i64"`
	U        uint              `json:"u"`
	U16      uint16            `json:"u16"`
	F32      float32           `json:"f32"`
	F64      float64           `json:"f64,omitempty"`
	Tags     []string          `json:"tags,omitempty" description:"labels"`
	Grid     [][]int           `json:"grid"`
	Pair     [2]bool           `json:"pair"`
	Counts   map[string]int    `json:"counts,omitempty"`
	Nested   map[string][]bool `json:"nested"`
	Home     address           `json:"home"`
	Work     *address          `json:"work,omitempty"`
	Past     []address         `json:"past"`
	Any      any               `json:"any,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitzero"`
	PtrInt   *int              `json:"ptr_int,omitempty"`
	Untagged string
	OptOnly  string `json:",omitempty"`
	//lint:ignore SA5008 the test proves "-," names a field "-", as encoding/json does
	Dash    string `json:"-,"`
	Skipped string `json:"-"`
	//lint:ignore U1000 proves unexported fields are skipped
	unexposed string
}

const allKindsSchema = `{
  "additionalProperties": false,
  "properties": {
    "-": {"type": "string"},
    "OptOnly": {"type": "string"},
    "Untagged": {"type": "string"},
    "any": {},
    "b": {"type": "boolean"},
    "counts": {"additionalProperties": {"type": "integer"}, "type": "object"},
    "f32": {"type": "number"},
    "f64": {"type": "number"},
    "grid": {"items": {"items": {"type": "integer"}, "type": "array"}, "type": "array"},
    "home": {
      "properties": {
        "street": {"description": "street and number", "type": "string"},
        "zip": {"type": "string"}
      },
      "required": ["street"],
      "type": "object"
    },
    "i": {"type": "integer"},
    "i64": {"type": "integer"},
    "i8": {"type": "integer"},
    "nested": {"additionalProperties": {"items": {"type": "boolean"}, "type": "array"}, "type": "object"},
    "pair": {"items": {"type": "boolean"}, "type": "array"},
    "past": {
      "items": {
        "properties": {
          "street": {"description": "street and number", "type": "string"},
          "zip": {"type": "string"}
        },
        "required": ["street"],
        "type": "object"
      },
      "type": "array"
    },
    "ptr_int": {"type": "integer"},
    "raw": {},
    "s": {"description": "a string, with a comma", "type": "string"},
    "tags": {"description": "labels", "items": {"type": "string"}, "type": "array"},
    "trace": {"type": "string"},
    "u": {"type": "integer"},
    "u16": {"type": "integer"},
    "work": {
      "properties": {
        "street": {"description": "street and number", "type": "string"},
        "zip": {"type": "string"}
      },
      "required": ["street"],
      "type": "object"
    }
  },
  "required": ["s", "b", "i", "i64", "u", "u16", "f32", "grid", "pair", "nested", "home", "past", "Untagged", "-"],
  "type": "object"
}`

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("compact %s: %v", s, err)
	}
	return b.String()
}

func TestSchemaForAllKinds(t *testing.T) {
	t.Parallel()
	got, err := tool.SchemaFor[allKinds]()
	if err != nil {
		t.Fatalf("SchemaFor: %v", err)
	}
	if want := compact(t, allKindsSchema); string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	// A pointer to the struct derives the same schema.
	viaPtr, err := tool.SchemaFor[*allKinds]()
	if err != nil || string(viaPtr) != string(got) {
		t.Errorf("SchemaFor[*T] = %s, %v; want the same as SchemaFor[T]", viaPtr, err)
	}
}

func TestSchemaForEmptyStruct(t *testing.T) {
	t.Parallel()
	got, err := tool.SchemaFor[struct{}]()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("schema = %s", got)
	}
}

type node struct {
	Value    string  `json:"value"`
	Children []*node `json:"children,omitempty"`
}

func TestSchemaForRecursive(t *testing.T) {
	t.Parallel()
	got, err := tool.SchemaFor[node]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"children":{"items":{"type":"object"},"type":"array"},"value":{"type":"string"}},"required":["value"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

func TestSchemaForNotStruct(t *testing.T) {
	t.Parallel()
	_, err := tool.SchemaFor[map[string]any]()
	if err == nil || !strings.Contains(err.Error(), "Typed needs a struct type, got map[string]interface {}") {
		t.Errorf("error = %v, want one naming the type", err)
	}
	_, err = tool.Typed("bad", func(context.Context, []int) (any, error) { return nil, nil })
	if err == nil || !strings.HasPrefix(err.Error(), `tool "bad": Typed needs a struct type, got []int`) {
		t.Errorf("Typed error = %v, want one naming the tool and the type", err)
	}
}

type greetArgs struct {
	Name  string `json:"name" description:"who to greet"`
	Times int    `json:"times,omitempty"`
	Inner struct {
		Loud bool `json:"loud"`
	} `json:"inner,omitempty"`
}

func greetTool(t *testing.T, opts ...tool.Option) tool.Tool {
	t.Helper()
	tl, err := tool.Typed("greet", func(_ context.Context, a greetArgs) (any, error) {
		if a.Name == "" {
			return nil, errors.New("greet: name is required")
		}
		out := strings.Repeat("hello "+a.Name+" ", max(a.Times, 1))
		if a.Inner.Loud {
			out = strings.ToUpper(out)
		}
		return strings.TrimSpace(out), nil
	}, opts...)
	if err != nil {
		t.Fatalf("Typed: %v", err)
	}
	return tl
}

func TestTypedSchemaAndRun(t *testing.T) {
	t.Parallel()
	tl := greetTool(t, tool.WithDescription("Greets"))
	wantSchema := `{"additionalProperties":false,"properties":{"inner":{"properties":{"loud":{"type":"boolean"}},"required":["loud"],"type":"object"},"name":{"description":"who to greet","type":"string"},"times":{"type":"integer"}},"required":["name"],"type":"object"}`
	if string(tl.InputSchema) != wantSchema {
		t.Errorf("schema\n got %s\nwant %s", tl.InputSchema, wantSchema)
	}
	if tl.Description != "Greets" || tl.Source != "custom" {
		t.Errorf("tool = %+v", tl)
	}
	tests := []struct {
		args, output string
		isError      bool
	}{
		{`{"name":"ada"}`, "hello ada", false},
		{" {\"name\":\"ada\"}\n\t ", "hello ada", false}, // surrounding whitespace is fine
		{`{"name":"ada","times":2}`, "hello ada hello ada", false},
		{`{"name":"ada","inner":{"loud":true}}`, "HELLO ADA", false},
		{``, "greet: name is required", true},
		{`null`, "greet: name is required", true},
	}
	for _, tt := range tests {
		res := tl.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(tt.args)})
		if res.Output != tt.output || res.IsError != tt.isError {
			t.Errorf("args %s: got %+v, want %q is_error=%v", tt.args, res, tt.output, tt.isError)
		}
	}
}

func TestTypedSchemaOverride(t *testing.T) {
	t.Parallel()
	custom := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}}}`)
	tl := greetTool(t, tool.WithInputSchema(custom))
	if string(tl.InputSchema) != string(custom) {
		t.Errorf("WithInputSchema did not override the derived schema: %s", tl.InputSchema)
	}
}

func TestTypedDecodeFailureNamesField(t *testing.T) {
	t.Parallel()
	tl := greetTool(t)
	tests := []struct{ args, want string }{
		{`{"name":5}`, `invalid arguments: field "name": expected string, got number`},
		{`{"name":"a","times":"two"}`, `invalid arguments: field "times": expected integer, got string`},
		{`{"name":"a","times":1.5}`, `invalid arguments: field "times": expected integer, got number 1.5`},
		{`{"name":"a","inner":{"loud":"yes"}}`, `invalid arguments: field "inner.loud": expected boolean, got string`},
		{`{"name":"a","inner":[]}`, `invalid arguments: field "inner": expected object, got array`},
		{`{"name":"a","extra":1}`, `invalid arguments: unknown field "extra"`},
		{`[1]`, `invalid arguments: expected a JSON object, got array`},
		{`"x"`, `invalid arguments: expected a JSON object, got string`},
		{`true`, `invalid arguments: expected a JSON object, got boolean`},
		{`{"name":false}`, `invalid arguments: field "name": expected string, got boolean`},
		{`{"name":`, `invalid arguments: unexpected end of JSON input`},
		{`{"name":"a"} {"name":"b"}`, `invalid arguments: unexpected data after the arguments object`},
		{`{"name":"a"}]`, `invalid arguments: unexpected data after the arguments object`},
	}
	for _, tt := range tests {
		res := tl.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(tt.args)})
		if res.Output != tt.want || !res.IsError || res.Outcome != tool.OutcomeInvalidArguments {
			t.Errorf("args %s:\n got %+v\nwant %q (invalid_arguments)", tt.args, res, tt.want)
		}
	}
}

func TestTypedPointerArgs(t *testing.T) {
	t.Parallel()
	tl, err := tool.Typed("p", func(_ context.Context, a *address) (any, error) {
		if a == nil {
			return "nil", nil
		}
		return a.Street, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := tl.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"street":"Main 1"}`)})
	if res.Output != "Main 1" {
		t.Errorf("got %+v", res)
	}
}

func TestTypedNilFunc(t *testing.T) {
	t.Parallel()
	var fn func(context.Context, greetArgs) (any, error)
	if _, err := tool.Typed("t", fn); !errors.Is(err, tool.ErrNoFunc) {
		t.Errorf("Typed(nil) error = %v, want ErrNoFunc", err)
	}
}

func TestTypedDecodeFailureKinds(t *testing.T) {
	t.Parallel()
	type kinds struct {
		F float64        `json:"f,omitempty"`
		L []int          `json:"l,omitempty"`
		M map[string]int `json:"m,omitempty"`
		U uint8          `json:"u,omitempty"`
	}
	tl := tool.Must(tool.Typed("k", func(context.Context, kinds) (any, error) { return "ok", nil }))
	tests := []struct{ args, want string }{
		{`{"f":"x"}`, `invalid arguments: field "f": expected number, got string`},
		{`{"l":{}}`, `invalid arguments: field "l": expected array, got object`},
		{`{"l":[true]}`, `invalid arguments: field "l": expected integer, got boolean`},
		{`{"m":[]}`, `invalid arguments: field "m": expected object, got array`},
		{`{"m":{"a":"b"}}`, `invalid arguments: field "m": expected integer, got string`}, // encoding/json names the map, not the key
		{`{"u":300}`, `invalid arguments: field "u": expected integer, got number 300`},
		{`{"u":-1}`, `invalid arguments: field "u": expected integer, got number -1`},
	}
	for _, tt := range tests {
		res := tl.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(tt.args)})
		if res.Output != tt.want || res.Outcome != tool.OutcomeInvalidArguments {
			t.Errorf("args %s:\n got %q\nwant %q", tt.args, res.Output, tt.want)
		}
	}
	// Run called directly, bypassing Execute, still treats no arguments as {}.
	if res := tl.Run(context.Background(), tool.Call{}); res.Output != "ok" {
		t.Errorf("Run without arguments: %+v", res)
	}
}
