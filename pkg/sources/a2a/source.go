package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/telemetry"
	"github.com/toolnexus/toolnexus/internal/waitctx"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// InputSchema is the input schema of every A2A tool: the task in words.
var InputSchema = json.RawMessage(`{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}`)

// maxCardWait bounds the card fetch at Start even when the call timeout is
// long: a card is one small GET, and Start must not hold up a reload.
const maxCardWait = 30 * time.Second

// cancelWait bounds the cancel sent after a timeout or a caller's cancel.
// It runs on a detached context (the call's own is already done), so it
// needs its own short bound.
const cancelWait = 5 * time.Second

// Source is one A2A agent: it fetches the agent card at Start and
// publishes one tool per skill into layer a2a/ID.
type Source struct {
	id    string
	cfg   AgentConfig
	env   sources.Env
	layer registry.LayerID

	transport *http.Transport
	// base ends when the source is closed; every call and the card fetch
	// stop with it, so Close never waits on a slow agent.
	base context.Context
	stop context.CancelFunc

	// pending holds the requests of tasks that asked for input (the
	// server's shared store, so limits.maxPending counts across sources).
	pending *pending.Store

	mu     sync.Mutex
	status sources.Status
	closed bool
	calls  sync.WaitGroup
	tools  []tool.Tool
	// waits are this source's tasks waiting for an answer (input.go).
	waits map[*inputWait]struct{}
}

// New makes the source for one agent. A disabled agent gets a source that
// publishes an empty layer and reports disabled.
func New(id string, cfg AgentConfig, env sources.Env) *Source {
	layer := registry.LayerID{Kind: sources.KindA2A, Name: id}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = DefaultPollEvery
	}
	base, stop := context.WithCancel(context.Background())
	s := &Source{
		id:        id,
		cfg:       cfg,
		env:       env,
		layer:     layer,
		transport: http.DefaultTransport.(*http.Transport).Clone(),
		base:      base,
		stop:      stop,
		status:    sources.Status{Layer: layer, State: sources.Restarting, Error: "starting: the agent card has not been fetched yet"},
		pending:   env.Pending,
		waits:     map[*inputWait]struct{}{},
	}
	if s.pending == nil {
		s.pending = pending.NewLocal(pending.Limits{})
	}
	if cfg.Disabled {
		s.status = sources.Status{Layer: layer, State: sources.Disabled}
	}
	return s
}

// Layer implements sources.Source.
func (s *Source) Layer() registry.LayerID { return s.layer }

// Status implements sources.Source.
func (s *Source) Status() sources.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Tools returns the tools built at Start (nil before), for tests and embedding.
func (s *Source) Tools() []tool.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// Start fetches the agent card, picks the protocol and endpoint, and
// publishes one tool per skill. A failure marks the source failed with the
// reason (never a secret) and is returned; other sources are unaffected.
func (s *Source) Start(ctx context.Context, pub sources.Publisher) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return s.fail(errors.New("the source is closed"))
	}
	if s.cfg.Disabled {
		return pub.Replace(s.layer, nil) // an empty layer, so ListSources shows it
	}

	headers, err := sources.ExpandHeaders(s.cfg.Headers)
	if err != nil {
		return s.fail(fmt.Errorf("headers: %w: set it in the server's environment", err))
	}
	c := &client{
		// Calls made inside a traced tool call carry traceparent.
		http:    &http.Client{Transport: telemetry.Transport(s.transport), CheckRedirect: sources.CheckRedirect},
		header:  http.Header{},
		maxBody: int64(s.env.OutputCap())*8 + 1<<20,
		redact:  sources.RedactorFor(s.cfg.Headers),
	}
	for k, v := range headers {
		c.header.Set(k, v)
	}
	c.callHTTP = c.http
	if tx := s.cfg.TokenExchange; tx != nil {
		x, err := tokenexchange.New("agent "+s.id, *tx, c.http)
		if err != nil {
			return s.fail(err)
		}
		c.callHTTP = tokenexchange.Client(c.http, x)
	}

	ctx, cancel := context.WithTimeout(ctx, min(time.Duration(s.cfg.Timeout)*time.Millisecond, maxCardWait))
	defer cancel()
	defer context.AfterFunc(s.base, cancel)()
	card, err := c.fetchCard(ctx, s.cfg.Card)
	if err != nil {
		return s.fail(errors.New(c.clean(err.Error())))
	}
	ep, err := card.pickEndpoint(s.cfg.Card)
	if err != nil {
		return s.fail(err)
	}
	c.ep = ep
	c.streaming = card.Capabilities.Streaming
	c.header.Set("Content-Type", "application/json")
	c.header.Set("Accept", "application/json")
	if ep.proto == proto10 {
		// Set directly, not through Header.Set, so the name goes out
		// spelled as the spec spells it.
		c.header.Del("A2A-Version") // a configured one must not go out twice
		c.header["A2A-Version"] = []string{"1.0"}
	}

	tools := s.buildTools(card, c)
	if err := pub.Replace(s.layer, tools); err != nil {
		return s.fail(err)
	}
	s.mu.Lock()
	s.tools = tools
	s.status = sources.Status{Layer: s.layer, State: sources.Connected}
	s.mu.Unlock()
	s.env.Log().Info("a2a agent connected", "agent", s.id, "name", card.Name,
		"protocol", ep.proto.String(), "endpoint", ep.url, "tools", len(tools))
	return nil
}

func (s *Source) fail(err error) error {
	s.mu.Lock()
	s.status = sources.Status{Layer: s.layer, State: sources.Failed, Error: err.Error()}
	s.mu.Unlock()
	return err
}

// buildTools makes one tool per skill, named sanitize(card.name) + "_" +
// sanitize(skill.id or skill.name). Everything a call needs is fixed here,
// so Execute does no per-call setup beyond the request itself.
func (s *Source) buildTools(card *agentCard, c *client) []tool.Tool {
	prefix := tool.Sanitize(card.Name) + "_"
	seen := map[string]bool{}
	var tools []tool.Tool
	for i, sk := range card.Skills {
		key := sk.ID
		if key == "" {
			key = sk.Name
		}
		if key == "" {
			s.env.Log().Warn("a2a skill has neither id nor name; skipped", "agent", s.id, "skill", i)
			continue
		}
		name := prefix + tool.Sanitize(key)
		if seen[name] {
			s.env.Log().Warn("a2a skills map to the same tool name; the first is kept", "agent", s.id, "tool", name)
			continue
		}
		seen[name] = true
		desc := sk.Description
		if desc == "" {
			desc = sk.Name
		}
		if desc == "" {
			desc = card.Description
		}
		tools = append(tools, tool.Must(tool.New(name, func(ctx context.Context, call tool.Call) tool.Result {
			return s.execute(ctx, c, call)
		}, tool.WithDescription(desc), tool.WithInputSchema(InputSchema), tool.WithSource(sources.KindA2A.Name))))
	}
	if len(tools) == 0 {
		s.env.Log().Warn("a2a agent card lists no skills; the agent offers no tools", "agent", s.id)
	}
	return tools
}

// Close stops the calls in flight (each sends its cancel to the agent
// first), waits for them until ctx ends, withdraws the requests of tasks
// waiting for input (canceling those tasks too), and drops idle
// connections.
func (s *Source) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	err := waitctx.Group(ctx, &s.calls)
	s.withdrawWaits()
	s.transport.CloseIdleConnections()
	return err
}

// enter registers a call; false once the source is closed.
func (s *Source) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.calls.Add(1)
	return true
}
