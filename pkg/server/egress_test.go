package server_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// The egress policies: agents run tools and connect anywhere the config
// allows, but agent-b may not connect at all.
const egressPolicies = `@id("agents-may-run-tools")
permit(principal, action == Action::"execute", resource);

@id("agents-may-connect")
permit(principal, action == Action::"connect", resource);

@id("no-egress-for-b")
@reason("agent-b works offline")
forbid(principal == Principal::"agent-b", action == Action::"connect", resource);
`

// Over the real wire, bash with sandbox.egress reaches an allowed host
// through the proxy as agent-a; agent-b's same command is refused by the
// Cedar forbid on Action::"connect", with the policy's id and reason in
// what the command prints; a host the config does not allow is refused
// for both. Every connection is an audit line and counted.
func TestEgressPolicyForbidsOnePrincipal(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello through the proxy")
	}))
	defer web.Close()
	port := web.Listener.Addr().(*net.TCPAddr).Port
	dir := testutil.ReachableBySandbox(t, t.TempDir())
	pol := filepath.Join(dir, "egress.cedar")
	if err := os.WriteFile(pol, []byte(egressPolicies), 0o600); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.log")
	cfg := fmt.Sprintf(`{"skills": [], "audit": {"path": %q},
		"auth": {"tokens": [{"name": "agent-a", "token": %q}, {"name": "agent-b", "token": %q}, {"name": "ops", "token": %q, "admin": true}]},
		"policy": {"files": [%q]},
		"sandbox": {"egress": {"allow": ["127.0.0.1:%d"]}}}`, auditPath, polAgentA, polAgentB, polOps, pol, port)
	ws := filepath.Join(dir, "ws")
	s := serve(t, cfg, func(o *server.Options) { o.Workspace = ws })
	conn := s.dial(t)
	srcs, err := pb.NewSourceServiceClient(conn).ListSources(bearer(polOps), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range srcs.GetSandbox().GetLayers() {
		if (l.GetName() == sandbox.LayerNetNS || l.GetName() == sandbox.LayerUserNS || l.GetName() == sandbox.LayerPIDNS) && !l.GetActive() {
			t.Skipf("sandbox layer %s is missing here (%s): no egress", l.GetName(), l.GetDetail())
		}
	}
	reg := pb.NewRegistryServiceClient(conn)
	bash := func(token, command string) string {
		t.Helper()
		resp, err := reg.Execute(bearer(token), &pb.ExecuteRequest{Name: "bash",
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: fmt.Sprintf(`{"command": %q}`, command)}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult().GetOutput()
	}
	curl := fmt.Sprintf("curl -sS --fail-with-body http://127.0.0.1:%d/", port)
	if out := bash(polAgentA, curl); !strings.Contains(out, "hello through the proxy") {
		t.Fatalf("agent-a through the proxy: %s", out)
	}
	if out := bash(polAgentB, curl); !strings.Contains(out, "egress refused by policy no-egress-for-b: 127.0.0.1 is denied by policy no-egress-for-b: agent-b works offline") {
		t.Fatalf("agent-b must be refused by the policy: %s", out)
	}
	other := fmt.Sprintf("curl -sS --fail-with-body http://127.0.0.1:%d/", port+1)
	if out := bash(polAgentA, other); !strings.Contains(out, "is refused: it is a loopback address") {
		t.Fatalf("a port the config does not allow: %s", out)
	}
	if out := bash(polAgentA, fmt.Sprintf("echo x > /dev/tcp/127.0.0.1/%d && echo reached", port)); strings.Contains(out, "reached") {
		t.Fatalf("a raw connect without the proxy reached the host: %s", out)
	}

	lines, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	var allowed, denied int
	for _, line := range strings.Split(string(lines), "\n") {
		if !strings.Contains(line, `"event":"egress"`) {
			continue
		}
		switch {
		case strings.Contains(line, `"principal":"agent-a"`) && strings.Contains(line, `"decision":"allow"`) &&
			strings.Contains(line, `"tool":"bash"`) && !strings.Contains(line, `"bytes_received":0`):
			allowed++
		case strings.Contains(line, `"principal":"agent-b"`) && strings.Contains(line, `"rule":"policy no-egress-for-b"`):
			denied++
		}
	}
	if allowed != 1 || denied != 1 {
		t.Fatalf("audit: %d allowed, %d denied lines:\n%s", allowed, denied, lines)
	}
	body := s.scrape(t)
	for _, want := range []string{`toolnexus_egress_connections_total{decision="allow"} 1`, `toolnexus_egress_connections_total{decision="deny"} 2`, `toolnexus_egress_bytes_total{direction="received"}`} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %s:\n%s", want, body)
		}
	}
}
