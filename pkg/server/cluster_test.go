package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
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
	cfg := strings.Replace(cfgJSON, "{", fmt.Sprintf(`{"cluster": {"name": "test", "redis": {"url": %q, "timeout": 2000}}, `, srv.URL), 1)
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

// clusterProcConfig is a replica process's config: the builtins without
// webfetch, debug tools as asked, the control plane at srv.
func clusterProcConfig(srv *testutil.RedisServer, debug bool) string {
	return fmt.Sprintf(`{"debug": %v, "skills": [], "builtins": {"tools": {"webfetch": false}},
  "cluster": {"name": "test", "redis": {"url": %q, "timeout": 2000}}}`, debug, srv.URL)
}

// hasTool reports whether the replica at addr lists name.
func hasTool(t *testing.T, addr, name string) bool {
	t.Helper()
	resp, err := pb.NewRegistryServiceClient(dialGRPC(t, addr)).ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools on %s: %v", addr, err)
	}
	for _, tl := range resp.GetTools() {
		if tl.GetName() == name {
			return true
		}
	}
	return false
}

// Reload through the balancer (toolnexus reload), and SIGHUP on one
// replica, reach all three; the answer counts them and names a failure.
func TestReloadReachesEveryReplica(t *testing.T) {
	t.Parallel()
	runReplicaMain()
	nginxPath(t)
	srv := testutil.StartRedis(t)
	var reps []*replicaProc
	var addrs []string
	for i := range 3 {
		r := startReplicaWithConfig(t, t.Name(), fmt.Sprintf("r%d", i), clusterProcConfig(srv, false))
		reps, addrs = append(reps, r), append(addrs, r.grpc)
	}
	lb := startNginx(t, addrs)
	src := pb.NewSourceServiceClient(dialGRPC(t, lb))
	writeAll := func(debug bool) {
		for _, r := range reps {
			if err := os.WriteFile(r.cfg, []byte(clusterProcConfig(srv, debug)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}

	writeAll(true)
	resp, err := src.Reload(context.Background(), &pb.ReloadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetReplicas()); n != 3 {
		t.Fatalf("the answer lists %d replicas, want 3: %v", n, resp.GetReplicas())
	}
	for _, r := range resp.GetReplicas() {
		if !r.GetApplied() || r.GetRevision() == 0 {
			t.Errorf("replica %s: %+v", r.GetReplica(), r)
		}
	}
	for _, r := range reps {
		if !hasTool(t, r.grpc, "debug_echo") {
			t.Errorf("%s does not serve the reloaded config", r.name)
		}
	}

	// SIGHUP on r1 alone reloads all three.
	writeAll(false)
	if err := reps[1].cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, r := range reps {
		for hasTool(t, r.grpc, "debug_echo") {
			if time.Now().After(deadline) {
				t.Fatalf("%s never reloaded after SIGHUP on r1:\n%s", r.name, r.logText())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !strings.Contains(reps[1].logText(), "reload: 3 of 3 replicas applied it") {
		t.Errorf("r1's log does not count the replicas:\n%s", reps[1].logText())
	}

	// A replica whose config is broken is named, with the reason.
	writeAll(true)
	if err := os.WriteFile(reps[2].cfg, []byte(`{"limits": {"timeout": -1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err = pb.NewSourceServiceClient(dialGRPC(t, reps[0].grpc)).Reload(context.Background(), &pb.ReloadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	applied, failed := 0, ""
	for _, r := range resp.GetReplicas() {
		if r.GetApplied() {
			applied++
		} else {
			failed = r.GetError()
		}
	}
	if applied != 2 || !strings.Contains(failed, "limits.timeout") {
		t.Fatalf("with r2's config broken: %d applied, failure %q; answer %v", applied, failed, resp.GetReplicas())
	}
}

// kill -9 Redis mid-run: each replica limits on its own (the burst per
// replica), and the limit is shared again once Redis is back, without a
// restart.
func TestRateLimitFallsBackWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	srv := testutil.StartRedis(t)
	lb, _ := clusterReplicas(t, srv, 3, fmt.Sprintf(`{"builtins": false, "skills": [],
  "auth": {"tokens": [{"name": "grpc-agent", "token": %q}]},
  "limits": {"principals": {"*": {"callsPerSecond": 0.2, "burst": 2}}}}`, clusterGRPCToken))
	reg := pb.NewRegistryServiceClient(dialGRPC(t, lb))
	call := func() bool {
		resp, err := reg.Execute(bearer(clusterGRPCToken), &pb.ExecuteRequest{Name: "whoami"})
		if status.Code(err) == codes.ResourceExhausted {
			return false
		}
		if err != nil || resp.GetResult().GetIsError() {
			t.Fatalf("whoami: %v %v", err, resp.GetResult())
		}
		return true
	}
	count := func() int {
		n := 0
		for range 12 { // one after the other: round robin gives each replica 4
			if call() {
				n++
			}
		}
		return n
	}
	if n := count(); n != 2 {
		t.Fatalf("Redis up: admitted %d, want the shared burst, 2", n)
	}
	srv.Kill()
	if n := count(); n != 6 {
		t.Fatalf("Redis down: admitted %d, want each replica's own burst (3 × 2)", n)
	}
	srv.Start()                         // empty: the shared buckets start full
	time.Sleep(2500 * time.Millisecond) // the replicas' health checks (every second) find it
	if n := count(); n != 2 {
		t.Fatalf("Redis back: admitted %d, want the shared burst, 2", n)
	}
}

// The health service answers NOT_SERVING while Redis is down only when
// the operator asked for it (cluster.redis.required); otherwise the
// replica keeps serving on its fallbacks.
func TestHealthFollowsRedisOnlyWhenRequired(t *testing.T) {
	t.Parallel()
	for _, required := range []bool{true, false} {
		t.Run(fmt.Sprintf("required=%v", required), func(t *testing.T) {
			srv := testutil.StartRedis(t)
			s, _, _ := launch(t, fmt.Sprintf(`{"skills": [], "builtins": false, "cluster": {"name": "test", "redis": {"url": %q, "required": %v}}}`, srv.URL, required), nil)
			hc := healthpb.NewHealthClient(dialGRPC(t, s.Addr().String()))
			healthz := "http://" + s.MetricsAddr().String() + "/healthz"
			check := func() (healthpb.HealthCheckResponse_ServingStatus, int) {
				resp, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{})
				if err != nil {
					t.Fatal(err)
				}
				r, err := http.Get(healthz)
				if err != nil {
					t.Fatal(err)
				}
				r.Body.Close()
				return resp.GetStatus(), r.StatusCode
			}
			waitStatus := func(want healthpb.HealthCheckResponse_ServingStatus, wantHTTP int) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for {
					got, code := check()
					if got == want && code == wantHTTP {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("health %v, /healthz %d; want %v, %d", got, code, want, wantHTTP)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			waitStatus(healthpb.HealthCheckResponse_SERVING, http.StatusOK)
			srv.Kill()
			if required {
				waitStatus(healthpb.HealthCheckResponse_NOT_SERVING, http.StatusServiceUnavailable)
			} else {
				time.Sleep(1500 * time.Millisecond) // past a health check
				waitStatus(healthpb.HealthCheckResponse_SERVING, http.StatusOK)
			}
			srv.Start()
			waitStatus(healthpb.HealthCheckResponse_SERVING, http.StatusOK)
		})
	}
}
