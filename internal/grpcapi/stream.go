package grpcapi

import (
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// ExecuteStream runs one call like Execute — the same request decoding,
// auth (the stream interceptors), allowlist, limits, metrics and panic
// guard, all in the core — and sends what the tool reports while it runs
// (progress, log, output) followed by exactly one result event, last. The
// stream's context is the tool's: a client that cancels cancels the tool.
func (r *registryService) ExecuteStream(req *pb.ExecuteRequest, stream grpc.ServerStreamingServer[pb.ExecuteEvent]) (err error) {
	ctx := stream.Context()
	call, err := callFromRequest(ctx, req)
	if err == nil {
		err = r.a.checkView(ctx, call.View)
	}
	if err != nil {
		return err
	}
	call.Stream = true
	ev := &eventSender{stream: stream}
	resultSent := false
	defer func() {
		// A panic while decoding or encoding is still a result, as for
		// Execute; the tool's own panics never get here.
		if p := recover(); p != nil && !resultSent {
			ev.stop()
			res := r.a.core.Recovered(ctx, call.Name, core.ProtocolGRPC, p)
			err = stream.Send(&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Result{Result: resultToProto(res)}})
		}
	}()
	res, _ := r.a.core.Execute(tool.WithEvents(ctx, ev.send), call)
	// Whatever the tool's stray goroutines report from now on is dropped:
	// the result is the last event.
	ev.stop()
	if res.Throttled != nil {
		resultSent = true // the status is the answer
		return rateLimited(res.Throttled)
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	result := resultToProto(res)
	if result.GetPending() != nil {
		// The pending event names what the call waits for; the result
		// that ends the stream carries the same request.
		if err := stream.Send(&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Pending{Pending: result.GetPending()}}); err != nil {
			return err
		}
	}
	resultSent = true
	return stream.Send(&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Result{Result: result}})
}

// eventSender turns a call's events into stream messages. A gRPC stream
// takes one Send at a time, and a tool may report from several goroutines
// (an MCP session's notification handler, bash's pipe reader), so sends
// are serialised. Send blocks while the client's flow-control window is
// full, which slows a chatty tool down to what the client reads rather
// than buffering without bound.
type eventSender struct {
	stream grpc.ServerStreamingServer[pb.ExecuteEvent]
	mu     sync.Mutex
	done   bool // stopped, or a send failed (the client is gone)
}

func (s *eventSender) send(e tool.Event) {
	msg := eventToProto(e)
	if msg == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	if s.stream.Send(msg) != nil {
		s.done = true
	}
}

func (s *eventSender) stop() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

var streamToProto = [...]pb.OutputStream{
	tool.Stdout: pb.OutputStream_OUTPUT_STREAM_STDOUT,
	tool.Stderr: pb.OutputStream_OUTPUT_STREAM_STDERR,
}

func eventToProto(e tool.Event) *pb.ExecuteEvent {
	switch e.Kind {
	case tool.EventProgress:
		return &pb.ExecuteEvent{Event: &pb.ExecuteEvent_Progress{Progress: &pb.ProgressEvent{Progress: e.Progress, Total: e.Total, Message: e.Message}}}
	case tool.EventLog:
		return &pb.ExecuteEvent{Event: &pb.ExecuteEvent_Log{Log: &pb.LogEvent{Level: e.Level, Logger: e.Logger, Data: toValue(e.Data)}}}
	case tool.EventOutput:
		out := &pb.OutputEvent{Data: e.Bytes}
		if int(e.Stream) < len(streamToProto) {
			out.Stream = streamToProto[e.Stream]
		}
		return &pb.ExecuteEvent{Event: &pb.ExecuteEvent_Output{Output: out}}
	}
	return nil
}
