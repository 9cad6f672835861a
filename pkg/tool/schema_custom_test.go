package tool_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// celsius decodes itself from either a number or a string like "21C".
type celsius float64

func (c *celsius) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		*c = celsius(f)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "C"), 64)
	*c = celsius(f)
	return err
}

type custom struct {
	When    time.Time    `json:"when"`
	Until   *time.Time   `json:"until,omitempty"`
	Amount  json.Number  `json:"amount"`
	Addr    netip.Addr   `json:"addr"`
	Temp    celsius      `json:"temp"`
	History []time.Time  `json:"history,omitempty"`
	Peers   []netip.Addr `json:"peers,omitempty"`
}

// Types that decode themselves are described by the JSON they accept, not by
// their Go layout (time.Time is a struct whose JSON is a string).
func TestSchemaForSelfDecodingTypes(t *testing.T) {
	t.Parallel()
	got, err := tool.SchemaFor[custom]()
	if err != nil {
		t.Fatal(err)
	}
	want := compact(t, `{
	  "additionalProperties": false,
	  "properties": {
	    "addr": {"type": "string"},
	    "amount": {"type": "number"},
	    "history": {"items": {"format": "date-time", "type": "string"}, "type": "array"},
	    "peers": {"items": {"type": "string"}, "type": "array"},
	    "temp": {},
	    "until": {"format": "date-time", "type": "string"},
	    "when": {"format": "date-time", "type": "string"}
	  },
	  "required": ["when", "amount", "addr", "temp"],
	  "type": "object"
	}`)
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}

	// Arguments shaped as the schema says decode.
	tl := tool.Must(tool.Typed("c", func(_ context.Context, a custom) (any, error) {
		return a.When.UTC().Format(time.RFC3339) + " " + a.Addr.String() + " " + a.Amount.String(), nil
	}))
	res := tl.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(
		`{"when":"2026-12-02T12:00:00+01:00","amount":12.50,"addr":"127.0.0.1","temp":"21C"}`)})
	if res.IsError || res.Output != "2026-12-02T11:00:00Z 127.0.0.1 12.50" {
		t.Errorf("got %+v", res)
	}
}

type quoted struct {
	N int      `json:"n,string"`
	P *float64 `json:"p,omitempty,string"`
	B bool     `json:"b,string"`
	//lint:ignore SA5008 the test proves ,string on an array is ignored, as encoding/json does
	L []int `json:"l,string"`
}

// The ",string" option carries a number or bool inside a JSON string.
func TestSchemaForStringOption(t *testing.T) {
	t.Parallel()
	got, err := tool.SchemaFor[quoted]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"b":{"type":"string"},"l":{"items":{"type":"integer"},"type":"array"},"n":{"type":"string"},"p":{"type":"string"}},"required":["n","b","l"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	tl := tool.Must(tool.Typed("q", func(_ context.Context, q quoted) (any, error) { return q, nil }))
	res := tl.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"n":"5","p":"1.5","b":"true","l":[1]}`)})
	if res.IsError || res.Output != `{"n":"5","p":"1.5","b":"true","l":[1]}` {
		t.Errorf("got %+v", res)
	}
}
