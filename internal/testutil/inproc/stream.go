package inproc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// Collect reads an ExecuteStream to its end: the events before the
// result, and the result. It fails the test if anything follows the
// result, the result is missing or the stream fails.
func Collect(t testing.TB, stream interface {
	Recv() (*pb.ExecuteEvent, error)
}) ([]*pb.ExecuteEvent, *pb.ToolResult) {
	t.Helper()
	var events []*pb.ExecuteEvent
	var result *pb.ToolResult
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if result != nil {
			t.Fatalf("an event after the result: %v", ev)
		}
		if r := ev.GetResult(); r != nil {
			result = r
			continue
		}
		events = append(events, ev)
	}
	if result == nil {
		t.Fatal("the stream ended without a result event")
	}
	return events, result
}

// Stream is one ExecuteStream call with arguments as the model's JSON,
// read to its end (Collect).
func (r *Rig) Stream(t testing.TB, ctx context.Context, name, argsJSON string) ([]*pb.ExecuteEvent, *pb.ToolResult) {
	t.Helper()
	s, err := r.Registry.ExecuteStream(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: argsJSON}})
	if err != nil {
		t.Fatal(err)
	}
	return Collect(t, s)
}

// InSession names a session on a call; with a bearer token too when
// token != "".
func InSession(token, id string) context.Context {
	ctx := context.Background()
	if token != "" {
		ctx = Bearer(token)
	}
	return metadata.AppendToOutgoingContext(ctx, "toolnexus-session", id)
}

// SessionIDs lists the sessions ctx's caller sees over conn, as
// principal/id.
func SessionIDs(t testing.TB, ctx context.Context, conn *grpc.ClientConn) []string {
	t.Helper()
	resp, err := pb.NewSessionServiceClient(conn).ListSessions(ctx, &pb.ListSessionsRequest{})
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	var out []string
	for _, s := range resp.GetSessions() {
		out = append(out, s.GetPrincipal()+"/"+s.GetId())
	}
	return out
}

// ExecIn is one unary call with args marshalled to JSON, under ctx (a
// session, a token); a gRPC error fails the test.
func ExecIn(t testing.TB, ctx context.Context, c pb.RegistryServiceClient, name string, args any) *pb.ToolResult {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: string(b)}})
	if err != nil {
		t.Fatalf("Execute(%s): %v", name, err)
	}
	return resp.GetResult()
}
