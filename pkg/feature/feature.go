// Package feature holds what an MCP server offers besides tools — resources,
// resource templates, prompts and argument completion — as plain values that
// a source publishes (pkg/registry.Features) and the front-ends serve (/mcp
// and gRPC). It knows no protocol: pkg/sources/mcp maps the MCP wire to it,
// internal/mcpgateway and internal/grpcapi map it back to theirs.
//
// A Set is one source instance's offer plus the Server that answers for it.
// Names and URIs in a Set are the upstream's own (a prompt's name already
// carries the source's prefix); the registry decides under which URI each
// resource is served, so that URIs stay unique across servers.
package feature

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Annotations are a resource's hints for the client.
type Annotations struct {
	// Audience is who the resource is meant for: "user", "assistant".
	Audience []string
	// Priority is its importance, 0 (least) to 1 (most).
	Priority float64
	// LastModified is an ISO 8601 time.
	LastModified string
}

// Resource is one listed resource.
type Resource struct {
	URI, Name, Title, Description, MIMEType string
	// Size is the contents' size in bytes, when the server said (0 = unknown).
	Size        int64
	Annotations *Annotations
}

// Template is one resource template: a URI template (RFC 6570) the server
// can read every expansion of.
type Template struct {
	URITemplate, Name, Title, Description, MIMEType string
	Annotations                                     *Annotations
}

// Prompt is one prompt. Name is the name it is served under (the source's
// prefix and the upstream's name); Upstream is the upstream's own.
type Prompt struct {
	Name, Upstream     string
	Title, Description string
	Arguments          []Argument
}

// Argument is one argument of a prompt.
type Argument struct {
	Name, Title, Description string
	Required                 bool
}

// Contents is one part of what reading a resource returned: text, or bytes
// (Blob set).
//
// A source may hand a part over as its MCP server sent it (Wire), so that
// a front-end speaking MCP passes a large resource on without decoding the
// JSON string (base64, for bytes) and encoding it again; a front-end that
// needs the text or the bytes calls Decoded.
type Contents struct {
	URI, MIMEType string
	Text          string
	Data          []byte
	Blob          bool
	// Wire, when set, is the part's text or blob exactly as the MCP
	// server sent it: one JSON string, quotes and escapes included, that
	// the source checked is valid (base64 for a blob, UTF-8 without raw
	// control characters for text) and so safe to splice into JSON as it
	// is. Text and Data are then empty; WireSize is the bytes it decodes to.
	Wire     []byte
	WireSize int
}

// Size is the bytes the part carries.
func (c Contents) Size() int {
	if c.Wire != nil {
		return c.WireSize
	}
	return len(c.Text) + len(c.Data)
}

// Decoded is the part with Wire decoded into Text or Data (a part without
// Wire as it is).
func (c Contents) Decoded() (Contents, error) {
	if c.Wire == nil {
		return c, nil
	}
	wire := c.Wire
	c.Wire, c.WireSize = nil, 0
	if c.Blob {
		if len(wire) < 2 {
			return c, fmt.Errorf("resource %s: blob is not a JSON string", c.URI)
		}
		c.Data = make([]byte, base64.StdEncoding.DecodedLen(len(wire)-2))
		n, err := base64.StdEncoding.Decode(c.Data, wire[1:len(wire)-1])
		if err != nil {
			return c, fmt.Errorf("resource %s: blob: %w", c.URI, err)
		}
		c.Data = c.Data[:n]
		return c, nil
	}
	if err := json.Unmarshal(wire, &c.Text); err != nil {
		return c, fmt.Errorf("resource %s: text: %w", c.URI, err)
	}
	return c, nil
}

// Message is one message of a prompt.
type Message struct {
	// Role is "user" or "assistant".
	Role    string
	Content tool.Content
}

// PromptResult is a prompt with its arguments filled in.
type PromptResult struct {
	Description string
	Messages    []Message
	// Input, when set, is the server asking for input first (only for a
	// door that takes it, WithPromptInput); Messages are then empty.
	Input *PromptInput
}

// Ref names what a completion is for: a prompt (by its upstream name) or a
// resource template (by its upstream URI template). Exactly one is set.
type Ref struct {
	Prompt      string
	URITemplate string
}

// CompleteRequest asks for the values an argument may take.
type CompleteRequest struct {
	Ref Ref
	// Argument and Value are the argument being completed and what the
	// user has typed so far.
	Argument, Value string
	// Context holds the arguments already filled in.
	Context map[string]string
}

// Completion is the values offered, best first.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}

// Server answers the requests for one source's features. Every URI and
// name it takes and returns is the upstream's own.
type Server interface {
	// Read may return parts as the server sent them (Contents.Wire).
	Read(ctx context.Context, uri string) ([]Contents, error)
	GetPrompt(ctx context.Context, name string, args map[string]string) (PromptResult, error)
	Complete(ctx context.Context, req CompleteRequest) (Completion, error)
	// Subscribe asks the upstream for notifications/resources/updated on
	// uri, Unsubscribe stops them. The registry counts subscribers and
	// calls each once per URI.
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
}

// Set is what one source instance offers besides tools.
type Set struct {
	Resources []Resource
	Templates []Template
	Prompts   []Prompt
	// Completions: the server answers completion/complete.
	Completions bool
	// Subscriptions: the server answers resources/subscribe.
	Subscriptions bool
	// Server answers for them; nil with an empty Set.
	Server Server
}

// Empty reports whether the set offers nothing.
func (s Set) Empty() bool {
	return len(s.Resources) == 0 && len(s.Templates) == 0 && len(s.Prompts) == 0
}
