package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus/internal/confine"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/telemetry"
	"github.com/toolnexus/toolnexus/internal/waitctx"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
	"go.opentelemetry.io/otel/attribute"
)

// listChangedDelay coalesces a burst of notifications/tools/list_changed
// into one re-list: the first notification arms it, later ones ride along.
const listChangedDelay = 250 * time.Millisecond

// Source is one MCP server as a toolnexus source: its tools live in the
// layer mcp/NAME, so one server's changes never disturb another's.
type Source struct {
	name    string
	cfg     ServerConfig
	env     sources.Env
	id      registry.LayerID
	prefix  string // sanitize(name) + "_", or the config's prefix
	log     *slog.Logger
	sdkLog  *slog.Logger
	restart Restart
	// redact scrubs header secrets from error texts; set once in Start,
	// before any tool can run.
	redact redactor
	// childEnv is a stdio server's whole environment (internal/childenv),
	// built once in Start, before the first child starts.
	childEnv []string
	// maxOutput caps a call's output (limits.maxOutputBytes).
	maxOutput int
	// box is the server's sandbox runner from Env.Sandbox (nil: off), and
	// boxErr why a sandbox that claims to confine was refused: a sandboxed
	// server then fails to start instead of running unconfined.
	box    *sandbox.Runner
	boxErr error
	// sandboxNote is how the server's process is confined, for Status;
	// "" when it is not.
	sandboxNote string
	// meta is every result's metadata, {"server": NAME}: made once and
	// shared, never changed (capOutput adds to a copy).
	meta map[string]any
	// pending holds the server requests suspended calls wait on.
	pending *pending.Store
	// features are the server's resources, templates and prompts
	// (features.go).
	features featureState

	// headers are the configured headers, expanded; set once in Start.
	headers map[string]string
	// With tokenExchange (set once in Start, before any tool can run):
	// serviceBearer is the shared session's credential, the client's own
	// token, and callers the per-caller sessions calls run on.
	serviceBearer bearerFunc
	callers       *callerPool
	// oauth is the server as an OAuth upstream (oauth.go); nil without
	// an oauth section. Set once in Start.
	oauth *oauthclient.Upstream

	// live is the session calls go to; nil while the server is down, so a
	// call fails at once instead of waiting for a timeout.
	live atomic.Pointer[session]

	// statusHook, when set (by tests, before Start), sees every status
	// change; it runs under mu and must not block.
	statusHook func(sources.Status)
	// callerMax and callerIdle, when set (by tests, before Start), replace
	// maxCallerSessions and callerIdle.
	callerMax       int
	callerIdleAfter time.Duration

	pubMu sync.Mutex // serialises publishing, so a re-list never overtakes a restart

	mu      sync.Mutex
	status  sources.Status
	pub     sources.Publisher
	sess    *session // the current session, live or broken, for Close
	started bool
	closed  bool

	// closeCtx ends when Close begins; it interrupts connects and waits.
	closeCtx context.Context
	closeNow context.CancelFunc
	wg       sync.WaitGroup
}

var _ sources.Source = (*Source)(nil)

// New makes the source for one server. Nothing runs until Start.
func New(name string, cfg ServerConfig, env sources.Env) *Source {
	id := registry.LayerID{Kind: sources.KindMCP, Name: name}
	log := env.Log().With("source", sources.KindMCP.Name, "server", name)
	s := &Source{
		name:      name,
		cfg:       cfg,
		env:       env,
		id:        id,
		prefix:    tool.Sanitize(name) + "_",
		log:       log,
		sdkLog:    log.With("component", "go-sdk"),
		restart:   cfg.Restart.withDefaults(),
		maxOutput: env.OutputCap(),
		meta:      map[string]any{"server": name},
	}
	if cfg.Prefix != nil {
		s.prefix = *cfg.Prefix
	}
	if s.pending = env.Pending; s.pending == nil {
		s.pending = pending.NewLocal(pending.Limits{})
	}
	s.closeCtx, s.closeNow = context.WithCancel(context.Background())
	s.box, s.boxErr = confine.Runner(env.Sandbox)
	s.sandboxNote = s.sandboxSummary()
	s.status = sources.Status{Layer: id, State: sources.Connected, Sandbox: s.sandboxNote}
	if cfg.Disabled {
		s.status.State = sources.Disabled
	}
	return s
}

// Layer implements sources.Source.
func (s *Source) Layer() registry.LayerID { return s.id }

// Status implements sources.Source: connected, disabled, failed (the first
// start did not succeed) or restarting (it died and is being brought back).
func (s *Source) Status() sources.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Source) setStatus(state sources.State, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setStatusLocked(state, err)
}

func (s *Source) setStatusLocked(state sources.State, err error) {
	st := sources.Status{Layer: s.id, State: state, Sandbox: s.sandboxNote}
	st.Title, st.Description = s.about()
	if err != nil {
		st.Error = s.redact.Apply(err.Error())
	}
	s.status = st
	if s.statusHook != nil {
		s.statusHook(st)
	}
}

