// Package oauthmcp is a real MCP server protected as the MCP authorization
// spec says, for tests of toolnexus as an OAuth client: the go-sdk's
// streamable HTTP server behind the go-sdk's RequireBearerToken
// middleware, which verifies each request's JWT access token (signature
// with the provider's published keys, issuer, and its own URL as the
// audience — a token meant for any other resource is refused), answers a
// missing or bad token with 401 and WWW-Authenticate resource_metadata,
// and serves its RFC 9728 metadata naming the provider.
//
// Its tools say who called: whoami returns the token's subject, so a test
// sees which account a call acted as.
package oauthmcp

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

// Server is the protected MCP server.
type Server struct {
	// URL is its MCP endpoint (…/mcp), also the resource its tokens must
	// name as their audience.
	URL string
	// MetadataURL is its RFC 9728 metadata.
	MetadataURL string

	mu      sync.Mutex
	calls   map[string]int // tool calls per subject
	tokens  []string       // every token it accepted
	refused int            // requests refused with 401
	revoked map[string]bool
}

// WhoamiURI is the resource that says whose account a read acts as.
const WhoamiURI = "whoami://me"

// Start serves the server on a fresh loopback port, trusting p; it stops
// with the test. scopes are the scopes_supported it advertises.
func Start(t testing.TB, p *oidcop.Provider, scopes ...string) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	s := &Server{URL: base + "/mcp", MetadataURL: base + "/.well-known/oauth-protected-resource/mcp", calls: map[string]int{}}
	au := auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: p.Issuer, Audience: s.URL, PrincipalClaim: "sub"}}},
		auth.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})

	srv := sdk.NewServer(&sdk.Implementation{Name: "oauth-upstream", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "Says whose account the call acts as"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			sub := req.Extra.TokenInfo.UserID
			s.mu.Lock()
			s.calls[sub]++
			s.mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you are " + sub}}}, nil, nil
		})
	// A resource says whose account a read acts as, as whoami does for a
	// call: resources and prompts must go out as the caller too.
	srv.AddResource(&sdk.Resource{URI: WhoamiURI, Name: "whoami", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: WhoamiURI, MIMEType: "text/plain",
				Text: "you are " + req.Extra.TokenInfo.UserID}}}, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdkauth.RequireBearerToken(s.verifier(au), &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: s.MetadataURL})(handler))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{p.Issuer}, ScopesSupported: scopes, BearerMethodsSupported: []string{"header"}}))
	hs := &http.Server{Handler: s.counting(mux), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(l)
	}()
	t.Cleanup(func() {
		// A session whose client could no longer authenticate its DELETE
		// (its connection was removed) is still open: end it here.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		_ = hs.Close()
		<-done
	})
	return s
}

// verifier checks a JWT as toolnexus's own gateway does (internal/auth:
// signature, issuer, audience = this server's URL, expiry) and names its
// subject as the user the go-sdk binds the session to.
func (s *Server) verifier(au *auth.Authenticator) sdkauth.TokenVerifier {
	return func(ctx context.Context, tok string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		s.mu.Lock()
		revoked := s.revoked[tok]
		s.mu.Unlock()
		p, err := au.Check(ctx, tok)
		if err != nil || revoked {
			return nil, sdkauth.ErrInvalidToken
		}
		claims, err := oidcop.ClaimsOf(tok)
		if err != nil {
			return nil, sdkauth.ErrInvalidToken
		}
		exp, _ := claims["exp"].(float64)
		s.mu.Lock()
		s.tokens = append(s.tokens, tok)
		s.mu.Unlock()
		return &sdkauth.TokenInfo{UserID: p.Name, Expiration: time.Unix(int64(exp), 0)}, nil
	}
}

// counting counts the requests refused with 401.
func (s *Server) counting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.code == http.StatusUnauthorized {
			s.mu.Lock()
			s.refused++
			s.mu.Unlock()
		}
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
	w.ResponseWriter.WriteHeader(c)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Revoke makes the server refuse tok from now on although it has not
// expired, as a server that learnt of its revocation does.
func (s *Server) Revoke(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked == nil {
		s.revoked = map[string]bool{}
	}
	s.revoked[tok] = true
}

// Calls is how many tool calls acted as subject.
func (s *Server) Calls(subject string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[subject]
}

// Tokens are the access tokens the server accepted, in order.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokens...)
}

// Refused is how many requests it refused with 401.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}
