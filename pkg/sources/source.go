// Package sources holds what every source package shares: the Source
// interface the server drives, the Publisher it publishes into, status
// values, the tool filter map and ${ENV} expansion.
//
// Each source lives in its own sub-package (builtin, skill, mcp, http, a2a,
// native, debug) and turns its config into tools published into one or more
// registry layers. A source never imports the server.
package sources

import (
	"context"

	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// State is a source instance's condition as ListSources shows it.
type State string

// The states.
const (
	Connected  State = "connected"
	Disabled   State = "disabled"
	Failed     State = "failed"
	Restarting State = "restarting"
	// Unauthorized: the source needs an OAuth connection before it can
	// list its tools; Status.Error says how to make one.
	Unauthorized State = "unauthorized"
)

// Status is one source instance's state for ListSources and the
// toolnexus_source_up gauge.
type Status struct {
	Layer registry.LayerID
	State State
	// Error says why the source failed or is restarting. It must never
	// contain a secret (an expanded ${ENV} header or token).
	Error string
	// Sandbox says how the processes the source starts are confined
	// (a sandboxed stdio MCP server); "" when it starts none confined.
	Sandbox string
	// Title and Description are what the source says about itself — an
	// MCP server's mcpServers.NAME.title and description, else the title
	// (or name) and description of the serverInfo it announced — for tool
	// search to find its tools by the product's name. Empty when unknown.
	Title, Description string
}

// Publisher is where a source puts its tools; *registry.Registry satisfies it.
type Publisher interface {
	Replace(id registry.LayerID, tools []tool.Tool) error
	Remove(id registry.LayerID)
}

// Source is one running source instance.
//
// Start loads the tools and publishes them into the source's layer. It is
// bounded by ctx; a source that cannot load returns an error and reports
// Failed in Status, and never affects any other source. A source may keep
// publishing later (an MCP server's list_changed, a restart).
//
// Close stops everything the source started (goroutines, child processes,
// connections) and returns once they are gone — or when ctx ends first,
// with ctx's error, the rest then ending in the background (a child that
// ignores its stdin closing is still killed). It does not remove the
// layer: the owner decides that. A second Close returns nil.
type Source interface {
	Layer() registry.LayerID
	Start(ctx context.Context, pub Publisher) error
	Status() Status
	Close(ctx context.Context) error
}

// FeaturePublisher is where a source that offers more than tools (an MCP
// server's resources, templates and prompts) puts them. The engine's
// publisher implements it next to Publisher; a source finds it with a type
// assertion on the Publisher Start got, and offers tools alone without it.
type FeaturePublisher interface {
	ReplaceFeatures(id registry.LayerID, set feature.Set) error
	// ResourceUpdated passes on the upstream's notifications/resources/
	// updated for uri (the upstream's own URI).
	ResourceUpdated(id registry.LayerID, uri string)
}
