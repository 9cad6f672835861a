package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A remote server with "oauth" acts for each caller with the caller's own
// account there (the MCP authorization spec; pkg/sources/oauthclient does
// the OAuth). Each caller's calls go out on a session of its own (the
// caller pool of percaller.go), authenticated with its own token, which
// the server may bind the session to; a caller without a connection gets
// a PENDING login. The shared session — what lists the tools and follows
// list_changed — is authenticated with the connection an admin made with
// `toolnexus connect NAME`; until one exists the source is
// "unauthorized", publishes no tools, and waits for it (on any replica).
// A token the server refuses (401) is refreshed and the request sent once
// more (connect.go's renew).

// sourceWait is how often an unauthorized source looks for a connection
// in case a notification of one was missed.
const sourceWait = 30 * time.Second

// setupOAuth registers the server as an OAuth upstream and makes its
// caller pool; the shared session's credential is the admin's connection.
func (s *Source) setupOAuth() error {
	m := s.env.OAuth
	if m == nil {
		return errors.New("oauth needs the server's credential vault, which this embedding did not give the source (sources.Env.OAuth)")
	}
	secret, err := sources.ExpandEnv(s.cfg.OAuth.ClientSecret)
	if err != nil {
		return fmt.Errorf("oauth.clientSecret: %v", err)
	}
	s.oauth = m.NewUpstream(s.name, fmt.Sprintf("MCP server %q", s.name), s.cfg.URL, *s.cfg.OAuth, secret)
	s.callers = newCallerPool(nil, http.DefaultTransport.(*http.Transport).Clone())
	if s.callerMax > 0 {
		s.callers.max = s.callerMax
	}
	if s.callerIdleAfter > 0 {
		s.callers.idleAfter = s.callerIdleAfter
	}
	s.serviceBearer = s.oauth.SourceToken
	return nil
}

// answersLogin reports whether a is the answer to a login this server's
// calls asked for (ForCall takes it, not the server's own requests).
func (s *Source) answersLogin(a *tool.Answer) bool {
	return s.oauth != nil && oauthclient.IsAuthorization(a.ID)
}

// sourceConnected reports whether the connection that lists the tools
// exists and gives a token.
func (s *Source) sourceConnected() bool {
	ctx, cancel := context.WithTimeout(s.closeCtx, s.cfg.timeout())
	defer cancel()
	_, err := s.oauth.SourceToken(ctx)
	return err == nil
}

// callerRenew renews a caller session's token the server refused.
func (s *Source) callerRenew(c *callerSession) renewFunc {
	if s.oauth == nil {
		return nil
	}
	return func(ctx context.Context, old string) (string, error) {
		s.oauth.Refused(c.principal, old)
		tok, err := s.oauth.Token(ctx, c.principal)
		if err == nil {
			c.token.Store(&tok)
		}
		return tok, err
	}
}

// sourceRenew renews the shared session's token the server refused.
func (s *Source) sourceRenew() renewFunc {
	if s.oauth == nil {
		return nil
	}
	return func(ctx context.Context, old string) (string, error) {
		if p, err := s.oauth.SourcePrincipal(ctx); err == nil && p != "" {
			s.oauth.Refused(p, old)
		}
		return s.oauth.SourceToken(ctx)
	}
}

// startUnauthorized publishes nothing, says what to do, and waits for the
// connection in the background.
func (s *Source) startUnauthorized(pub sources.Publisher, headers map[string]string) error {
	s.setStatus(sources.Unauthorized, errors.New(s.oauth.UnauthorizedText()))
	s.log.Warn("MCP server waits for an OAuth connection to list its tools", "fix", "toolnexus connect "+s.name)
	if err := pub.Replace(s.id, nil); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.wg.Add(2)
		go s.awaitConnection(headers)
		go s.sweepCallers()
	}
	return nil
}

// awaitConnection waits until an admin has connected the server (here or
// on another replica), then brings it up as a restart would and
// supervises it.
func (s *Source) awaitConnection(headers map[string]string) {
	t := time.NewTicker(sourceWait)
	defer t.Stop()
	for {
		select {
		case <-s.closeCtx.Done():
			s.wg.Done()
			return
		case <-s.oauth.Changes():
		case <-t.C:
		}
		if !s.sourceConnected() {
			continue
		}
		s.log.Info("MCP server has an OAuth connection; connecting")
		sess := s.bringBack(newBackoff(s.restart), headers)
		if sess == nil {
			s.wg.Done() // closing
			return
		}
		s.supervise(sess, headers) // its own wg.Done
		return
	}
}

// downState is the status of a server whose session cannot be brought
// back: unauthorized when its OAuth connection is gone, else restarting.
func (s *Source) downState(err error) (sources.State, error) {
	if s.oauth != nil && !s.sourceConnected() {
		return sources.Unauthorized, errors.New(s.oauth.UnauthorizedText())
	}
	return sources.Restarting, err
}
