package tool_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Embedded structs follow encoding/json's rules, so the schema promises
// exactly the fields decoding fills in.

type idNote struct {
	ID   string `json:"id"`
	Note string `json:"note"`
}

type outerBefore struct {
	ID int `json:"id"`
	idNote
}

type outerAfter struct {
	idNote
	ID int `json:"id"`
}

type untaggedA struct{ Both string }
type untaggedB struct{ Both string }

type twoUntagged struct { // same name, same depth, neither tagged: dropped
	untaggedA
	untaggedB
	Keep bool `json:"keep"`
}

type taggedA struct {
	V string `json:"V"`
}
type untaggedV struct{ V int }

type taggedWins struct { // same depth, one tagged: the tagged one wins
	untaggedV
	taggedA
}

type leaf struct {
	Leaf string `json:"leaf"`
}
type viaOne struct{ leaf }
type viaTwo struct{ leaf }

type diamond struct { // leaf reached twice at one depth: its field cancels
	viaOne
	viaTwo
	Top string `json:"top"`
}

type Loop struct {
	*Loop
	X int `json:"x"`
}

type namedEmbed struct {
	idNote `json:"meta"` // a tagged embedded struct is a property, not flattened
	Flag   bool          `json:"flag,omitempty"`
}

func propsAndRequired(t *testing.T, schema json.RawMessage) (props map[string]json.RawMessage, required []string) {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	return s.Properties, s.Required
}

func marshalKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestSchemaForEmbeddedConflicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		schema   func() (json.RawMessage, error)
		zero     any
		want     string
		required []string
	}{
		{"outer before embedded", tool.SchemaFor[outerBefore], outerBefore{},
			`{"additionalProperties":false,"properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id","note"],"type":"object"}`,
			[]string{"id", "note"}},
		{"outer after embedded", tool.SchemaFor[outerAfter], outerAfter{},
			`{"additionalProperties":false,"properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["note","id"],"type":"object"}`,
			[]string{"note", "id"}},
		{"two untagged cancel", tool.SchemaFor[twoUntagged], twoUntagged{},
			`{"additionalProperties":false,"properties":{"keep":{"type":"boolean"}},"required":["keep"],"type":"object"}`,
			[]string{"keep"}},
		{"tagged wins", tool.SchemaFor[taggedWins], taggedWins{},
			`{"additionalProperties":false,"properties":{"V":{"type":"string"}},"required":["V"],"type":"object"}`,
			[]string{"V"}},
		{"diamond cancels", tool.SchemaFor[diamond], diamond{},
			`{"additionalProperties":false,"properties":{"top":{"type":"string"}},"required":["top"],"type":"object"}`,
			[]string{"top"}},
		{"tagged embedded is a property", tool.SchemaFor[namedEmbed], namedEmbed{},
			`{"additionalProperties":false,"properties":{"flag":{"type":"boolean"},"meta":{"properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id","note"],"type":"object"}},"required":["meta"],"type":"object"}`,
			[]string{"meta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.schema()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("schema\n got %s\nwant %s", got, tt.want)
			}
			_, req := propsAndRequired(t, got)
			if !reflect.DeepEqual(req, tt.required) {
				t.Errorf("required = %v, want %v", req, tt.required)
			}
			// Required fields are exactly what encoding/json writes for a zero value.
			sorted := slices.Sorted(slices.Values(req))
			if keys := marshalKeys(t, tt.zero); !slices.Equal(keys, sorted) {
				t.Errorf("encoding/json writes %v, schema requires %v", keys, sorted)
			}
		})
	}
}

func TestSchemaForSelfEmbedding(t *testing.T) {
	t.Parallel()
	// Used to recurse without end and crash the process with a stack overflow.
	got, err := tool.SchemaFor[Loop]()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"additionalProperties":false,"properties":{"x":{"type":"integer"}},"required":["x"],"type":"object"}`; string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}
