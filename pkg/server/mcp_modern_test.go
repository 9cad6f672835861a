package server_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// TestMCPGatewayModernResumeOnAnotherReplica: two replicas with
// sessions.shared, one server.mcp.stateKeyFile and one store of suspended
// calls (cluster.redis: a question is an entry of it). A question
// suspended on one is resumed on the other, directly and through nginx
// round robin (where each request of the client lands on the next
// replica); a replica with another key refuses the state.
func TestMCPGatewayModernResumeOnAnotherReplica(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	redis := testutil.StartRedis(t)
	keyFile, otherKey := filepath.Join(dir, "state.key"), filepath.Join(dir, "other.key")
	for _, f := range []string{keyFile, otherKey} {
		if err := os.WriteFile(f, []byte(rand.Text()+rand.Text()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var grpcAddrs, mcpAddrs []string
	for i, key := range []string{keyFile, keyFile, otherKey} {
		cfg := fmt.Sprintf(`{"builtins": true, "skills": [], "sessions": {"shared": true, "root": %q}, "server": {"mcp": {"stateKeyFile": %q}},
			"cluster": {"name": "test", "redis": {"url": %q, "timeout": 2000}}}`, dir, key, redis.URL)
		srv, _, _ := launch(t, cfg, func(o *server.Options) {
			o.MetricsListen = "-"
			o.MCPListen = "127.0.0.1:0"
		})
		if i < 2 {
			grpcAddrs = append(grpcAddrs, srv.Addr().String())
		}
		mcpAddrs = append(mcpAddrs, "http://"+srv.MCPAddr().String()+server.MCPPath)
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(mcpclient.QuestionArgs), &args)
	good := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "green", "q2": "calm"}}

	state, id := mcpclient.Suspend(t, mcpclient.Modern(t, mcpAddrs[0]), "question", args)
	if msg := mcpclient.Refused(t, mcpclient.Modern(t, mcpAddrs[2]), "question", args, state, id, good); !strings.Contains(msg, "signature") {
		t.Fatalf("a replica with another key: %q", msg)
	}
	if res := mcpclient.Retry(t, mcpclient.Modern(t, mcpAddrs[1]), "question", args, state, id, good); res.IsError || mcpclient.Text(t, res) != `{"Pick a color?":"green","Why?":"calm"}` {
		t.Fatalf("resumed on the other replica: %q", mcpclient.Text(t, res))
	}

	nginxPath(t)
	httpHosts := []string{strings.TrimSuffix(strings.TrimPrefix(mcpAddrs[0], "http://"), server.MCPPath), strings.TrimSuffix(strings.TrimPrefix(mcpAddrs[1], "http://"), server.MCPPath)}
	_, lb := startNginxWith(t, nginxRoundRobin, grpcAddrs, httpHosts)
	cs := mcpclient.Modern(t, "http://"+lb+server.MCPPath)
	for i := range 3 { // suspend and resume land on different replicas in turn
		state, id := mcpclient.Suspend(t, cs, "question", args)
		if res := mcpclient.Retry(t, cs, "question", args, state, id, good); res.IsError || mcpclient.Text(t, res) != `{"Pick a color?":"green","Why?":"calm"}` {
			t.Fatalf("round %d through nginx: %q", i, mcpclient.Text(t, res))
		}
	}
}
