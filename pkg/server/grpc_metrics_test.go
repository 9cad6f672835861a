package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// TestGRPCServerMetrics checks the standard grpc_server_* series (the names
// and labels of go-grpc-middleware's provider, which dashboards query):
// unary calls that succeed and that auth refuses, a server stream with its
// messages, a method registered after the services (health), and the
// series created for every method and code before any call.
func TestGRPCServerMetrics(t *testing.T) {
	t.Parallel()
	const cfg = `{"debug": true, "builtins": false, "skills": [],
		"auth": {"tokens": [{"name": "agent", "token": "s3cret-agent-token"}]}}`
	srv, _, _ := launch(t, cfg, nil)
	conn, err := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := pb.NewRegistryServiceClient(conn)
	authed := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret-agent-token")
	for range 3 {
		if _, err := reg.Execute(authed, &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without a token: %v", err)
	}
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(authed)
	stream, err := reg.WatchTools(ctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	for {
		if _, err := stream.Recv(); err != nil {
			break
		}
	}

	f := &fixture{srv: srv}
	exec := []string{`grpc_type="unary"`, `grpc_service="toolnexus.v1.RegistryService"`, `grpc_method="Execute"`}
	watch := []string{`grpc_type="server_stream"`, `grpc_service="toolnexus.v1.RegistryService"`, `grpc_method="WatchTools"`}
	health := []string{`grpc_type="unary"`, `grpc_service="grpc.health.v1.Health"`, `grpc_method="Check"`}
	want := []struct {
		name   string
		labels []string
		value  string
	}{
		{"grpc_server_started_total", exec, "4"},
		{"grpc_server_msg_received_total", exec, "4"},
		{"grpc_server_msg_sent_total", exec, "3"},
		{"grpc_server_handled_total", append(exec, `grpc_code="OK"`), "3"},
		{"grpc_server_handled_total", append(exec, `grpc_code="Unauthenticated"`), "1"},
		{"grpc_server_handling_seconds_count", exec, "4"},
		{"grpc_server_handled_total", append(health, `grpc_code="OK"`), "1"},
		{"grpc_server_started_total", watch, "1"},
		{"grpc_server_msg_received_total", watch, "1"},
		{"grpc_server_msg_sent_total", watch, "1"},
		{"grpc_server_handled_total", append(watch, `grpc_code="OK"`), "1"},
		// Created before any call, for every method and code.
		{"grpc_server_handled_total", []string{`grpc_method="Reload"`, `grpc_code="PermissionDenied"`}, "0"},
		{"grpc_server_started_total", []string{`grpc_method="ListSources"`}, "0"},
	}
	// The stream's end is recorded by the server after the client has
	// seen it cancelled: poll the observable counter (bounded).
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		body = f.scrape(t)
		if metricValue(t, body, "grpc_server_handled_total", append(watch, `grpc_code="OK"`)...) == "1" {
			break
		}
	}
	for _, w := range want {
		if got := metricValue(t, body, w.name, w.labels...); got != w.value {
			t.Errorf("%s{%s} = %q, want %s", w.name, strings.Join(w.labels, ","), got, w.value)
		}
	}
}
