package mcp

//lint:file-ignore SA1019 MCP logging is deprecated in the newest protocol but still what servers and clients use to relay log messages; toolnexus relays it both ways.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus/internal/telemetry"
)

// stdinGrace is how long a local server gets to exit on its own after its
// stdin closes (the MCP stdio shutdown) before its process group is killed.
const stdinGrace = 2 * time.Second

// session is one live connection to the server: one child process for a
// local server, one HTTP session for a remote one. A session that breaks is
// never repaired; the supervisor replaces it with a new one.
type session struct {
	cs     *sdk.ClientSession
	cancel context.CancelFunc    // ends the transport's lifetime context
	proc   atomic.Pointer[child] // local servers only, once started
	stderr *tailWriter           // local servers only
	http   *http.Transport       // remote servers only

	// listChanged is poked (never blocking) on notifications/tools/list_changed.
	listChanged chan struct{}
	// featuresChanged is poked on notifications/{resources,prompts}/list_changed.
	featuresChanged chan struct{}
	// relay routes progress and log notifications to streaming calls.
	relay *relay
	// flights are the calls a server request may belong to (suspend.go);
	// flying counts their goroutines, which close joins.
	flights flights
	flying  sync.WaitGroup
	// flyMu orders goFlight against close: a WaitGroup may not grow from
	// zero while close waits on it, so once grounded no flight starts.
	flyMu    sync.Mutex
	grounded bool

	downOnce sync.Once
	dead     chan struct{} // closed when the session is found broken
	downErr  error         // why; written before dead is closed

	closeOnce sync.Once
	waitDone  chan struct{} // closed when the Wait watcher has returned
}

func newSession() *session {
	return &session{
		listChanged:     make(chan struct{}, 1),
		featuresChanged: make(chan struct{}, 1),
		relay:           newRelay(),
		dead:            make(chan struct{}),
		waitDone:        make(chan struct{}),
	}
}

// markDown records that the session broke. Only the first reason counts.
func (s *session) markDown(err error) bool {
	first := false
	s.downOnce.Do(func() {
		if err == nil {
			err = errors.New("connection closed")
		}
		s.downErr = err
		close(s.dead)
		first = true
	})
	return first
}

// close ends the session and everything it owns: the MCP connection, the
// child's whole process group, in-flight HTTP requests. It first offers the
// polite shutdown (stdin closed, or the HTTP session deleted), which the SDK
// only performs once no call is in flight; after stdinGrace it stops asking
// and kills, so a hung call can never hold Close. Safe to call twice.
func (s *session) close() {
	s.closeOnce.Do(func() {
		if s.cs == nil {
			s.killGroup()
			s.cancel()
			s.reap()
			return
		}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			_ = s.cs.Close()
		}()
		t := time.NewTimer(stdinGrace)
		select {
		case <-s.waitDone:
		case <-t.C:
		}
		t.Stop()
		s.killGroup()
		s.cancel()
		<-closed
		<-s.waitDone
		s.flyMu.Lock()
		s.grounded = true
		s.flyMu.Unlock()
		s.flying.Wait() // each CallTool returns once the client session is closed
		s.reap()
		if s.http != nil {
			s.http.CloseIdleConnections()
		}
	})
}

// goFlight runs fn as a flight's goroutine, joined by close; false once
// close has begun (the session is going away: the call must not start).
func (s *session) goFlight(fn func()) bool {
	s.flyMu.Lock()
	defer s.flyMu.Unlock()
	if s.grounded {
		return false
	}
	s.flying.Go(fn)
	return true
}

// killGroup kills the child's process group, which also takes the
// grandchildren that a launcher such as npx leaves behind.
func (s *session) killGroup() {
	if c := s.proc.Load(); c != nil {
		c.killGroup()
	}
}

// reap waits for a local server's process to be gone and releases its
// pipes and temp dir.
func (s *session) reap() {
	if c := s.proc.Load(); c != nil {
		c.reap()
	}
}

// phaseError marks which phase failed, so the status says "initialize: ..."
// rather than a bare transport message.
func phaseError(phase string, ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %dms (raise \"timeout\" if the server is just slow)", phase, timeout.Milliseconds())
	}
	return fmt.Errorf("%s: %w", phase, err)
}

// renewFunc gets a new token after the server refused old with a 401
// (oauth.go): the request is then sent once more with it.
type renewFunc func(ctx context.Context, old string) (string, error)

// bearerFunc gives the token a remote session sends as "Authorization:
// Bearer" on each request (tokenExchange): the source's own token on the
// shared session, the caller's exchanged token on a caller's session.
type bearerFunc func(context.Context) (string, error)

