package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/toolnexus/toolnexus/internal/telemetry"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Source is the HTTP source: the declared tools and every imported OpenAPI
// spec, published together into the one `http` layer.
type Source struct {
	cfg       Config
	env       sources.Env
	id        registry.LayerID
	transport *http.Transport
	client    *http.Client

	mu     sync.Mutex
	status sources.Status
	tools  []tool.Tool
}

// New makes the HTTP source. Nothing is loaded or fetched until Start.
func New(cfg Config, env sources.Env) *Source {
	// An own transport, so Close can drop this source's idle connections
	// without touching anyone else's.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	id := registry.Layer(sources.KindHTTP)
	return &Source{
		cfg:       cfg,
		env:       env,
		id:        id,
		transport: tr,
		// Calls made inside a traced tool call carry traceparent.
		client: &http.Client{Transport: telemetry.Transport(tr), CheckRedirect: sources.CheckRedirect},
		status: sources.Status{Layer: id, State: sources.Connected},
	}
}

// Layer implements sources.Source.
func (s *Source) Layer() registry.LayerID { return s.id }

// Start builds the declared tools, loads every OpenAPI spec and publishes
// all the tools that could be built, in one Replace.
//
// One broken part never takes the others down: a declared tool whose
// header names an unset ${VAR}, or a spec that cannot be loaded, is left
// out, and the source then reports Failed with every reason (joined by
// "; ") while the rest of its tools stay published. Start returns an error
// only when nothing could be published at all, because a caller may clear
// the layer of a source whose Start failed. With nothing configured the
// source reports Disabled.
func (s *Source) Start(ctx context.Context, pub sources.Publisher) error {
	log := s.env.Log().With("source", "http")
	if len(s.cfg.Tools) == 0 && len(s.cfg.OpenAPI) == 0 {
		s.set(sources.Status{Layer: s.id, State: sources.Disabled}, nil)
		return pub.Replace(s.id, nil)
	}

	maxBytes := s.env.OutputCap()
	var tools []tool.Tool
	var problems []string
	owner := map[string]string{} // tool name → where it was declared
	for i, tc := range s.cfg.Tools {
		t, err := declared(tc, s.client, maxBytes)
		if err != nil {
			problems = append(problems, err.Error())
			log.Warn("http tool left out", "tool", tc.Name, "error", err.Error())
			continue
		}
		owner[t.Name] = fmt.Sprintf("http[%d]", i)
		tools = append(tools, t)
	}
	for i, oc := range s.cfg.OpenAPI {
		at := fmt.Sprintf("openapi[%d]", i)
		l := &specLoader{at: at, cfg: oc, baseDir: s.env.BaseDir, client: s.client, maxBytes: maxBytes}
		var err error
		if l.callClient, err = withExchange(fmt.Sprintf("%s (%s)", at, oc.Spec), oc.TokenExchange, s.client); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		got, warns, err := l.load(ctx)
		for _, w := range warns {
			log.Warn(w, "spec", oc.Spec)
		}
		if err != nil {
			msg := l.redact.Apply(fmt.Sprintf("%s (%s): %v", at, oc.Spec, err))
			problems = append(problems, msg)
			log.Debug("openapi spec left out", "spec", oc.Spec, "error", msg) // the engine warns once
			continue
		}
		for _, t := range got {
			// Declared tools and earlier specs keep a contested name: the
			// registry allows one tool per name within a layer.
			if prev, taken := owner[t.Name]; taken {
				log.Warn("openapi operation left out: its tool name is taken", "tool", t.Name, "spec", oc.Spec, "by", prev)
				continue
			}
			owner[t.Name] = at
			tools = append(tools, t)
		}
		log.Info("openapi spec loaded", "spec", oc.Spec, "tools", len(got))
	}

	if err := pub.Replace(s.id, tools); err != nil {
		s.set(sources.Status{Layer: s.id, State: sources.Failed, Error: err.Error()}, nil)
		return err
	}
	if len(problems) > 0 {
		reason := strings.Join(problems, "; ")
		s.set(sources.Status{Layer: s.id, State: sources.Failed, Error: reason}, tools)
		if len(tools) == 0 {
			return errors.New(reason)
		}
		return nil
	}
	s.set(sources.Status{Layer: s.id, State: sources.Connected}, tools)
	log.Info("http tools published", "tools", len(tools))
	return nil
}

func (s *Source) set(st sources.Status, tools []tool.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = st
	s.tools = tools
}

// Status implements sources.Source. Its Error names tools, specs and
// unset variables, never a header value.
func (s *Source) Status() sources.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Tools returns the tools the last Start published (for tests and embedding).
func (s *Source) Tools() []tool.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tool.Tool(nil), s.tools...)
}

// Close drops the source's idle connections. In-flight calls finish on
// their own contexts.
func (s *Source) Close(context.Context) error {
	s.transport.CloseIdleConnections()
	return nil
}
