package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/internal/callerctx"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A remote server with tokenExchange sees each caller as itself. An MCP
// session is authenticated once per connection and a server may bind it to
// the user who opened it, so one shared session cannot carry many callers:
// each caller (principal) gets a session of its own, opened on its first
// call with its exchanged token and sent its freshest exchanged token on
// every later request. The shared session stays, authenticated with the
// configured client's own token (client credentials), for what no caller
// asks: initialize at start, tools/list and list_changed.
//
// The caller sessions are bounded (the least recently used idle one makes
// room; when all are busy the call fails), closed after callerIdle without
// a call, and all closed by Close.

// Defaults for the caller sessions of one server.
const (
	maxCallerSessions = 64
	callerIdle        = 5 * time.Minute
)

// callerSession is one caller's session. sess and err are set before ready
// is closed; a session that failed to open is dropped from the pool at once.
type callerSession struct {
	principal string
	token     atomic.Pointer[string] // the caller's latest token (exchanged, or its own OAuth token)
	ready     chan struct{}
	sess      *session
	err       error
	calls     atomic.Int32 // calls holding the session
	lastUsed  atomic.Int64 // unix nanoseconds of the last release
}

// bearer is the session's credential: always the newest exchanged token.
func (c *callerSession) bearer(context.Context) (string, error) { return *c.token.Load(), nil }

// idle says whether nothing holds the session: no call, no suspended flight.
func (c *callerSession) idle() bool {
	if c.calls.Load() > 0 {
		return false
	}
	select {
	case <-c.ready:
	default:
		return false // still opening
	}
	if c.sess == nil {
		return true
	}
	c.sess.flights.mu.Lock()
	defer c.sess.flights.mu.Unlock()
	return len(c.sess.flights.set) == 0
}

func (c *callerSession) broken() bool {
	select {
	case <-c.ready:
	default:
		return false
	}
	if c.sess == nil {
		return true
	}
	select {
	case <-c.sess.dead:
		return true
	default:
		return false
	}
}

// callerPool is a server's caller sessions. Its lock is only taken by calls
// to a server with tokenExchange, never on any other call path.
type callerPool struct {
	x         *tokenexchange.Exchanger
	transport *http.Transport // the exchanger's, closed with the source
	max       int
	idleAfter time.Duration

	mu     sync.Mutex
	by     map[string]*callerSession
	closed bool
}

func newCallerPool(x *tokenexchange.Exchanger, tr *http.Transport) *callerPool {
	return &callerPool{x: x, transport: tr, max: maxCallerSessions, idleAfter: callerIdle, by: map[string]*callerSession{}}
}

// setupExchange makes the source's exchanger and caller pool and returns
// the shared session's credential, the client's own token.
func (s *Source) setupExchange() (bearerFunc, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	x, err := tokenexchange.New(fmt.Sprintf("MCP server %q", s.name), *s.cfg.TokenExchange, &http.Client{Transport: tr, Timeout: s.cfg.timeout()})
	if err != nil {
		return nil, err
	}
	s.callers = newCallerPool(x, tr)
	if s.callerMax > 0 {
		s.callers.max = s.callerMax
	}
	if s.callerIdleAfter > 0 {
		s.callers.idleAfter = s.callerIdleAfter
	}
	return x.ServiceToken, nil
}

// callerToken is the token the call goes out with: the caller's own
// OAuth token (oauth.go), or its identity-provider token exchanged; else
// the result the call returns instead (a PENDING login, a failure naming
// the server, never a token).
func (s *Source) callerToken(ctx context.Context, call tool.Call) (string, *tool.Result) {
	if s.oauth != nil {
		return s.oauth.ForCall(ctx, call, s.pending.Limits())
	}
	tok, err := s.callers.x.Token(ctx)
	if err != nil {
		r := tool.Failure(s.redact.Apply(err.Error()), s.meta)
		return "", &r
	}
	return tok, nil
}

// featureToken is the token a feature request (resources, prompts,
// completion) goes out with, as callerToken is a tool call's. It cannot
// return a PENDING login: a caller not connected yet is told how to
// connect (a tool call of the server, or `toolnexus connect`).
func (s *Source) featureToken(ctx context.Context, principal string) (string, error) {
	if s.oauth == nil {
		tok, err := s.callers.x.Token(ctx)
		if err != nil {
			return "", feature.Errorf(feature.Unavailable, "%s", s.redact.Apply(err.Error()))
		}
		return tok, nil
	}
	tok, err := s.oauth.Token(ctx, principal)
	switch {
	case errors.Is(err, oauthclient.ErrNotConnected):
		return "", feature.Errorf(feature.Unavailable, "MCP server %q acts with your own account there, and you have not connected it (%v): run `toolnexus connect %s`, or call one of its tools to get the login link, then ask again",
			s.name, err, s.name)
	case err != nil:
		return "", feature.Errorf(feature.Unavailable, "MCP server %q: %v", s.name, err)
	}
	return tok, nil
}

// callerOf is the principal whose session a call goes out on: with oauth
// the call's owner, whose token callerToken took; else the caller in ctx,
// whose identity-provider token was exchanged.
func (s *Source) callerOf(ctx context.Context, call tool.Call) string {
	if s.oauth != nil {
		return call.Owner.Principal
	}
	return callerctx.Principal(ctx)
}

