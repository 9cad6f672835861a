package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/search"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// View is what one caller sees through one door: its token's allowlist,
// narrowed by what the door serves (/mcp: server.mcp.tools) and by the
// named view the caller chose (server.mcp.views). Listing, search,
// describing and every call consult the same value — the pipeline's view
// step (pipeline.go), gRPC ListTools, GetTool, SearchTools, ExportTools
// and WatchTools, /mcp tools/list, search_tools and describe_tools — so a
// narrowing added here binds every door at once. The zero View sees every
// tool. A View is a few pointers: making one allocates nothing.
type View struct {
	caller *auth.Principal // the token's allowlist; nil = every tool
	served *auth.Principal // the door's served set; nil = every tool
	named  *auth.Principal // the named view; nil = none chosen
}

// Allows reports whether the view shows the tool called name from source.
func (v View) Allows(name, source string) bool {
	return v.caller.Allows(name, source) && v.served.Allows(name, source) && v.named.Allows(name, source)
}

// Sees is Allows for a registry entry: the predicate listing and search
// filter with.
func (v View) Sees(e *registry.Entry) bool { return v.Allows(e.Tool.Name, e.Tool.Source) }

// Narrowed reports whether the view hides anything at all: a front-end
// may skip filtering a list when it does not.
func (v View) Narrowed() bool { return v.caller.Restricted() || v.served != nil || v.named != nil }

// Search is the view as tool search takes it: the lists it intersects,
// each keyed by what it allows, so callers who see the same tools share
// one index and a ranking never counts a tool this view hides. extra
// narrows it further (the gateway leaves out its own tools).
func (v View) Search(extra ...search.Allowlist) search.View {
	return search.Intersect(append(extra, v.caller, v.served, v.named)...)
}

// Caller is the principal the view is for; nil when auth is off.
func (v View) Caller() *auth.Principal { return v.caller }

// ErrUnknownView refuses a view name the config does not have.
var ErrUnknownView = errors.New("no such view")

// served are the config's door-level narrowings, swapped whole on reload.
type served struct {
	mcp   *auth.Principal            // server.mcp.tools; nil = every tool
	named map[string]*auth.Principal // server.mcp.views
	names []string                   // sorted, for messages
	// features is what /mcp serves of the resources and prompts
	// (server.mcp.resources, server.mcp.prompts); nil serves all.
	features *Door
}

// nothing is a view that allows no tool: a named view the config lost.
var nothing = auth.NewPrincipal("", []string{}, false)

func newServed(m config.MCPGateway) *served {
	s := &served{}
	if m.Resources != nil || m.Prompts != nil {
		s.features = &Door{Resources: m.Resources, Prompts: m.Prompts}
	}
	if len(m.Tools) > 0 {
		s.mcp = auth.NewPrincipal("server.mcp.tools", m.Tools, false)
	}
	if len(m.Views) > 0 {
		s.named = make(map[string]*auth.Principal, len(m.Views))
		for name, v := range m.Views {
			s.named[name] = auth.NewPrincipal("server.mcp.views."+name, nonNil(v.Tools), false)
			s.names = append(s.names, name)
		}
		slices.Sort(s.names)
	}
	return s
}

// nonNil keeps an empty tools list empty (a view of no tools), where nil
// would allow every tool.
func nonNil(globs []string) []string {
	if globs == nil {
		return []string{}
	}
	return globs
}

// View is the view of caller through the door protocol (ProtocolGRPC or
// ProtocolMCP), narrowed by the named view name ("" = the door's own). A
// name the config does not have is ErrUnknownView, naming those it has,
// and the view returned with it shows no tool.
func (c *Core) View(caller *auth.Principal, protocol, name string) (View, error) {
	s := c.served.Load()
	v := View{caller: caller}
	if protocol == ProtocolMCP {
		v.served = s.mcp
	}
	if name != "" {
		n, ok := s.named[name]
		if !ok {
			v.named = nothing
			return v, s.unknown(name)
		}
		v.named = n
	}
	return v, nil
}

func (s *served) unknown(name string) error {
	if len(s.names) == 0 {
		return fmt.Errorf("%w %q: server.mcp.views names none", ErrUnknownView, name)
	}
	return fmt.Errorf("%w %q: server.mcp.views has %s", ErrUnknownView, name, strings.Join(s.names, ", "))
}

// viewOf is the view a call runs under. A view name the config no longer
// has (removed by a reload while the caller held on to it) shows nothing.
func (c *Core) viewOf(call Call) View {
	v, _ := c.View(call.Caller, call.Protocol, call.View)
	return v
}
