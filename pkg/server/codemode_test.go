package server_test

import (
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// Each inner call's execute_tool span is a child of run_code's.
func TestRunCodeInnerCallsAreChildSpans(t *testing.T) {
	rcv := testutil.StartOTLPReceiver(t)
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [], "codeMode": {"enabled": true},
		"telemetry": {"endpoint": %q, "protocol": "grpc", "serviceName": "toolnexus-test"}}`, rcv.Endpoint)
	srv, _, stop := launch(t, cfg, func(o *server.Options) { o.Native = inproc.CodeModeTools() })
	f := &fixture{srv: srv}
	conn, err := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	f.reg = pb.NewRegistryServiceClient(conn)
	if r := f.exec(t, "run_code", fmt.Sprintf(`{"code": %q}`, `return tools.cm_len({text: tools.cm_upper({text: "a"})}).length`)); r.GetIsError() || r.GetOutput() != "1" {
		t.Fatalf("run_code: %v", r)
	}
	stop() // flushes the spans
	var outer testutil.Span
	for _, s := range rcv.Spans() {
		if s.Name == "execute_tool run_code" {
			outer = s
		}
	}
	if outer.SpanID == "" {
		t.Fatal("no execute_tool run_code span")
	}
	children := 0
	for _, s := range rcv.Spans() {
		if s.Name == "execute_tool cm_upper" || s.Name == "execute_tool cm_len" {
			if s.ParentSpanID != outer.SpanID || s.TraceID != outer.TraceID {
				t.Errorf("%s: parent %s in trace %s, want run_code's span %s in %s", s.Name, s.ParentSpanID, s.TraceID, outer.SpanID, outer.TraceID)
			}
			children++
		}
	}
	if children != 2 {
		t.Fatalf("%d inner spans, want 2", children)
	}
}
