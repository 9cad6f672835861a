package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// The audit trail of a real server: calls over gRPC (Execute and
// ExecuteStream) and /mcp, allowed and denied, a reload by an admin token and one by signal, each a line with
// every field; the file survives rotation (renamed away, then a reload);
// and neither bearer token nor the expanded ${VAR} header value appears in
// any of it, though both were used.
func TestAuditTrail(t *testing.T) {
	const agentToken, adminToken, headerSecret = "agent-token-5f1c9e2a", "admin-token-8d3b7c41", "hdr-secret-0a9e77f3"
	t.Setenv("TN_AUDIT_AGENT", agentToken)
	t.Setenv("TN_AUDIT_ADMIN", adminToken)
	t.Setenv("TN_AUDIT_HDR", headerSecret)
	var gotHeader string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Get("X-Api-Key")
		fmt.Fprint(w, "pong")
	}))
	defer api.Close()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "audit.log")
	cfg := fmt.Sprintf(`{"builtins": false, "debug": true,
		"http": [{"name": "ping", "url": %q, "headers": {"X-Api-Key": "${TN_AUDIT_HDR}"}}],
		"auth": {"tokens": [{"name": "agent", "token": "${TN_AUDIT_AGENT}", "tools": ["ping"]},
		                    {"name": "ops", "token": "${TN_AUDIT_ADMIN}", "admin": true}]},
		"audit": {"path": %q}}`, api.URL, logPath)
	srv, _, stop := launch(t, cfg, func(o *server.Options) { o.MCPListen = "127.0.0.1:0" })

	conn, err := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := pb.NewRegistryServiceClient(conn)
	agent := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+agentToken)
	admin := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminToken)
	args := `{"q": "hello"}`
	if r, err := reg.Execute(agent, &pb.ExecuteRequest{Name: "ping", CallId: "call-7", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}}); err != nil || r.GetResult().GetIsError() {
		t.Fatalf("ping: %v %v", err, r)
	}
	if gotHeader != headerSecret {
		t.Fatalf("the HTTP tool got X-Api-Key %q: the secret must be in play for this test to mean anything", gotHeader)
	}
	// The caller is answered as for an unknown name; the audit says denied.
	if r, err := reg.Execute(agent, &pb.ExecuteRequest{Name: "debug_fail", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}}); err != nil || r.GetResult().GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("debug_fail with the agent token: %v %v, want UNKNOWN_TOOL", err, r)
	}
	st, err := reg.ExecuteStream(agent, &pb.ExecuteRequest{Name: "ping", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := st.Recv()
		if err != nil {
			t.Fatalf("ExecuteStream: %v", err)
		}
		if ev.GetResult() != nil {
			break
		}
	}
	// /mcp with the same token.
	hc := &http.Client{Transport: headerRT{base: http.DefaultTransport, key: "Authorization", value: "Bearer " + agentToken}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + srv.MCPAddr().String() + server.MCPPath, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{"q": "hello"}}); err != nil || r.IsError {
		t.Fatalf("tools/call ping: %v %v", err, r)
	}
	_ = cs.Close()
	if _, err := pb.NewSourceServiceClient(conn).Reload(admin, &pb.ReloadRequest{}); err != nil {
		t.Fatal(err)
	}

	// logrotate: rename, then reload (SIGHUP does the same).
	rotated := logPath + ".1"
	if err := os.Rename(logPath, rotated); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, err := reg.Execute(agent, &pb.ExecuteRequest{Name: "ping", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}}); err != nil || r.GetResult().GetIsError() {
		t.Fatalf("ping after rotation: %v %v", err, r)
	}
	stop()
	checkAuditTrail(t, rotated, logPath, args, agentToken, adminToken, headerSecret)
}

// checkAuditTrail reads TestAuditTrail's rotated and current audit files:
// each line has the fields of its event, and neither file holds a secret
// nor the arguments' text.
func checkAuditTrail(t *testing.T, rotated, logPath, args string, secrets ...string) {
	t.Helper()
	old, cur := testutil.JSONLines(t, rotated), testutil.JSONLines(t, logPath)
	if len(old) != 5 || len(cur) != 2 {
		t.Fatalf("rotated file has %d lines (want 5: four calls, one reload), new file %d (want 2: the signal reload, one call)", len(old), len(cur))
	}
	sum := sha256.Sum256([]byte(args))
	mcpSum := sha256.Sum256([]byte(`{"q":"hello"}`))
	checks := []struct {
		line map[string]any
		want map[string]any
	}{
		{old[0], map[string]any{"event": "execute", "method": "Execute", "protocol": "grpc", "principal": "agent", "session": "",
			"tool": "ping", "source": "http", "call_id": "call-7", "outcome": "ok", "is_error": false,
			"argument_bytes": float64(len(args)), "argument_sha256": hex.EncodeToString(sum[:])}},
		{old[1], map[string]any{"event": "execute", "tool": "debug_fail", "source": "debug", "principal": "agent", "outcome": "denied", "is_error": true}},
		{old[2], map[string]any{"event": "execute", "method": "ExecuteStream", "protocol": "grpc", "principal": "agent", "tool": "ping",
			"outcome": "ok", "argument_sha256": hex.EncodeToString(sum[:])}},
		{old[3], map[string]any{"event": "execute", "method": "tools/call", "protocol": "mcp", "principal": "agent", "tool": "ping",
			"outcome": "ok", "argument_sha256": hex.EncodeToString(mcpSum[:])}},
		{old[4], map[string]any{"event": "reload", "principal": "ops", "trigger": "rpc", "outcome": "ok"}},
		{cur[0], map[string]any{"event": "reload", "principal": "", "trigger": "signal", "outcome": "ok"}},
		{cur[1], map[string]any{"event": "execute", "tool": "ping", "outcome": "ok"}},
	}
	for i, c := range checks {
		for k, v := range c.want {
			if got, ok := c.line[k]; !ok || fmt.Sprint(got) != fmt.Sprint(v) {
				t.Errorf("line %d: %s = %v, want %v (%v)", i, k, got, v, c.line)
			}
		}
		for _, k := range []string{"time"} {
			if c.line[k] == nil || c.line[k] == "" {
				t.Errorf("line %d has no %s", i, k)
			}
		}
	}
	if d, _ := old[0]["duration_ms"].(float64); d <= 0 {
		t.Errorf("duration_ms = %v", old[0]["duration_ms"])
	}
	for _, f := range []string{rotated, logPath} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range append(secrets, "hello") {
			if strings.Contains(string(raw), secret) {
				t.Errorf("%s contains %q", filepath.Base(f), secret)
			}
		}
	}
}
