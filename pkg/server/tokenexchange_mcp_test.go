package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

// upstreamAudience is the identifier the provider issues the MCP
// upstream's tokens for.
const upstreamAudience = "https://mcp-upstream.test"

// guardedMCP is a streamable-HTTP MCP server (the official go-sdk) that
// accepts only tokens of the provider meant for itself — verified against
// the provider's JWKS — and whose tool "whoami" answers the subject of the
// token its session was opened with. It keeps every token it was sent.
type guardedMCP struct {
	url string

	mu     sync.Mutex
	tokens []string
	users  []string // the subject of each accepted request
}

func startGuardedMCP(t *testing.T, issuer string) *guardedMCP {
	t.Helper()
	g := &guardedMCP{}
	verify := auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: issuer, Audience: upstreamAudience,
		PrincipalClaim: "sub", GroupsClaim: "groups", ClockSkew: time.Minute}}}, auth.Options{RefetchInterval: time.Nanosecond,
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "The caller the server sees."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.TokenInfo.UserID}}}, nil, nil
		})
	verifier := func(_ context.Context, tok string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		g.mu.Lock()
		g.tokens = append(g.tokens, tok)
		g.mu.Unlock()
		pr, err := verify.Check(t.Context(), tok)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", mcpauth.ErrInvalidToken, err)
		}
		g.mu.Lock()
		g.users = append(g.users, pr.Name)
		g.mu.Unlock()
		// UserID makes the SDK refuse a session used by another user.
		return &mcpauth.TokenInfo{UserID: pr.Name, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := mcpauth.RequireBearerToken(verifier, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	g.url = ts.URL
	return g
}

func (g *guardedMCP) seen() (tokens, users []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.tokens...), append([]string(nil), g.users...)
}

// A streamable-HTTP MCP server with tokenExchange, against a real provider
// (zitadel/oidc) and a server that verifies every token: toolnexus lists
// the tools with its own client's token, and each caller's call runs on a
// session of its own, authenticated with the caller's token exchanged for
// one meant for the server — so two callers each see their own subject,
// and the caller's own token never reaches the server. A caller without an
// identity-provider token, and an exchange the provider refuses, get an
// is_error result naming the server, with no token or secret in it.
func TestTokenExchangeToMCPServer(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t, append([]oidcop.Client{{ID: "toolnexus", Secret: "exchange-secret-0001"},
		{ID: "no-exchange", Secret: "exchange-secret-0002", NoExchange: true}}, users...)...)
	up := startGuardedMCP(t, p.Issuer)
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("exchange-secret-0001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	server := func(client, secret string) string {
		return fmt.Sprintf(`{"url": %q, "tokenExchange": {"tokenUrl": %q, "clientId": %q, "clientSecret": %q, "audience": %q}}`,
			up.url, p.TokenURL, client, secret, upstreamAudience)
	}
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [],
		"mcpServers": {"guarded": %s, "refused": %s},
		"auth": {"oidc": {"issuer": %q, "audience": %q},
			"groups": {"dev": {"tools": ["guarded_*", "refused_*"]}},
			"tokens": [{"name": "static-agent", "token": "static-agent-secret-01", "groups": ["dev"]}]}}`,
		server("toolnexus", "${file:"+secretFile+"}"), server("no-exchange", "exchange-secret-0002"), p.Issuer, resourceURL)
	f := serve(t, cfg, nil)
	reg := pb.NewRegistryServiceClient(f.dial(t))
	call := func(tok, name string) *pb.ToolResult {
		t.Helper()
		resp, err := reg.Execute(bearerCtx(tok), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
		if err != nil {
			t.Fatalf("Execute %s: %v", name, err)
		}
		return resp.GetResult()
	}
	alice, bob := tokenFor(t, p, "alice"), tokenFor(t, p, "bob")
	list, err := reg.ListTools(bearerCtx(alice), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.GetTools() {
		names = append(names, tl.GetName())
	}
	if !slices.Equal(names, []string{"guarded_whoami", "refused_whoami"}) {
		t.Fatalf("tools %v, want both servers' whoami (listed with the client's own token)", names)
	}
	for _, c := range []struct{ tok, want string }{{alice, "alice"}, {bob, "bob"}, {alice, "alice"}, {bob, "bob"}} {
		if r := call(c.tok, "guarded_whoami"); r.GetIsError() || r.GetOutput() != c.want {
			t.Fatalf("whoami as %s: is_error=%v %q", c.want, r.GetIsError(), r.GetOutput())
		}
	}
	tokens, subjects := up.seen()
	for _, tok := range tokens {
		if tok == alice || tok == bob || strings.Contains(tok, alice) || strings.Contains(tok, bob) {
			t.Fatal("the MCP server received a caller's own token")
		}
	}
	for _, who := range []string{"toolnexus", "no-exchange", "alice", "bob"} {
		if !slices.Contains(subjects, who) {
			t.Errorf("the server never saw a token for %s (saw %v)", who, slices.Compact(slices.Sorted(slices.Values(subjects))))
		}
	}
	var exchangedFor []string
	for _, x := range p.Exchanges() {
		if x.ClientID == "toolnexus" {
			exchangedFor = append(exchangedFor, x.Subject)
		}
	}
	if slices.Sort(exchangedFor); !slices.Equal(exchangedFor, []string{"alice", "bob"}) {
		t.Errorf("exchanges at the provider for %v, want one each for alice and bob (then cached)", exchangedFor)
	}

	for _, c := range []struct{ tok, name, want string }{
		{"static-agent-secret-01", "guarded_whoami", `token exchange for MCP server "guarded" failed: the caller did not authenticate with an identity-provider token`},
		{alice, "refused_whoami", `token exchange for MCP server "refused" failed: the identity provider refused: `},
	} {
		r := call(c.tok, c.name)
		out := r.GetOutput()
		if !r.GetIsError() || !strings.Contains(out, c.want) || strings.Contains(out, alice) || strings.Contains(out, "exchange-secret") {
			t.Errorf("%s: is_error=%v %q, want an error containing %q", c.name, r.GetIsError(), out, c.want)
		}
	}
	if logs := f.logs.String(); strings.Contains(logs, alice) || strings.Contains(logs, bob) || strings.Contains(logs, "exchange-secret") {
		t.Fatal("a token or the client secret reached the log")
	}
}
