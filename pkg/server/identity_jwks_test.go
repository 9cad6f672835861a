package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/idp"
)

// jwksConfig accepts p's tokens for resourceURL, every caller in group
// "all" may use every tool, and the keys are fetched again every
// refreshMs.
func jwksConfig(p *idp.Provider, refreshMs int) string {
	return fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [],
		"auth": {"oidc": {"issuer": %q, "audience": %q, "jwksRefresh": %d}, "groups": {"all": {"tools": ["*"]}}}}`,
		p.Issuer, resourceURL, refreshMs)
}

// The provider drops a signing key (say, it leaked): within the refresh
// interval, tokens it signed are refused over gRPC and /mcp — the one
// already verified and cached, and a fresh one its thief mints — while
// the new key's tokens work. No token with an unknown key id is needed to
// make it happen.
func TestJWKSRemovedKeyIsDroppedAtRefresh(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	g := startGateway(t, jwksConfig(p, 1000))
	cached := p.Mint(claimsFor("alice", "all")) // rsa-1
	if _, err := g.grpc.ListTools(bearerCtx(cached), &pb.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	p.Rotate()
	p.Retire("rsa-1")
	fresh := p.Mint(claimsFor("bob", "all"))
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := g.grpc.ListTools(bearerCtx(cached), &pb.ListToolsRequest{})
		if status.Code(err) == codes.Unauthenticated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a token of the removed key is still accepted 20 s after its removal (jwksRefresh 1 s): %v", err)
		}
		<-time.After(100 * time.Millisecond) // polling for the scheduled refresh
	}
	stolen := p.MintWith("rsa-1", claimsFor("mallory", "all"))
	for name, tok := range map[string]string{"cached": cached, "minted after the removal": stolen} {
		_, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), "unknown key") {
			t.Errorf("removed key's %s token over gRPC: %v, want UNAUTHENTICATED (unknown key)", name, err)
		}
		if code, _, body := postMCP(t, g.url, "Bearer "+tok); code != http.StatusUnauthorized || !strings.Contains(body, "unknown key") {
			t.Errorf("removed key's %s token over /mcp: %d %s", name, code, body)
		}
	}
	if _, err := g.grpc.ListTools(bearerCtx(fresh), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("the new key's token: %v", err)
	}
	if code, _, body := postMCP(t, g.url, "Bearer "+fresh); code != http.StatusOK {
		t.Fatalf("the new key's token over /mcp: %d %s", code, body)
	}
}

// A forged key id uses the refetch slot, and the provider rotates its key
// right after: the new key's first token is accepted at once (it waits
// for the next fetch the rate limit allows instead of failing), over gRPC
// and /mcp. And a token of a key rotated in while a forged key id's fetch
// is in flight waits for that fetch and is accepted.
func TestJWKSRotatedKeyAcceptedAfterARogueKid(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	g := startGateway(t, jwksConfig(p, 600000))
	rogue := p.MintUnpublished(claimsFor("mallory", "all"))
	for _, wire := range []string{"gRPC", "/mcp"} {
		if _, err := g.grpc.ListTools(bearerCtx(rogue), &pb.ListToolsRequest{}); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("the forged key id: %v", err)
		}
		p.Rotate()
		fresh := p.Mint(claimsFor("alice", "all"))
		if wire == "gRPC" {
			if _, err := g.grpc.ListTools(bearerCtx(fresh), &pb.ListToolsRequest{}); err != nil {
				t.Fatalf("the rotated key's first token over gRPC, right after a forged key id's fetch: %v", err)
			}
			continue
		}
		if code, _, body := postMCP(t, g.url, "Bearer "+fresh); code != http.StatusOK {
			t.Fatalf("the rotated key's first token over /mcp, right after a forged key id's fetch: %d %s", code, body)
		}
	}

	release := p.HoldKeys()
	defer release()
	rogueDone := make(chan error, 1)
	go func() {
		_, err := g.grpc.ListTools(bearerCtx(p.MintUnpublished(claimsFor("mallory", "all"))), &pb.ListToolsRequest{})
		rogueDone <- err
	}()
	for p.Held() == 0 {
		<-time.After(10 * time.Millisecond) // until the forged key id's fetch is in flight
	}
	p.Rotate()
	fresh := p.Mint(claimsFor("carol", "all"))
	freshDone := make(chan error, 1)
	go func() {
		_, err := g.grpc.ListTools(bearerCtx(fresh), &pb.ListToolsRequest{})
		freshDone <- err
	}()
	release()
	if err := <-freshDone; err != nil {
		t.Fatalf("a key rotated in during a forged key id's fetch: %v", err)
	}
	if err := <-rogueDone; status.Code(err) != codes.Unauthenticated {
		t.Fatalf("the forged key id: %v", err)
	}
}
