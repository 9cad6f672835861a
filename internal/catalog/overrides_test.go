package catalog_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func description(s string) *string { return &s }

// Rename, new description and a fixed argument, applied to what the source
// published: the old name is unknown, the fixed argument is gone from the
// schema, added to every call and refused from the caller in any letter
// case.
func TestOverrides(t *testing.T) {
	p := newPinned(t, nil, catalog.Settings{Overrides: map[string]catalog.Override{
		"up_get": {Name: "weather", Description: description("The weather in a city."),
			Arguments: map[string]json.RawMessage{"units": json.RawMessage(`"metric"`)}},
	}})
	p.publish(t, upLayer, echo("up_get", "Get the weather."), echo("up_other", "Other."))
	snap := p.reg.Snapshot()
	if _, ok := snap.Lookup("up_get"); ok {
		t.Fatal("the old name is still served")
	}
	e, ok := snap.Lookup("weather")
	if !ok || e.Tool.Description != "The weather in a city." {
		t.Fatalf("renamed tool: %+v %v", e, ok)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(e.Tool.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema.Properties["units"]; ok || len(schema.Required) != 1 || schema.Required[0] != "city" || schema.Properties["city"] == nil {
		t.Fatalf("the fixed argument must be gone from the schema, the rest kept: %s", e.Tool.InputSchema)
	}
	run := func(args string) tool.Result {
		return e.Tool.Execute(ctx, tool.Call{Name: "weather", Arguments: json.RawMessage(args)})
	}
	if r := run(`{"city": "Paris"}`); r.IsError || r.Output != `{"city": "Paris","units":"metric"}` {
		t.Fatalf("injected: %+v", r)
	}
	if r := run(`{}`); r.IsError || r.Output != `{"units":"metric"}` {
		t.Fatalf("injected into an empty object: %+v", r)
	}
	for _, args := range []string{`{"city": "Paris", "units": "imperial"}`, `{"city": "Paris", "Units": "imperial"}`, `{"UNITS": "x", "city": "P"}`} {
		r := run(args)
		if !r.IsError || r.Outcome != tool.OutcomeInvalidArguments || !strings.Contains(r.Output, "is set by the server") ||
			!strings.Contains(strings.ToLower(r.Output), "- units:") {
			t.Errorf("a caller's value for a fixed argument (%s): %+v", args, r)
		}
	}
	if r := run(`[1]`); !r.IsError || r.Outcome != tool.OutcomeInvalidArguments {
		t.Fatalf("not an object: %+v", r)
	}
	if e, ok := snap.Lookup("up_other"); !ok || e.Tool.Description != "Other." {
		t.Fatal("a tool without an override changed")
	}
}

// A rename onto another tool of the same source would make the registry
// refuse the whole layer: the renamed tool keeps its own name instead.
func TestOverrideRenameCollisionKeepsTheLayer(t *testing.T) {
	p := newPinned(t, nil, catalog.Settings{Overrides: map[string]catalog.Override{"up_a": {Name: "up_b"}}})
	p.publish(t, upLayer, echo("up_a", "A."), echo("up_b", "B."))
	for name, desc := range map[string]string{"up_a": "A.", "up_b": "B."} {
		if d, ok := p.description(name); !ok || d != desc {
			t.Fatalf("%s: %q %v", name, d, ok)
		}
	}
}

// Overrides follow a reload: new settings republish what the sources last
// published, without waiting for them.
func TestOverridesFollowConfigure(t *testing.T) {
	p := newPinned(t, nil, catalog.Settings{})
	p.publish(t, upLayer, echo("up_get", "Get the weather."))
	p.cat.Configure(catalog.Settings{Overrides: map[string]catalog.Override{"up_get": {Name: "weather"}}})
	if _, ok := p.description("weather"); !ok {
		t.Fatal("the override did not apply on Configure")
	}
	rev := p.reg.Snapshot().Revision()
	p.cat.Configure(catalog.Settings{Overrides: map[string]catalog.Override{"up_get": {Name: "weather"}}})
	if p.reg.Snapshot().Revision() != rev {
		t.Fatal("unchanged settings republished")
	}
	p.cat.Configure(catalog.Settings{})
	if _, ok := p.description("up_get"); !ok {
		t.Fatal("removing the override did not bring the name back")
	}
}

// Pinning is on the upstream's own definition, overrides after it: a
// renamed tool whose source changes it is held under its pin.
func TestPinningBeforeOverrides(t *testing.T) {
	p := newPinned(t, catalog.NewMemoryStore(), catalog.Settings{Mode: catalog.ModeHold,
		Overrides: map[string]catalog.Override{"up_get": {Name: "weather", Description: description("Operator's text.")}}})
	p.publish(t, upLayer, echo("up_get", "Get the weather."))
	if d, ok := p.description("weather"); !ok || d != "Operator's text." {
		t.Fatalf("%q %v", d, ok)
	}
	p.publish(t, upLayer, echo("up_get", poisoned))
	if _, ok := p.description("weather"); ok {
		t.Fatal("a rug pull under an overridden description must still be held")
	}
	if l := p.held(t); len(l) != 1 || l[0].Tool != "up_get" {
		t.Fatalf("the pin is on the upstream's name: %+v", l)
	}
}
