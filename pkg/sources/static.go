package sources

import (
	"context"
	"sync"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Static is a Source with a fixed tool list, built once: native tools, the
// debug tools, builtins, HTTP tools.
type Static struct {
	id    registry.LayerID
	tools []tool.Tool
	err   error

	mu    sync.Mutex
	state Status
}

// NewStatic makes a source that publishes tools into layer id. A non-nil err
// makes it a failed source that publishes nothing (a source whose config
// could be parsed but whose tools could not be built, e.g. an unreadable
// OpenAPI spec).
func NewStatic(id registry.LayerID, tools []tool.Tool, err error) *Static {
	return &Static{id: id, tools: tools, err: err}
}

// Disabled is a source that is switched off in the config: it publishes an
// empty layer so that ListSources still shows it as disabled.
func NewDisabled(id registry.LayerID) *Static {
	s := &Static{id: id}
	s.state = Status{Layer: id, State: Disabled}
	return s
}

// Layer implements Source.
func (s *Static) Layer() registry.LayerID { return s.id }

// Start implements Source.
func (s *Static) Start(_ context.Context, pub Publisher) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.State == Disabled {
		return pub.Replace(s.id, nil)
	}
	if s.err != nil {
		s.state = Status{Layer: s.id, State: Failed, Error: s.err.Error()}
		return s.err
	}
	if err := pub.Replace(s.id, s.tools); err != nil {
		s.state = Status{Layer: s.id, State: Failed, Error: err.Error()}
		return err
	}
	s.state = Status{Layer: s.id, State: Connected}
	return nil
}

// Status implements Source.
func (s *Static) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.State == "" {
		return Status{Layer: s.id, State: Connected}
	}
	return s.state
}

// Close implements Source; a static source holds nothing.
func (s *Static) Close(context.Context) error { return nil }

// Tools returns the tool list (for tests and embedding).
func (s *Static) Tools() []tool.Tool { return s.tools }
