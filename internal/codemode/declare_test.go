package codemode

import (
	"encoding/json"
	"testing"
)

func TestDeclare(t *testing.T) {
	cases := []struct {
		name, schema, want string
	}{
		{"empty", `{"type":"object"}`, `tools.t(args: Record<string, any>): any`},
		{"required and optional", `{"type":"object","properties":{"to":{"type":"string","description":"who"},"n":{"type":"integer"}},"required":["to"]}`,
			`tools.t(args: { n?: number; /** who */ to: string; }): any`},
		{"enum, array, nested", `{"type":"object","properties":{"mode":{"enum":["a","b"]},"tags":{"type":"array","items":{"type":"string"}},"o":{"type":"object","properties":{"x-y":{"type":["string","null"]}}}}}`,
			`tools.t(args: { mode?: "a" | "b"; o?: { "x-y"?: string | null; }; tags?: string[]; }): any`},
		{"not a schema", `nonsense`, `tools.t(args: any): any`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Declare("t", "", json.RawMessage(c.schema)); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	if got := Declare("t", "Sends */ mail.\n  Fast.", json.RawMessage(`{}`)); got != "/** Sends * / mail. Fast. */\ntools.t(args: any): any" {
		t.Fatalf("description: %q", got)
	}
}
