package server_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/idp"
)

// An OAuth client of /mcp asks its provider for a token meant for the
// resource /mcp advertises (RFC 8707), so a token whose audience is that
// resource is accepted next to the issuer's configured audience — over
// gRPC and /mcp — and any other audience is still refused.
func TestAdvertisedResourceAcceptedAsAudience(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	g := startGateway(t, fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [], "server": {"mcp": {"resource": %q}},
		"auth": {"oidc": {"issuer": %q, "audience": "toolnexus-api"}, "groups": {"all": {"tools": ["*"]}}}}`, resourceURL, p.Issuer))
	for _, aud := range []string{resourceURL, "toolnexus-api"} {
		tok := p.Mint(claimsFor("alice", "all").With("aud", aud))
		if _, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{}); err != nil {
			t.Errorf("aud %q over gRPC: %v", aud, err)
		}
		if code, _, body := postMCP(t, g.url, "Bearer "+tok); code != http.StatusOK {
			t.Errorf("aud %q over /mcp: %d %s", aud, code, body)
		}
	}
	tok := p.Mint(claimsFor("alice", "all").With("aud", "https://elsewhere.test/mcp"))
	if _, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("another audience over gRPC: %v", err)
	}
	if code, _, _ := postMCP(t, g.url, "Bearer "+tok); code != http.StatusUnauthorized {
		t.Errorf("another audience over /mcp: %d", code)
	}
}

// exp (and nbf) are NumericDates (RFC 7519 section 2): a JSON number. A
// token whose exp is a string of digits is refused over gRPC and /mcp.
func TestJWTExpAsStringRefused(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	g := startGateway(t, identityConfig(p.Issuer, ""))
	later := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	for name, c := range map[string]idp.Claims{
		"exp string": claimsFor("alice", "dev").With("exp", later),
		"nbf string": claimsFor("alice", "dev").With("nbf", "0"),
	} {
		tok := p.Mint(c)
		_, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s over gRPC: %v, want UNAUTHENTICATED", name, err)
		}
		if code, _, body := postMCP(t, g.url, "Bearer "+tok); code != http.StatusUnauthorized {
			t.Errorf("%s over /mcp: %d %s", name, code, body)
		}
	}
	if _, err := g.grpc.ListTools(bearerCtx(p.Mint(claimsFor("alice", "dev"))), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("numeric exp: %v", err)
	}
}

// An elicitation answer that fails its requestedSchema is an error the
// caller can correct, naming the schema — never a path of the server's
// file system (the schema was once compiled as a file in its cwd).
func TestElicitationSchemaErrorShowsNoServerPath(t *testing.T) {
	f := everythingPending(t, "")
	alice := bearer(aliceSecret)
	const name = "everything_trigger-elicitation-request"
	p := pendingOf(t, execAs(t, alice, f, name, `{}`, nil), "elicitation")
	bad := execAs(t, alice, f, name, `{}`, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"integer": 500})})
	cwd, _ := os.Getwd()
	if out := bad.GetOutput(); !bad.GetIsError() || !strings.Contains(out, "requestedSchema") || strings.Contains(out, "file://") || strings.Contains(out, cwd) {
		t.Fatalf("mismatching answer: %q, want the schema error without a server path", out)
	}
}

// An expired pending id is "expired" to its owner only; to another
// principal it reads like an id that never existed, as an open one does,
// so ids cannot be probed.
func TestExpiredPendingIDUnknownToAnotherPrincipal(t *testing.T) {
	f := everythingPending(t, `"pendingTimeout": 300`)
	alice, mallory := bearer(aliceSecret), bearer(mallorySecret)
	const name = "everything_trigger-elicitation-request"
	p := pendingOf(t, execAs(t, alice, f, name, `{}`, nil), "elicitation")
	waitUntilPast(t, p.GetExpiresAt().AsTime())
	ans := &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Late"})}
	open := execAs(t, mallory, f, name, `{}`, &pb.Answer{Id: "elicitation-does-not-exist", Ok: true, Data: value(t, map[string]any{"name": "x"})})
	other := execAs(t, mallory, f, name, `{}`, ans)
	if !other.GetIsError() || strings.Contains(other.GetOutput(), "expired") || other.GetOutput() != open.GetOutput() {
		t.Fatalf("another principal's answer to an expired id: %q, want the unknown-id text %q", other.GetOutput(), open.GetOutput())
	}
	if own := execAs(t, alice, f, name, `{}`, ans); !own.GetIsError() || !strings.Contains(own.GetOutput(), "expired") {
		t.Fatalf("the owner's late answer: %q, want expired", own.GetOutput())
	}
}
