package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/idp"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

// resourceURL is server.mcp.resource in these tests, and the audience the
// provider's tokens must carry.
const resourceURL = "https://toolnexus.test/mcp"

func identityConfig(issuer, extra string) string {
	return fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [],
		"server": {"mcp": {"resource": %q}},
		"auth": {"oidc": {"issuer": %q, "audience": %q, "requiredScopes": ["tools"]},
			"groups": {"dev": {"tools": ["debug_echo"]}, "ops": {"tools": ["debug_*"], "admin": true}},
			"tokens": [{"name": "static-agent", "token": "static-agent-secret-01"}]%s}}`, resourceURL, issuer, resourceURL, extra)
}

// users are the provider's test users: one client each (client
// credentials), with their own subject and groups.
var users = []oidcop.Client{
	{ID: "alice", Secret: "alice-client-secret", Groups: []string{"dev"}},
	{ID: "bob", Secret: "bob-client-secret", Groups: []string{"ops", "dev"}},
	{ID: "eve", Secret: "eve-client-secret", Groups: []string{"sales"}},
}

// tokenFor is a token the provider issues to user for /mcp, with the
// scope the config requires.
func tokenFor(t testing.TB, p *oidcop.Provider, user string) string {
	return p.Token(t, user, resourceURL, "openid tools")
}

func claimsFor(sub string, groups ...string) idp.Claims {
	return idp.Claims{"sub": sub, "aud": resourceURL, "scope": "openid tools", "groups": groups}
}

// postMCP sends an MCP initialize with an Authorization header (none for
// "") and returns the status, the challenge and the body.
func postMCP(t *testing.T, url, authz string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(mcpclient.InitializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// Each refusal reason, with tokens minted by the test's provider as a
// hostile caller would make them, over real gRPC and real HTTP /mcp: gRPC
// UNAUTHENTICATED and HTTP 401 naming the reason, never the token, and
// every refusal counted under its reason.
func TestJWTRefusalsOverGRPCAndMCP(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	g := startGateway(t, identityConfig(p.Issuer, ""))
	body := g.scrape(t)
	for _, r := range auth.Reasons() {
		if line := testutil.MetricLine(body, "toolnexus_auth_failures_total", `reason="`+r.String()+`"`); !strings.HasSuffix(line, " 0") {
			t.Errorf("first scrape: toolnexus_auth_failures_total{reason=%q} = %q, want a series at 0", r, line)
		}
	}
	good := claimsFor("alice", "dev")
	cases := []struct {
		tok    string
		reason auth.Reason
		text   string
	}{
		{p.MintTampered(good, good.With("groups", []string{"ops"})), auth.ReasonBadSignature, "bad signature"},
		{p.MintUnpublished(good), auth.ReasonUnknownKey, "unknown key"},
		{p.MintAlgNone(good), auth.ReasonAlgNone, "alg none"},
		{p.MintHMACWithPublicKey(good), auth.ReasonAlgMismatch, "algorithm does not match"},
		{p.Mint(good.With("exp", time.Now().Add(-5*time.Minute).Unix())), auth.ReasonExpired, "expired"},
		{p.Mint(good.With("nbf", time.Now().Add(5*time.Minute).Unix())), auth.ReasonNotYetValid, "not yet valid"},
		{p.Mint(good.With("iss", "https://attacker.test")), auth.ReasonWrongIssuer, "issuer not accepted"},
		{p.Mint(good.With("aud", "https://other-resource.test/mcp")), auth.ReasonWrongAudience, "audience is not this server"},
		{p.Mint(good.With("scope", "openid")), auth.ReasonMissingScope, "missing a required scope"},
	}
	for _, c := range cases {
		_, err := g.grpc.ListTools(bearerCtx(c.tok), &pb.ListToolsRequest{})
		msg := status.Convert(err).Message()
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(msg, c.text) || strings.Contains(msg, c.tok) {
			t.Errorf("%s over gRPC: %v, want UNAUTHENTICATED saying %q", c.reason, err, c.text)
		}
		code, challenge, body := postMCP(t, g.url, "Bearer "+c.tok)
		if code != http.StatusUnauthorized || !strings.Contains(body, c.text) || strings.Contains(body, c.tok) ||
			!strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, `resource_metadata="https://toolnexus.test/.well-known/oauth-protected-resource"`) {
			t.Errorf("%s over /mcp: %d %q %q", c.reason, code, challenge, body)
		}
	}
	body = g.scrape(t)
	for _, c := range cases {
		if line := testutil.MetricLine(body, "toolnexus_auth_failures_total", `reason="`+c.reason.String()+`"`); !strings.HasSuffix(line, " 2") {
			t.Errorf("after one gRPC and one HTTP refusal: %q, want 2", line)
		}
	}
	// The valid token passes both, and a static token keeps working.
	tok := p.Mint(good)
	if _, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("valid JWT over gRPC: %v", err)
	}
	if _, err := g.grpc.ListTools(bearerCtx("static-agent-secret-01"), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("static token next to auth.oidc: %v", err)
	}
}

// Users of a real provider (zitadel/oidc) in different groups, with the
// tokens it issues: what ListTools shows and what Execute runs agree, over
// gRPC and over MCP; the admin group reaches SourceService and the others
// do not; a group the config does not list gives nothing.
func TestJWTGroupsMapToToolsOverGRPCAndMCP(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t, users...)
	g := startGateway(t, identityConfig(p.Issuer, ""))
	for _, u := range []struct {
		sub     string
		groups  []string
		allowed []string
		admin   bool
	}{
		{"alice", []string{"dev"}, []string{"debug_echo"}, false},
		{"bob", []string{"ops", "dev"}, []string{"debug_echo", "debug_fail", "debug_panic", "debug_sleep"}, true},
		{"eve", []string{"sales"}, nil, false},
	} {
		tok := tokenFor(t, p, u.sub)
		list, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range list.GetTools() {
			names = append(names, tl.GetName())
		}
		if !slices.Equal(names, u.allowed) {
			t.Errorf("%s: gRPC ListTools %v, want %v", u.sub, names, u.allowed)
		}
		for _, name := range []string{"debug_echo", "debug_fail"} {
			resp, err := g.grpc.Execute(bearerCtx(tok), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
			if err != nil {
				t.Fatalf("%s: Execute %s: gRPC error %v", u.sub, name, err)
			}
			// A tool the caller may not use is hidden: it answers as unknown.
			o := resp.GetResult().GetOutcome()
			denied := o == pb.Outcome_OUTCOME_UNKNOWN_TOOL || o == pb.Outcome_OUTCOME_DENIED
			if denied == slices.Contains(u.allowed, name) {
				t.Errorf("%s: Execute %s outcome %v, but ListTools says allowed=%v", u.sub, name, resp.GetResult().GetOutcome(), !denied)
			}
		}
		cs := g.mustConnect(t, tok, nil)
		if got := mcpclient.Names(mcpclient.List(t, cs)); !slices.Equal(got, u.allowed) && len(got)+len(u.allowed) > 0 {
			t.Errorf("%s: MCP tools/list %v, want %v", u.sub, got, u.allowed)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "debug_echo", Arguments: map[string]any{}})
		ran := err == nil && !res.IsError
		if ran != slices.Contains(u.allowed, "debug_echo") {
			t.Errorf("%s: MCP debug_echo ran=%v (%v), allowed=%v", u.sub, ran, err, slices.Contains(u.allowed, "debug_echo"))
		}
		_, err = pb.NewSourceServiceClient(g.conn(t)).ListSources(bearerCtx(tok), &pb.ListSourcesRequest{})
		if (err == nil) != u.admin {
			t.Errorf("%s: ListSources %v, admin=%v", u.sub, err, u.admin)
		}
	}
}

// /mcp is an OAuth protected resource: its metadata names the provider, and
// a 401 without a token points there (and names the scope) without
// claiming the token was invalid.
func TestMCPProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t)
	g := startGateway(t, identityConfig(p.Issuer, ""))
	base := strings.TrimSuffix(g.url, "/mcp")
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			Scopes               []string `json:"scopes_supported"`
			Bearer               []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || doc.Resource != resourceURL || !slices.Equal(doc.AuthorizationServers, []string{p.Issuer}) ||
			!slices.Equal(doc.Scopes, []string{"tools"}) || !slices.Equal(doc.Bearer, []string{"header"}) {
			t.Errorf("GET %s: %d %+v %v", path, resp.StatusCode, doc, err)
		}
	}
	code, challenge, _ := postMCP(t, g.url, "")
	if want := `Bearer resource_metadata="https://toolnexus.test/.well-known/oauth-protected-resource", scope="tools"`; code != http.StatusUnauthorized || challenge != want {
		t.Errorf("no token: %d %q, want 401 %q", code, challenge, want)
	}
}

// The provider (zitadel/oidc) rotates its signing key: tokens signed by
// the new key work without a restart, and tokens of the old key — one
// already seen and one never presented before, so verified against the
// refetched key set — stay valid until they expire, and not after: a
// short-lived old-key token is refused as expired once its exp passes
// (clockSkew 0).
func TestJWTKeyRotationWithoutRestart(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t, users...)
	cfg := strings.Replace(identityConfig(p.Issuer, ""), `"requiredScopes": ["tools"]}`, `"requiredScopes": ["tools"], "clockSkew": 0}`, 1)
	g := startGateway(t, cfg)
	seen, unseen := tokenFor(t, p, "alice"), tokenFor(t, p, "bob")
	p.SetLifetime(8 * time.Second)
	shortLived := tokenFor(t, p, "alice")
	p.SetLifetime(oidcop.DefaultLifetime)
	if _, err := g.grpc.ListTools(bearerCtx(seen), &pb.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	p.Rotate()
	fresh := tokenFor(t, p, "alice")
	waitAccepted(t, g, fresh) // the refetch is rate limited (1 s)
	for name, tok := range map[string]string{"seen": seen, "unseen": unseen, "short-lived": shortLived} {
		if _, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{}); err != nil {
			t.Fatalf("old key's %s token after the rotation: %v", name, err)
		}
	}
	cs := g.mustConnect(t, fresh, nil)
	if got := mcpclient.Names(mcpclient.List(t, cs)); !slices.Equal(got, []string{"debug_echo"}) {
		t.Fatalf("MCP with the new key's token: %v", got)
	}
	for deadline := time.Now().Add(40 * time.Second); ; {
		_, err := g.grpc.ListTools(bearerCtx(shortLived), &pb.ListToolsRequest{})
		if err != nil {
			if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), "expired") {
				t.Fatalf("the short-lived old-key token: %v, want refused as expired", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the short-lived old-key token is still accepted long after its exp")
		}
		<-time.After(200 * time.Millisecond) // waiting for the token's exp to pass, on the wall clock it names
	}
	if _, err := g.grpc.ListTools(bearerCtx(unseen), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("the long-lived old-key token: %v", err)
	}
}

// The provider is down when toolnexus starts: the server starts, says so
// once in the log, refuses JWTs as "identity provider unreachable", serves
// static tokens, and accepts JWTs once the provider answers again.
func TestJWTProviderDownAtStartThenUp(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t, users...)
	tok := tokenFor(t, p, "alice") // issued before the outage
	p.Stop()
	s := serve(t, identityConfig(p.Issuer, ""), nil)
	reg := pb.NewRegistryServiceClient(s.dial(t))
	_, err := reg.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), "identity provider unreachable") {
		t.Fatalf("provider down: %v", err)
	}
	if _, err := reg.ListTools(bearerCtx("static-agent-secret-01"), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("static token while the provider is down: %v", err)
	}
	p.Serve()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := reg.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("provider up, JWT still refused: %v", err)
		}
		<-time.After(100 * time.Millisecond) // the refetch is rate limited; poll until it is allowed
	}
	if _, err := reg.ListTools(bearerCtx(tokenFor(t, p, "bob")), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("a token issued after the outage: %v", err)
	}
	if n := strings.Count(s.logs.String(), "msg=\"auth.oidc: identity provider unreachable"); n != 1 {
		t.Errorf("the outage was logged %d times, want once:\n%s", n, s.logs.String())
	}
}

// waitAccepted polls until tok is accepted: after a rotation the key set
// is fetched again at most once a second.
func waitAccepted(t *testing.T, g *gw, tok string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("token still refused: %v", err)
		}
		<-time.After(100 * time.Millisecond) // the refetch is rate limited; poll until it is allowed
	}
}

// conn dials the gateway fixture's gRPC listener again (for SourceService).
func (g *gw) conn(t *testing.T) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient(g.srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
