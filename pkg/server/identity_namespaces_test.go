package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/idp"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// policy.approvers keeps principals and groups apart: "group:reviewers" is
// the group's members, and a caller whose subject is "reviewers" (or
// "group:reviewers") with no groups can neither list, approve nor deny;
// a member of the group can.
func TestApproversKeepPrincipalsAndGroupsApart(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	dir := t.TempDir()
	pol := testutil.WriteWirePolicies(t, dir)
	s := serve(t, fmt.Sprintf(`{"skills": [],
		"auth": {"tokens": [{"name": "agent-a", "token": %q}],
			"oidc": {"issuer": %q, "audience": %q},
			"groups": {"reviewers": {"tools": []}}},
		"policy": {"files": [%q], "approvers": ["group:reviewers"]}}`, testutil.PolAgentA, p.Issuer, resourceURL, pol),
		func(o *server.Options) { o.Workspace = filepath.Join(dir, "ws") })
	conn := s.dial(t)
	reg, apr := pb.NewRegistryServiceClient(conn), pb.NewApprovalServiceClient(conn)
	pending := func() string {
		t.Helper()
		resp, err := reg.Execute(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"path": "out.txt", "content": "x"}`}})
		if r := resp.GetResult(); err != nil || r.GetOutcome() != pb.Outcome_OUTCOME_PENDING {
			t.Fatalf("want a pending approval: %v %v", r, err)
		}
		return resp.GetResult().GetPending().GetId()
	}
	id := pending()
	for _, sub := range []string{"reviewers", "group:reviewers"} {
		tok := p.Mint(claimsFor(sub))
		_, err := apr.ListApprovals(bearer(tok), &pb.ListApprovalsRequest{})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("sub %q, no groups: ListApprovals %v, want PERMISSION_DENIED", sub, err)
		}
		if _, err := apr.Approve(bearer(tok), &pb.ApproveRequest{Id: id}); status.Code(err) != codes.PermissionDenied {
			t.Errorf("sub %q, no groups: Approve %v, want PERMISSION_DENIED", sub, err)
		}
		if _, err := apr.Deny(bearer(tok), &pb.DenyRequest{Id: id}); status.Code(err) != codes.PermissionDenied {
			t.Errorf("sub %q, no groups: Deny %v, want PERMISSION_DENIED", sub, err)
		}
	}
	member := p.Mint(claimsFor("carol", "reviewers"))
	list, err := apr.ListApprovals(bearer(member), &pb.ListApprovalsRequest{})
	if err != nil || len(list.GetApprovals()) != 1 {
		t.Fatalf("a member of group:reviewers lists: %v %v", list, err)
	}
	if _, err := apr.Approve(bearer(member), &pb.ApproveRequest{Id: id}); err != nil {
		t.Fatalf("a member of group:reviewers approves: %v", err)
	}
}

// --check warns when a bare approver (a principal) has the name of a
// configured group: the author likely meant "group:NAME".
func TestCheckWarnsBareApproverNamedLikeAGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.json")
	if err := os.WriteFile(cfg, []byte(`{"skills": [], "auth": {"tokens": [{"name": "a", "token": "0123456789abcdef"}],
		"groups": {"reviewers": {"tools": []}}}, "policy": {"approvers": ["reviewers", "group:reviewers", "ops"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	warnings, err := server.Check(server.Options{ConfigPath: cfg, Workspace: filepath.Join(dir, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, w := range warnings {
		if strings.Contains(w, "policy.approvers") {
			found = append(found, w)
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], `"reviewers"`) || !strings.Contains(found[0], `write "group:reviewers"`) {
		t.Fatalf("warnings %q, want one naming policy.approvers[0] and the group:reviewers spelling", warnings)
	}
}

// Two identity providers and static tokens do not share principal names:
// a second issuer's "alice" is not static alice (it reads none of her
// session files, over gRPC or /mcp), and the first issuer, unnamed, cannot
// sign anyone in as a static token's name ("root" is refused).
func TestIssuersAndStaticTokensDoNotShareNames(t *testing.T) {
	t.Parallel()
	first, second := idp.Start(t), idp.Start(t)
	const aliceTok, rootTok = "static-alice-secret-01", "static-root-secret-01"
	g := startGateway(t, fmt.Sprintf(`{"skills": [], "server": {"mcp": {"resource": %q}},
		"auth": {"tokens": [{"name": "alice", "token": %q}, {"name": "root", "token": %q, "admin": true}],
			"oidc": [{"issuer": %q, "audience": %q}, {"issuer": %q, "audience": %q, "name": "second"}],
			"groups": {"all": {"tools": ["*"]}}}}`,
		resourceURL, aliceTok, rootTok, first.Issuer, resourceURL, second.Issuer, resourceURL))
	for _, tok := range []string{aliceTok, rootTok} {
		if r := execIn(t, inSession(tok, "work"), g.grpc, "write", map[string]any{"path": "secret.txt", "content": "static's secret"}); r.GetIsError() {
			t.Fatal(r.GetOutput())
		}
	}
	for _, sub := range []string{"alice", "root"} {
		tok := second.Mint(claimsFor(sub, "all"))
		r := execIn(t, inSession(tok, "work"), g.grpc, "read", map[string]any{"path": "secret.txt"})
		if !r.GetIsError() || strings.Contains(r.GetOutput(), "static's secret") || !strings.Contains(r.GetOutput(), "secret.txt") {
			t.Errorf("second issuer's %q read static %s's session file over gRPC: %q", sub, sub, r.GetOutput())
		}
		hc := &http.Client{Transport: sessionHeaderBearer{id: "work", token: tok}}
		cs := g.mustConnectWith(t, hc)
		res := mcpclient.Call(t, cs, "read", map[string]any{"path": "secret.txt"})
		if !res.IsError || strings.Contains(mcpclient.Text(t, res), "static's secret") {
			t.Errorf("second issuer's %q read static %s's session file over /mcp: %q", sub, sub, mcpclient.Text(t, res))
		}
		// Its own session of that id is its own: what it writes, it reads.
		if r := execIn(t, inSession(tok, "work"), g.grpc, "write", map[string]any{"path": "secret.txt", "content": "second's"}); r.GetIsError() {
			t.Fatal(r.GetOutput())
		}
		if res := mcpclient.Call(t, cs, "read", map[string]any{"path": "secret.txt"}); res.IsError || !strings.Contains(mcpclient.Text(t, res), "second's") {
			t.Errorf("second:%s reads its own file over /mcp: %q", sub, mcpclient.Text(t, res))
		}
	}
	for _, tok := range []string{aliceTok, rootTok} {
		if r := execIn(t, inSession(tok, "work"), g.grpc, "read", map[string]any{"path": "secret.txt"}); !strings.Contains(r.GetOutput(), "static's secret") {
			t.Errorf("a static token's file was changed by a JWT caller: %q", r.GetOutput())
		}
	}
	// The unnamed issuer's subjects are bare names, so one equal to a
	// static token's name is refused outright, on both wires.
	for _, sub := range []string{"root", "alice", "second:alice"} {
		tok := first.Mint(claimsFor(sub, "all"))
		_, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), "principal") {
			t.Errorf("first issuer's %q over gRPC: %v, want UNAUTHENTICATED", sub, err)
		}
		if code, _, body := postMCP(t, g.url, "Bearer "+tok); code != http.StatusUnauthorized {
			t.Errorf("first issuer's %q over /mcp: %d %s", sub, code, body)
		}
	}
	if _, err := g.grpc.ListTools(bearerCtx(first.Mint(claimsFor("carol"))), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("the first issuer's other users keep working: %v", err)
	}
}

// sessionHeaderBearer sends a bearer token and Toolnexus-Session on every
// MCP request.
type sessionHeaderBearer struct{ id, token string }

func (s sessionHeaderBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Toolnexus-Session", s.id)
	r.Header.Set("Authorization", "Bearer "+s.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mustConnectWith opens an MCP session through hc (its transport sets the
// headers).
func (g *gw) mustConnectWith(t *testing.T, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "toolnexus-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
