package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// KindTool is the Kind of a tool's definition.
const KindTool = "tool"

// Definition is one thing an upstream publishes that a model reads as
// instructions, as a pin covers it: its kind, name and description and its
// named JSON parts (a tool's inputSchema, outputSchema and annotations).
//
// It is generic on purpose: prompts, once federated, are pinned by the same
// digest with Kind "prompt" and their arguments as a part, and go through
// the same store and approvals.
type Definition struct {
	Kind        string
	Name        string
	Description string
	// Parts are JSON values by name; a nil or empty part is left out, so
	// "no output schema" and an absent key digest alike.
	Parts map[string]json.RawMessage
}

// ToolDefinition is a tool's definition as an upstream gave it: the input
// schema defaults to {"type":"object"} as the registry fills it in, so a
// tool listed with and without that default is the same definition.
func ToolDefinition(t *tool.Tool) Definition {
	in := t.InputSchema
	if len(in) == 0 {
		in = tool.DefaultInputSchema()
	}
	d := Definition{Kind: KindTool, Name: t.Name, Description: t.Description,
		Parts: map[string]json.RawMessage{"inputSchema": in}}
	if len(t.OutputSchema) > 0 {
		d.Parts["outputSchema"] = t.OutputSchema
	}
	if a := annotationsJSON(t.Annotations); a != nil {
		d.Parts["annotations"] = a
	}
	return d
}

// annotationsJSON is a tool's hints under their MCP names, only those set;
// nil when none is.
func annotationsJSON(a *tool.Annotations) json.RawMessage {
	if a == nil {
		return nil
	}
	m := map[string]any{}
	if a.Title != "" {
		m["title"] = a.Title
	}
	for k, v := range map[string]*bool{"readOnlyHint": a.ReadOnly, "destructiveHint": a.Destructive,
		"idempotentHint": a.Idempotent, "openWorldHint": a.OpenWorld} {
		if v != nil {
			m[k] = *v
		}
	}
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m) // strings and booleans always encode
	return b
}

// Canonical is the definition as one canonical JSON object: keys sorted by
// their bytes, no whitespace, numbers exactly as the upstream wrote them,
// strings with the fewest escapes (suspend.Canonical's rules). Two
// definitions with the same canonical text are the same definition; a
// part that is not valid JSON, or repeats a key, is an error.
func (d Definition) Canonical() ([]byte, error) {
	names := make([]string, 0, len(d.Parts))
	for k, v := range d.Parts {
		if len(bytes.TrimSpace(v)) > 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var buf bytes.Buffer
	buf.WriteString(`{"description":`)
	writeJSONString(&buf, d.Description)
	buf.WriteString(`,"kind":`)
	writeJSONString(&buf, d.Kind)
	buf.WriteString(`,"name":`)
	writeJSONString(&buf, d.Name)
	buf.WriteString(`,"parts":{`)
	for i, k := range names {
		c, err := suspend.Canonical(d.Parts[k])
		if err != nil {
			return nil, fmt.Errorf("%s %q: %s: %w", d.Kind, d.Name, k, err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		writeJSONString(&buf, k)
		buf.WriteByte(':')
		buf.Write(c)
	}
	buf.WriteString("}}")
	return buf.Bytes(), nil
}

// Digest is the hex SHA-256 of the canonical definition, what a pin holds.
func Digest(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