// dialAs starts the server (or reaches it) and runs initialize, all within
// ctx. The session's own lifetime is not bound to ctx: once dialAs returns the
// session lives until close. bearer, when set, authenticates every request
// of a remote session.
//
// renew, when set, renews a bearer token the server refused (oauth.go).
func (s *Source) dialAs(ctx context.Context, headers map[string]string, bearer bearerFunc, renew renewFunc) (*session, error) {
	sess := newSession()
	life, cancel := context.WithCancel(context.Background())
	sess.cancel = cancel
	// Until dial succeeds, the phase deadline also ends the session, so a
	// server that hangs in initialize is killed rather than left behind.
	stop := context.AfterFunc(ctx, func() {
		cancel()
		sess.killGroup()
	})
	opts := &sdk.ClientOptions{
		Logger: s.sdkLog,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case sess.listChanged <- struct{}{}:
			default: // a re-list is already due
			}
		},
		ProgressNotificationHandler: sess.relay.progress,
		LoggingMessageHandler:       sess.relay.message,
		// No roots. Elicitation and sampling unless the server's config
		// opts out: their requests suspend the call (suspend.go).
		Capabilities: &sdk.ClientCapabilities{},
		// An upstream on 2026-07-28 that needs input answers
		// input_required; toolnexus suspends the call and retries it
		// itself when the caller answers (roundtrip.go), instead of the
		// SDK holding the call open while it waits.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	}
	s.offerAnswers(opts, sess)
	s.featureHandlers(opts, sess)
	client := sdk.NewClient(&sdk.Implementation{Name: "toolnexus", Version: "1"}, opts)

	var err error
	if s.cfg.Type == TypeLocal {
		err = s.dialLocal(ctx, life, client, sess)
	} else {
		err = s.dialRemote(ctx, life, client, sess, headers, bearer, renew)
	}
	if !stop() && err == nil {
		// The deadline fired just as the connection came up: too late.
		_ = sess.cs.Close()
		err = phaseError("initialize", ctx, s.cfg.timeout(), ctx.Err())
	}
	if err != nil {
		sess.cs = nil
		cancel()
		sess.reap()
		if sess.http != nil {
			sess.http.CloseIdleConnections()
		}
		return nil, err
	}
	// Servers that log may wait for a level before sending anything; ask
	// for everything, and let each streaming caller's own level filter.
	if ir := sess.cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil {
		if err := sess.cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
			s.log.Debug("logging/setLevel refused; the server's log messages may not be relayed", "error", s.redact.Apply(err.Error()))
		}
	}
	go func() {
		defer close(sess.waitDone)
		werr := sess.cs.Wait()
		if werr == nil {
			werr = errors.New("the server closed the connection")
		}
		if sess.proc.Load() != nil {
			if tail := sess.stderr.Tail(); tail != "" {
				werr = fmt.Errorf("%w (stderr: %s)", werr, tail)
			}
		}
		sess.markDown(werr)
	}()
	return sess, nil
}

func (s *Source) dialLocal(ctx, life context.Context, client *sdk.Client, sess *session) error {
	argv := s.cfg.Command
	prog := argv[0]
	if strings.ContainsRune(prog, filepath.Separator) && !filepath.IsAbs(prog) {
		// Absolute, or exec would look a "bin/srv" that Join turned into
		// "srv" up in PATH.
		abs, err := filepath.Abs(filepath.Join(s.baseDir(), prog))
		if err != nil {
			return fmt.Errorf("start: %w", err)
		}
		prog = abs
	}
	cmd := exec.Command(prog, argv[1:]...)
	if s.cfg.Cwd != "" {
		cmd.Dir = s.cfg.Cwd
		if !filepath.IsAbs(cmd.Dir) {
			cmd.Dir = filepath.Join(s.baseDir(), cmd.Dir)
		}
	}
	cmd.Env = s.childEnv
	// Its own process group, so close can kill the whole tree at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sess.stderr = newTailWriter(s.log, s.name, s.redact)
	// Started here, not by the SDK, so that a sandboxed server is confined
	// before its first instruction; the SDK gets the pipes (stdio.go).
	child, err := s.startLocal(cmd, sess.stderr)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	sess.proc.Store(child)
	conn := pipeConn{c: child, grace: stdinGrace}
	tr := &phased{inner: lineTransport{r: pipeReader{conn}, w: pipeWriter{conn}}, life: life, count: sess.relay}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		err = phaseError("initialize", ctx, s.cfg.timeout(), err)
		child.settle(stderrSettle)
		if tail := sess.stderr.Tail(); tail != "" {
			err = fmt.Errorf("%w (stderr: %s)", err, tail)
		}
		return s.networkHint(err)
	}
	sess.cs = cs
	return nil
}