// Start connects, initializes and lists the tools, each phase bounded by
// the server's timeout (and by ctx), then publishes them and keeps the
// server healthy in the background until Close. A server that cannot start
// reports failed and Start returns why; it never affects other servers.
func (s *Source) Start(ctx context.Context, pub sources.Publisher) error {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return fmt.Errorf("MCP server %q: Start called twice or after Close", s.name)
	}
	s.started = true
	s.pub = pub
	s.initFeatures(pub)
	s.mu.Unlock()

	if s.cfg.Disabled {
		s.setStatus(sources.Disabled, nil)
		return pub.Replace(s.id, nil)
	}
	// Expanded here, not at parse time, so the secret only ever lives in
	// this source's HTTP client and a missing variable fails this server
	// alone.
	headers, err := sources.ExpandHeaders(s.cfg.Headers)
	if err != nil {
		return s.fail(err)
	}
	s.mu.Lock()
	s.redact = newRedactor(s.cfg)
	s.mu.Unlock()
	s.headers = headers
	if s.cfg.TokenExchange != nil {
		if s.serviceBearer, err = s.setupExchange(); err != nil {
			return s.fail(err)
		}
	}
	if s.cfg.OAuth != nil {
		if err := s.setupOAuth(); err != nil {
			return s.fail(err)
		}
		if !s.sourceConnected() {
			return s.startUnauthorized(pub, headers)
		}
	}
	if s.childEnv, err = childEnvironment(s.cfg); err != nil {
		return s.fail(err)
	}
	switch {
	case s.cfg.Type == TypeLocal && s.cfg.Sandbox != nil && s.boxErr != nil:
		return s.fail(s.boxErr)
	case s.sandboxed():
		s.log.Info("MCP server runs in the sandbox", "sandbox", s.sandboxNote)
	case s.cfg.Type == TypeLocal && s.cfg.Sandbox != nil:
		s.log.Warn("MCP server asks for the sandbox but sandbox.mode is off: it runs with the server's own authority")
	}
	sess, tools, err := s.connect(ctx, headers)
	if err != nil {
		return s.fail(err)
	}
	if err := s.install(sess, tools); err != nil {
		sess.close()
		return s.fail(err)
	}
	s.log.Info("MCP server connected", "tools", len(tools))
	s.publishFeatures(sess)
	// Under mu, so the supervisor is either counted before Close waits or
	// never started once Close has begun.
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.wg.Add(1)
		go s.supervise(sess, headers)
		if s.callers != nil {
			s.wg.Add(1)
			go s.sweepCallers()
		}
	}
	return nil
}

func (s *Source) fail(err error) error {
	if s.callers != nil {
		s.callers.transport.CloseIdleConnections() // the token endpoint's connections
	}
	err = errors.New(s.redact.Apply(fmt.Sprintf("MCP server %q: %v", s.name, err)))
	s.setStatus(sources.Failed, err)
	// The engine logs the failure once (with its retry); this is the detail.
	s.log.Debug("MCP server failed", "error", err)
	return err
}

// connect runs the phases: dial (start + initialize), then list.
func (s *Source) connect(ctx context.Context, headers map[string]string) (*session, []tool.Tool, error) {
	timeout := s.cfg.timeout()
	// Close must be able to interrupt a connect in progress.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closeCtx, cancel)
	defer stop()

	dctx, dcancel := context.WithTimeout(ctx, timeout)
	sess, err := s.dialAs(dctx, headers, s.serviceBearer, s.sourceRenew())
	dcancel()
	if err != nil {
		return nil, nil, err
	}
	lctx, lcancel := context.WithTimeout(ctx, timeout)
	list, err := listTools(lctx, sess.cs)
	if err != nil {
		err = phaseError("tools/list", lctx, timeout, err)
	}
	lcancel()
	if err != nil {
		sess.close()
		return nil, nil, err
	}
	return sess, s.buildTools(list), nil
}

// about is what the server is, for tool search: the configured title and
// description, else its serverInfo's (the title, or the name), each cut to
// maxAbout bytes — an upstream's words are not trusted to be short.
func (s *Source) about() (title, description string) {
	title, description = s.cfg.Title, s.cfg.Description
	if s.sess != nil {
		if ir := s.sess.cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
			info := ir.ServerInfo
			if title == "" {
				title = cmp.Or(info.Title, info.Name)
			}
			if description == "" {
				description = info.Description
			}
		}
	}
	return truncate(title, maxAbout), truncate(description, maxAbout)
}

// truncate cuts s to at most n bytes, at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// install makes a fresh session the current one and publishes its tools.
// It refuses once Close has begun, so a restart racing Close cannot leave a
// process behind: Close either sees the session in s.sess and closes it,
// or install sees closed and does. The registry write happens outside mu so
// Status never waits on a publisher.
func (s *Source) install(sess *session, tools []tool.Tool) error {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("closed")
	}
	s.sess = sess
	s.mu.Unlock()
	if err := s.pub.Replace(s.id, tools); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.live.Store(sess)
		s.setStatusLocked(sources.Connected, nil)
	}
	return nil
}

