package server_test

import (
	"log/slog"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/idp"
)

// A JWT whose groups match no auth.groups entry (Keycloak's default group
// paths, "/dev") verifies but gets no tools: the server says so at debug
// with the fix, and counts it in toolnexus_auth_groups_unmatched_total —
// once per token (verified tokens are cached), not per call.
func TestJWTGroupsMatchingNothingAreLoggedAndCounted(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	var logs testutil.Buffer
	g := startGatewayLogging(t, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), identityConfig(p.Issuer, ""))
	if line := unlabeled(g.scrape(t), "toolnexus_auth_groups_unmatched_total"); !strings.HasSuffix(line, " 0") {
		t.Fatalf("first scrape: %q, want the series at 0", line)
	}
	tok := p.Mint(claimsFor("carol", "/dev"))
	for range 3 {
		list, err := g.grpc.ListTools(bearerCtx(tok), &pb.ListToolsRequest{})
		if err != nil || len(list.GetTools()) != 0 {
			t.Fatalf("ListTools: %v %v, want no tools and no error", list, err)
		}
	}
	if line := unlabeled(g.scrape(t), "toolnexus_auth_groups_unmatched_total"); !strings.HasSuffix(line, " 1") {
		t.Errorf("after three calls with one token: %q, want 1", line)
	}
	out := logs.String()
	for _, want := range []string{"JWT groups match no auth.groups entry", "principal=carol", `name the auth.groups entry \"/dev\"`, "Full group path"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, tok) {
		t.Fatal("the token reached the log")
	}
	// A token whose group matches is not counted.
	if _, err := g.grpc.ListTools(bearerCtx(p.Mint(claimsFor("alice", "dev"))), &pb.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	if line := unlabeled(g.scrape(t), "toolnexus_auth_groups_unmatched_total"); !strings.HasSuffix(line, " 1") {
		t.Errorf("after a matching token: %q, want still 1", line)
	}
}

// unlabeled is the sample line of a metric without labels, or "".
func unlabeled(body, name string) string {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name+" ") {
			return line
		}
	}
	return ""
}
