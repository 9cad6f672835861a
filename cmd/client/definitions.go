package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// definitionText is a canonical tool definition (docs/catalog.md).
type definitionText struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description"`
	Parts       map[string]json.RawMessage `json:"parts"`
}

// printDefinitionChange shows an approver what a held definition changes:
// each field that differs, old then new, so the text a model would read is
// read by a person first.
func printDefinitionChange(w io.Writer, id string, d *pb.DefinitionChange) {
	fmt.Fprintf(w, "\n%s: %s %s (%s)\n", id, d.GetSource(), d.GetTool(), d.GetChange())
	var old, next definitionText
	_ = json.Unmarshal([]byte(d.GetOldDefinition()), &old) // empty for a tool never pinned
	if err := json.Unmarshal([]byte(d.GetNewDefinition()), &next); err != nil {
		fmt.Fprintf(w, "  new definition: %s\n", d.GetNewDefinition())
		return
	}
	field := func(name, was, now string) {
		if was == now {
			return
		}
		fmt.Fprintf(w, "  %s:\n", name)
		if was != "" {
			fmt.Fprintf(w, "    - %s\n", was)
		}
		fmt.Fprintf(w, "    + %s\n", now)
	}
	field("name", old.Name, next.Name)
	field("description", old.Description, next.Description)
	var parts []string
	for k := range old.Parts {
		parts = append(parts, k)
	}
	for k := range next.Parts {
		if _, ok := old.Parts[k]; !ok {
			parts = append(parts, k)
		}
	}
	slices.Sort(parts)
	for _, k := range parts {
		field(k, string(old.Parts[k]), string(next.Parts[k]))
	}
	if d.GetShadowedSource() != "" {
		fmt.Fprintf(w, "  the name is pinned in %s\n", d.GetShadowedSource())
	}
	fmt.Fprintf(w, "  toolnexus approve %s   pins the new definition: the tool is listed and runs\n", id)
	fmt.Fprintf(w, "  toolnexus deny %s      keeps it held\n", id)
}