// sessionDown takes a broken session out of service at once: calls fail
// fast from here on, and the supervisor restarts the server. Both a failing
// call and the supervisor may report the same session; the first reason wins.
func (s *Source) sessionDown(sess *session, err error) {
	sess.markDown(err)
	s.live.CompareAndSwap(sess, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.sess == sess && s.status.State == sources.Connected {
		s.setStatusLocked(sources.Restarting, fmt.Errorf("MCP server %q is down: %w", s.name, sess.downErr))
	}
}

// downText is what a call to a server that is down returns.
func (s *Source) downText() string {
	s.mu.Lock()
	st, closed := s.status, s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Sprintf("MCP server %q has been shut down", s.name)
	}
	if st.Error != "" {
		return st.Error + " (restarting)"
	}
	return fmt.Sprintf("MCP server %q is down (restarting)", s.name)
}

// supervise owns the running server: it re-lists on list_changed and
// restarts the server when its session breaks.
func (s *Source) supervise(sess *session, headers map[string]string) {
	defer s.wg.Done()
	pace := newBackoff(s.restart)
	upSince := time.Now()
	var relist <-chan time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-s.closeCtx.Done():
			return
		case <-sess.listChanged:
			if relist == nil {
				if timer == nil {
					timer = time.NewTimer(listChangedDelay)
				} else {
					timer.Reset(listChangedDelay)
				}
				relist = timer.C
			}
		case <-relist:
			relist = nil
			s.relist(sess)
		case <-sess.dead:
			relist = nil
			s.sessionDown(sess, sess.downErr) // a no-op when a call saw it first
			sess.close()
			pace.wentDown(time.Since(upSince))
			next := s.bringBack(pace, headers)
			if next == nil {
				return // closing
			}
			sess, upSince = next, time.Now()
		}
	}
}

// bringBack restarts the server, paced by the backoff, until it is up
// again (its tools republished) or the source closes (nil).
func (s *Source) bringBack(pace *backoff, headers map[string]string) *session {
	for attempt := 1; ; attempt++ {
		wait := pace.next()
		s.log.Warn("MCP server down; restarting", "attempt", attempt, "in", wait.String(), "error", s.Status().Error)
		t := time.NewTimer(wait)
		select {
		case <-s.closeCtx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}

		ctx, span := s.reconnectSpan(attempt)
		sess, tools, err := s.connect(ctx, headers)
		if err == nil {
			span.SetAttributes(attribute.Int("toolnexus.mcp.tools", len(tools)))
			span.End()
			if err = s.install(sess, tools); err != nil {
				sess.close()
				return nil // only install refuses, and only when closed
			}
			s.log.Info("MCP server restarted", "tools", len(tools), "attempt", attempt)
			s.publishFeatures(sess)
			return sess
		}
		telemetry.Fail(span, errors.New(s.redact.Apply(err.Error())))
		span.End()
		select {
		case <-s.closeCtx.Done():
			return nil
		default:
		}
		s.setStatus(s.downState(fmt.Errorf("MCP server %q is down: restart %d failed: %w", s.name, attempt, err)))
	}
}

// relist refreshes the tools after notifications/tools/list_changed.
func (s *Source) relist(sess *session) {
	timeout := s.cfg.timeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stop := context.AfterFunc(s.closeCtx, cancel)
	defer stop()
	list, err := listTools(ctx, sess.cs)
	if err != nil {
		s.log.Warn("MCP tools/list after list_changed failed", "error", s.redact.Apply(phaseError("tools/list", ctx, timeout, err).Error()))
		return
	}
	tools := s.buildTools(list)
	if s.publishFor(sess, func() error { return s.pub.Replace(s.id, tools) }, "MCP tools could not be published") {
		s.log.Info("MCP tools changed", "tools", len(tools))
	}
}

// publishFor publishes a re-listing of sess, unless sess is no longer the
// source's (a restart overtook it) or the source closed; it reports
// whether it published. Publishes are serialised by pubMu, so a re-list
// never overtakes a restart.
func (s *Source) publishFor(sess *session, publish func() error, failure string) bool {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	s.mu.Lock()
	stale := s.closed || s.sess != sess
	s.mu.Unlock()
	if stale {
		return false
	}
	if err := publish(); err != nil {
		s.log.Warn(failure, "error", err)
		return false
	}
	return true
}

// Close stops the server: the child's process group is killed (after the
// stdio shutdown courtesy of closing its stdin), HTTP sessions end, and
// every goroutine this source started has returned when Close does (or
// ctx ends first: Close then returns its error). The layer stays; its
// owner decides whether to remove it.
func (s *Source) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	sess := s.sess
	s.mu.Unlock()

	s.closeNow()
	s.live.Store(nil)
	if sess != nil {
		sess.close()
	}
	s.closeCallers()
	err := waitctx.Group(ctx, &s.wg)
	if s.oauth != nil {
		s.oauth.Close()
	}
	if s.callers != nil {
		s.callers.transport.CloseIdleConnections()
	}
	return err
}

// baseDir is where relative paths in the config resolve: the config file's
// directory, else the working directory.
func (s *Source) baseDir() string {
	if s.env.BaseDir != "" {
		return s.env.BaseDir
	}
	return "."
}
