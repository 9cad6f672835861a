package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/panics"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The chain, outermost first (DESIGN §5): recovery → logging → gRPC metrics
// → auth → execute guard.
func (s *Server) unaryChain() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{
		recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(s.recovered)),
		s.logUnary,
		s.grpcMetrics.UnaryServerInterceptor(),
		s.authUnary,
		s.executeGuard,
	}
}

func (s *Server) streamChain() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{
		recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(s.recovered)),
		s.logStream,
		s.grpcMetrics.StreamServerInterceptor(),
		s.authStream,
	}
}

// recovered handles a panic anywhere outside Execute: the stack goes to the
// log, the wire gets a plain Internal.
func (s *Server) recovered(ctx context.Context, p any) error {
	s.log.ErrorContext(ctx, "panic while handling a request", "panic", panics.Message(p), "stack", string(debug.Stack()))
	return status.Error(codes.Internal, "internal error (the server logged the details)")
}

// logLevel picks how a finished call is logged: successes at debug so an
// agent doing thousands of calls a minute does not flood the log at info;
// caller mistakes at info; everything else at error.
func logLevel(c codes.Code) slog.Level {
	switch c {
	case codes.OK, codes.Canceled, codes.NotFound:
		return slog.LevelDebug
	case codes.InvalidArgument, codes.Unauthenticated, codes.PermissionDenied, codes.DeadlineExceeded,
		codes.Unavailable, codes.FailedPrecondition, codes.ResourceExhausted:
		return slog.LevelInfo
	}
	return slog.LevelError
}

// logUnary logs each finished call with slog. It asks the handler whether
// the level is on before building any attribute, so a call logged at a
// disabled level costs one clock read and one Enabled check — the generic
// middleware allocates its field lists on every call regardless.
func (s *Server) logUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	s.logCall(ctx, info.FullMethod, start, err)
	return resp, err
}

func (s *Server) logStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	err := handler(srv, ss)
	s.logCall(ss.Context(), info.FullMethod, start, err)
	return err
}

func (s *Server) logCall(ctx context.Context, method string, start time.Time, err error) {
	code := status.Code(err)
	lvl := logLevel(code)
	if !s.log.Enabled(ctx, lvl) {
		return
	}
	attrs := []slog.Attr{
		slog.String("grpc.method", method),
		slog.String("grpc.code", code.String()),
		slog.Float64("grpc.time_ms", float64(time.Since(start).Microseconds())/1000),
	}
	if p, ok := peer.FromContext(ctx); ok {
		attrs = append(attrs, slog.String("peer", p.Addr.String()))
	}
	if pr := principalFrom(ctx); pr != nil {
		attrs = append(attrs, slog.String("caller", pr.name))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", status.Convert(err).Message()))
	}
	s.log.LogAttrs(ctx, lvl, "finished call", attrs...)
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
	if err := p.authorize(info.FullMethod); err != nil {
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
	if err := p.authorize(info.FullMethod); err != nil {
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
			msg := panics.Message(p)
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