func (s *Source) dialRemote(ctx, life context.Context, client *sdk.Client, sess *session, headers map[string]string, bearer bearerFunc, renew renewFunc) error {
	base := http.DefaultTransport.(*http.Transport).Clone()
	sess.http = base
	hc := &http.Client{Transport: headerTransport{base: base, headers: headers, bearer: bearer, renew: renew, life: life, count: sess.relay, host: hostOf(s.cfg.URL)}}

	if s.cfg.Transport != TransportSSE {
		// The SDK's own retries (resuming a dropped event stream) stay on:
		// only a session it gives up on reaches the source's restart.
		tr := &phased{inner: &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, life: life}
		cs, err := client.Connect(ctx, tr, nil)
		if err == nil {
			sess.cs = cs
			return nil
		}
		if ctx.Err() != nil {
			return phaseError("initialize", ctx, s.cfg.timeout(), err)
		}
		// Servers that predate streamable HTTP answer the POST with an
		// error status; they may still speak the old HTTP+SSE transport.
		tr2 := &phased{inner: &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, life: life}
		cs, err2 := client.Connect(ctx, tr2, nil)
		if err2 == nil {
			sess.cs = cs
			return nil
		}
		return fmt.Errorf("initialize: streamable HTTP: %v; SSE fallback: %v", err, phaseError("initialize", ctx, s.cfg.timeout(), err2))
	}
	tr := &phased{inner: &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, life: life}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return phaseError("initialize", ctx, s.cfg.timeout(), err)
	}
	sess.cs = cs
	return nil
}

// phased connects the inner transport with the session's lifetime context
// instead of the phase context the SDK passes (the SSE transport ties its
// event stream to it).
type phased struct {
	inner sdk.Transport
	life  context.Context
	// count, when set, counts the relayed notifications read (stdio only:
	// the streamable HTTP connection must stay the SDK's own type, so
	// remote sessions count in their HTTP bodies instead).
	count *relay
}

func (p *phased) Connect(context.Context) (sdk.Connection, error) {
	c, err := p.inner.Connect(p.life)
	if err == nil && p.count != nil {
		c = countingConn{Connection: c, r: p.count}
	}
	return c, err
}

// headerTransport adds the configured headers to every request and ties
// each request to the session's lifetime, so closing the session aborts
// calls still waiting on a server that does not answer. The header values
// may be secrets: they are only ever put on the wire.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	// bearer, when set, is the Authorization on every request to host,
	// replacing a configured one; renew, when set, replaces a token the
	// server refused (401) and the request is sent once more.
	bearer bearerFunc
	renew  renewFunc
	life   context.Context
	count  *relay // counts relayed notifications in the bodies
	// host is the configured URL's host:port: the headers go there only,
	// never to a host a redirect or an SSE endpoint event names.
	host string
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(h.life, cancel)
	traced := telemetry.Traced(ctx)
	toHost := r.URL.Host == h.host
	var token string
	if h.bearer != nil && toHost {
		var err error
		if token, err = h.bearer(ctx); err != nil {
			stop()
			cancel()
			if r.Body != nil {
				_ = r.Body.Close()
			}
			return nil, err
		}
	}
	ours := (len(h.headers) > 0 || token != "") && toHost
	if !ours && !traced {
		r = r.WithContext(ctx) // shallow: nothing of the caller's request changes
	} else {
		r = r.Clone(ctx) // a RoundTripper must not modify the caller's headers
		if ours {
			for k, v := range h.headers {
				r.Header.Set(k, v)
			}
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
		}
		telemetry.InjectHeader(ctx, r.Header)
	}
	resp, err := h.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && token != "" && h.renew != nil {
		resp, err = h.retryRenewed(ctx, r, resp, token)
	}
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	body := resp.Body
	if h.count != nil {
		body = &countingBody{ReadCloser: body, r: h.count}
	}
	body = captureRead(ctx, r, resp, body) // rawread.go
	resp.Body = &lifeBody{ReadCloser: body, done: func() { stop(); cancel() }}
	return resp, nil
}

// retryRenewed sends r once more with a renewed token after the server
// refused token; when no new token comes (the refresh was refused too),
// or the body cannot be sent again, the 401 stands.
func (h headerTransport) retryRenewed(ctx context.Context, r *http.Request, resp *http.Response, token string) (*http.Response, error) {
	fresh, err := h.renew(ctx, token)
	if err != nil || fresh == "" || fresh == token || (r.Body != nil && r.GetBody == nil) {
		return resp, nil
	}
	again := r.Clone(ctx)
	if r.GetBody != nil {
		if again.Body, err = r.GetBody(); err != nil {
			return resp, nil
		}
	}
	again.Header.Set("Authorization", "Bearer "+fresh)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	return h.base.RoundTrip(again)
}

// lifeBody releases the request's lifetime hook when the body is closed.
type lifeBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *lifeBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// networkHint adds the likely cause to an initialize failure of a server
// that runs in the sandbox with network off: a launcher that fetches the
// server on first run (npx -y, uvx, pipx run) cannot download it there, and
// only says so on its stderr, if at all, while the status would read as a
// plain timeout.
func (s *Source) networkHint(err error) error {
	if !s.sandboxed() || s.sandboxPolicy("", "").Network {
		return err
	}
	return fmt.Errorf("%w; the sandbox has network off for this server: a launcher that downloads on first run (npx -y, uvx) cannot — install the server in the image and run it directly, or set \"sandbox\": {\"network\": true} for this server", err)
}
