package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The chain, outermost first (DESIGN §5): recovery → logging → gRPC metrics
// → auth → execute guard.
func (s *Server) unaryChain() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{
		recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(s.recovered)),
		logging.UnaryServerInterceptor(slogAdapter(s.log), logOptions()...),
		s.grpcMetrics.UnaryServerInterceptor(),
		s.authUnary,
		s.executeGuard,
	}
}

func (s *Server) streamChain() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{
		recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(s.recovered)),
		logging.StreamServerInterceptor(slogAdapter(s.log), logOptions()...),
		s.grpcMetrics.StreamServerInterceptor(),
		s.authStream,
	}
}

// recovered handles a panic anywhere outside Execute: the stack goes to the
// log, the wire gets a plain Internal.
func (s *Server) recovered(ctx context.Context, p any) error {
	s.log.ErrorContext(ctx, "panic while handling a request", "panic", tool.PanicMessage(p), "stack", string(debug.Stack()))
	return status.Error(codes.Internal, "internal error (the server logged the details)")
}

// logOptions log finished calls; successful ones at debug level so an agent
// doing thousands of calls a minute does not flood the log at info.
func logOptions() []logging.Option {
	return []logging.Option{
		logging.WithLogOnEvents(logging.FinishCall),
		logging.WithLevels(func(c codes.Code) logging.Level {
			switch c {
			case codes.OK, codes.Canceled, codes.NotFound:
				return logging.LevelDebug
			case codes.InvalidArgument, codes.Unauthenticated, codes.DeadlineExceeded, codes.Unavailable:
				return logging.LevelInfo
			}
			return logging.LevelError
		}),
	}
}

func slogAdapter(l *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		l.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}

func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	au := s.auth.Load()
	if au == nil || openMethod(info.FullMethod) {
		return handler(ctx, req)
	}
	p, err := au.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return handler(withPrincipal(ctx, p), req)
}

type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (p principalStream) Context() context.Context { return p.ctx }

func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	au := s.auth.Load()
	if au == nil || openMethod(info.FullMethod) {
		return handler(srv, ss)
	}
	p, err := au.authenticate(ss.Context())
	if err != nil {
		return err
	}
	return handler(srv, principalStream{ServerStream: ss, ctx: withPrincipal(ss.Context(), p)})
}

// executeGuard makes sure Execute answers with a result even when something
// between the wire and the tool panics (conversion, an adapter): the caller
// gets is_error with OUTCOME_PANIC, the panic is counted under the tool's
// source, and the server keeps serving.
func (s *Server) executeGuard(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	if info.FullMethod != pb.RegistryService_Execute_FullMethodName {
		return handler(ctx, req)
	}
	defer func() {
		if p := recover(); p != nil {
			name := ""
			if r, ok := req.(*pb.ExecuteRequest); ok {
				name = r.GetName()
			}
			msg := tool.PanicMessage(p)
			s.log.ErrorContext(ctx, "panic while executing", "tool", name, "panic", msg, "stack", string(debug.Stack()))
			source, toolLabel := metrics.UnknownLabel, metrics.UnknownLabel
			if e, ok := s.exec.Snapshot().Lookup(name); ok {
				source, toolLabel = e.Tool.Source, e.Tool.Name
			}
			s.metrics.Calls.WithLabelValues(source, toolLabel, tool.OutcomePanic.String(), "grpc").Inc()
			resp = &pb.ExecuteResponse{Result: &pb.ToolResult{Output: fmt.Sprint(msg), IsError: true, Outcome: pb.Outcome_OUTCOME_PANIC}}
			err = nil
		}
	}()
	return handler(ctx, req)
}