// callerSession returns principal's session, opening it on the caller's
// first call, and sets tok (from callerToken or featureToken) as its
// credential; the caller must release it. On failure it returns the text
// of the call's is_error result, which names the server and never a token.
func (s *Source) callerSession(ctx context.Context, principal, tok string) (*callerSession, string) {
	p := s.callers
	c, fresh, evict, msg := p.acquire(s, principal)
	for _, e := range evict {
		go s.closeEvicted(e)
	}
	if c == nil {
		return nil, msg
	}
	if cur := c.token.Load(); cur == nil || *cur != tok { // a cached token is the same string: no allocation
		latest := tok
		c.token.Store(&latest)
	}
	if fresh {
		c.principal = principal
		s.openCaller(ctx, c, principal)
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		p.release(c)
		return nil, fmt.Sprintf("MCP server %q: the call ended while its session was opening: %v", s.name, ctx.Err())
	}
	if c.err != nil {
		p.release(c)
		return nil, s.redact.Apply(fmt.Sprintf("MCP server %q: opening the caller's session failed: %v", s.name, c.err))
	}
	return c, ""
}

// acquire finds or makes the principal's entry and counts the call on it.
// fresh means the caller must open it; evict are entries taken out to make
// room (or broken), for the caller to close.
func (p *callerPool) acquire(s *Source, principal string) (c *callerSession, fresh bool, evict []*callerSession, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, false, nil, fmt.Sprintf("MCP server %q has been shut down", s.name)
	}
	// Every eviction is counted in s.wg here, under mu, so Close (which
	// closes the pool under mu before it waits) waits for it.
	defer func() { s.wg.Add(len(evict)) }()
	if c = p.by[principal]; c != nil && c.broken() {
		delete(p.by, principal)
		evict, c = append(evict, c), nil
	}
	if c == nil {
		if len(p.by) >= p.max {
			lru := p.leastRecentlyUsedIdle()
			if lru == "" {
				return nil, false, evict, fmt.Sprintf("MCP server %q: %d callers are using it at once, the most it serves; try again shortly", s.name, p.max)
			}
			evict = append(evict, p.by[lru])
			delete(p.by, lru)
		}
		c = &callerSession{ready: make(chan struct{})}
		p.by[principal] = c
		fresh = true
		s.wg.Add(1) // the opening; under mu, so never after Close has begun waiting
	}
	c.calls.Add(1)
	return c, fresh, evict, ""
}

func (p *callerPool) leastRecentlyUsedIdle() string {
	var key string
	var oldest int64
	for k, c := range p.by {
		if c.idle() && (key == "" || c.lastUsed.Load() < oldest) {
			key, oldest = k, c.lastUsed.Load()
		}
	}
	return key
}

func (p *callerPool) release(c *callerSession) {
	c.lastUsed.Store(time.Now().UnixNano())
	c.calls.Add(-1)
}

// openCaller connects the caller's session (initialize), bounded by the
// server's timeout and by Close, and not by the first caller's own
// cancellation: other calls of the same caller may be waiting on it.
func (s *Source) openCaller(ctx context.Context, c *callerSession, principal string) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.timeout())
	defer cancel()
	stop := context.AfterFunc(s.closeCtx, cancel)
	defer stop()
	var err error
	c.sess, err = s.dialAs(ctx, s.headers, c.bearer, s.callerRenew(c))
	// Under mu, so Close either finds the session ready (and closes it) or
	// has closed the pool before this looks.
	p := s.callers
	p.mu.Lock()
	var orphan *session
	if err != nil && p.by[principal] == c {
		delete(p.by, principal)
	}
	if err == nil && p.closed {
		orphan, c.sess, err = c.sess, nil, fmt.Errorf("the server is shutting down")
	}
	c.err = err
	close(c.ready)
	p.mu.Unlock()
	if orphan != nil {
		orphan.close()
	}
	if err == nil {
		s.log.Debug("MCP caller session opened", "principal", principal)
	}
}

// closeEvicted closes an evicted session off the call path (acquire
// counted it in s.wg); Close waits for it.
func (s *Source) closeEvicted(c *callerSession) {
	defer s.wg.Done()
	<-c.ready
	if c.sess != nil {
		c.sess.close()
	}
}

// sweepCallers closes the caller sessions idle for longer than idleAfter,
// until the source closes.
func (s *Source) sweepCallers() {
	defer s.wg.Done()
	p := s.callers
	t := time.NewTicker(max(p.idleAfter/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.closeCtx.Done():
			return
		case <-t.C:
		}
		cutoff := time.Now().Add(-p.idleAfter).UnixNano()
		var stale []*callerSession
		p.mu.Lock()
		for k, c := range p.by {
			if c.broken() || (c.idle() && c.lastUsed.Load() < cutoff) {
				stale = append(stale, c)
				delete(p.by, k)
			}
		}
		p.mu.Unlock()
		for _, c := range stale {
			if c.sess != nil {
				c.sess.close()
			}
		}
	}
}

// closeCallers ends every caller session (Close). Sessions still opening
// see the pool closed and close themselves; Close waits for them.
func (s *Source) closeCallers() {
	p := s.callers
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	all := p.by
	p.by = map[string]*callerSession{}
	p.mu.Unlock()
	for _, c := range all {
		select {
		case <-c.ready:
			if c.sess != nil {
				c.sess.close()
			}
		default: // opening: it sees closed when dial returns
		}
	}
	p.transport.CloseIdleConnections()
}
