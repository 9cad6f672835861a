package server_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The service config a client uses against N replicas behind one name
// (a Kubernetes headless Service: dns:///toolnexus-headless:50051).
const roundRobinConfig = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// replica is one stateless server; its whoami tool names it.
type replica struct {
	name string
	addr string
	stop func()
}

func startReplica(t *testing.T, name string) *replica {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(`{"builtins": false, "skills": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	whoami := tool.Must(tool.Native("whoami", func(context.Context, map[string]any) (any, error) {
		return name, nil
	}, tool.WithDescription("Names the replica that answered.")))
	srv, stop := servertest.Start(t, server.Options{
		ConfigPath:    cfg,
		Listen:        "127.0.0.1:0",
		MetricsListen: "-",
		Workspace:     filepath.Join(dir, "ws"),
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Native:        []tool.Tool{whoami},
	})
	return &replica{name: name, addr: srv.Addr().String(), stop: stop}
}

// whoami makes n calls one after another and counts who answered. Every
// call must succeed: a client of a replicated service never sees a replica
// come and go.
func whoami(t *testing.T, c pb.RegistryServiceClient, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range n {
		resp, err := c.Execute(context.Background(), &pb.ExecuteRequest{Name: "whoami"})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if r := resp.GetResult(); r.GetIsError() {
			t.Fatalf("call %d: tool failed: %s", i, r.GetOutput())
		}
		got[resp.GetResult().GetOutput()]++
	}
	return got
}

func TestRoundRobinSpreadsCallsOverReplicas(t *testing.T) {
	t.Parallel()
	replicas := []*replica{startReplica(t, "r0"), startReplica(t, "r1"), startReplica(t, "r2")}

	// A manual resolver stands in for DNS returning the three pod IPs of a
	// headless Service; the balancing is the same.
	res := manual.NewBuilderWithScheme("toolnexus-test")
	var addrs []resolver.Address
	for _, r := range replicas {
		addrs = append(addrs, resolver.Address{Addr: r.addr})
	}
	res.InitialState(resolver.State{Addresses: addrs})
	conn, err := grpc.NewClient(res.Scheme()+":///toolnexus-headless:50051",
		grpc.WithResolvers(res),
		grpc.WithDefaultServiceConfig(roundRobinConfig),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewRegistryServiceClient(conn)

	// round_robin picks among the connections that are ready; until all
	// three are, calls go to the ones that are. Warm up by calls, not sleeps,
	// until every replica has answered once.
	seen := map[string]int{}
	for calls := 0; len(seen) < len(replicas); calls++ {
		if calls == 300 {
			t.Fatalf("after %d calls only %v answered; want all of r0, r1, r2", calls, seen)
		}
		for k, v := range whoami(t, client, 1) {
			seen[k] += v
		}
	}

	// All three ready: consecutive calls cycle through them exactly.
	got := whoami(t, client, 30)
	for _, r := range replicas {
		if got[r.name] != 10 {
			t.Errorf("30 calls over 3 replicas: %v; want 10 each", got)
			break
		}
	}

	// Stop one replica (graceful: NOT_SERVING, GOAWAY, drain). The client
	// must keep working on the other two without a single failed call.
	replicas[1].stop()
	got = whoami(t, client, 30)
	if got["r1"] != 0 {
		t.Errorf("the stopped replica answered %d calls", got["r1"])
	}
	if got["r0"] == 0 || got["r2"] == 0 || got["r0"]+got["r2"] != 30 {
		t.Errorf("after stopping r1: %v; want all 30 calls on r0 and r2, both used", got)
	}
	t.Logf("after stopping r1: %v", got)
}
