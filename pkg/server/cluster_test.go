package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Replicas sharing a control plane (cluster.redis) each start their own
// client to one real redis-server; every test starts its own.

const (
	clusterGRPCToken = "token-of-grpc-agent-0123456789"
	clusterMCPToken  = "token-of-mcp-agent-0123456789"
)

// clusterReplicas starts n in-process replicas of cfgJSON (with
// cluster.redis pointing at srv) behind nginx round robin, each with a
// whoami tool naming it, and returns the balancer's gRPC and HTTP
// addresses.
func clusterReplicas(t *testing.T, srv *testutil.RedisServer, n int, cfgJSON string) (lb, lbHTTP string) {
	t.Helper()
	cfg := strings.Replace(cfgJSON, "{", fmt.Sprintf(`{"cluster": {"redis": {"url": %q, "timeout": 2000}}, `, srv.URL), 1)
	var grpcAddrs, mcpAddrs []string
	for i := range n {
		name := fmt.Sprintf("r%d", i)
		whoami := tool.Must(tool.Native("whoami", func(context.Context, map[string]any) (any, error) { return name, nil },
			tool.WithDescription("Names the replica that answered.")))
		s, _, _ := launch(t, cfg, func(o *server.Options) {
			o.Native = []tool.Tool{whoami}
			o.MetricsListen = "-"
			o.MCPListen = "127.0.0.1:0"
		})
		grpcAddrs, mcpAddrs = append(grpcAddrs, s.Addr().String()), append(mcpAddrs, s.MCPAddr().String())
	}
	return startNginxWith(t, nginxRoundRobin, grpcAddrs, mcpAddrs)
}

// burst sends calls at once and returns how many were admitted, by
// replica, and how long the burst took.
func burst(calls int, call func() (who string, admitted bool)) (map[string]int, int, time.Duration) {
	var mu sync.Mutex
	by := map[string]int{}
	admitted := 0
	var wg sync.WaitGroup
	start := time.Now()
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who, ok := call()
			mu.Lock()
			defer mu.Unlock()
			if ok {
				admitted++
				by[who]++
			}
		}()
	}
	wg.Wait()
	return by, admitted, time.Since(start)
}

// checkBurst fails unless exactly the burst was admitted. A burst slower
// than one token's refill (200 ms at 5/s) may earn one more per 200 ms.
func checkBurst(t *testing.T, admitted int, took time.Duration, by map[string]int) {
	t.Helper()
	extra := int(took / (200 * time.Millisecond))
	if admitted < 5 || admitted > 5+extra {
		t.Fatalf("admitted %d of 15 calls over 3 replicas in %s (by replica %v), want exactly 5 (the shared burst)", admitted, took, by)
	}
	t.Logf("admitted %d in %s, by replica %v", admitted, took, by)
}

func TestRateLimitIsExactAcrossReplicasBehindRoundRobin(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	srv := testutil.StartRedis(t)
	lb, lbHTTP := clusterReplicas(t, srv, 3, fmt.Sprintf(`{"builtins": false, "skills": [],
  "auth": {"tokens": [{"name": "grpc-agent", "token": %q}, {"name": "mcp-agent", "token": %q}]},
  "sessions": {"shared": true, "root": %q},
  "limits": {"principals": {"*": {"callsPerSecond": 5, "burst": 5}}}}`, clusterGRPCToken, clusterMCPToken, t.TempDir()))

	t.Run("grpc", func(t *testing.T) {
		reg := pb.NewRegistryServiceClient(dialGRPC(t, lb))
		by, admitted, took := burst(15, func() (string, bool) {
			resp, err := reg.Execute(bearer(clusterGRPCToken), &pb.ExecuteRequest{Name: "whoami"})
			if status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "limits.principals.*.callsPerSecond") {
				return "", false
			}
			if err != nil || resp.GetResult().GetIsError() {
				t.Errorf("whoami: %v %v", err, resp.GetResult())
				return "", false
			}
			return resp.GetResult().GetOutput(), true
		})
		checkBurst(t, admitted, took, by)
	})
	t.Run("mcp", func(t *testing.T) {
		url := "http://" + lbHTTP + server.MCPPath
		by, admitted, took := burst(15, func() (string, bool) {
			code, body := mcpPostNoFatal(url, clusterMCPToken, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
			if strings.Contains(body, `"code":-32029`) {
				return "", false
			}
			if code != http.StatusOK || !strings.Contains(body, `"result"`) {
				t.Errorf("tools/call whoami: %d %s", code, body)
				return "", false
			}
			for _, r := range []string{"r0", "r1", "r2"} {
				if strings.Contains(body, `"text":"`+r+`"`) {
					return r, true
				}
			}
			return "?", true
		})
		checkBurst(t, admitted, took, by)
	})
}

// mcpPostNoFatal is mcpPost for worker goroutines: a transport error is
// returned in the body instead of ending the test from another goroutine.
func mcpPostNoFatal(url, token, body string) (int, string) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}
