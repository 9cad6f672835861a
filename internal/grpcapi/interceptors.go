package grpcapi

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/panics"
)

// The chain, outermost first: recovery → logging → gRPC metrics → auth →
// session check → execute guard. Recovery is outermost so that nothing below can crash the
// server; auth runs after metrics so refused calls are still counted.
//
// For unary calls (every Execute) the six steps are one interceptor,
// a.unary, in one stack frame. Each RPC runs on a goroutine that grpc-go
// either starts for it or takes from its workers (pkg/server); a fresh
// goroutine starts with a small stack, and every call that outgrows it
// pays for copying — and adjusting, frame by frame — the whole stack so
// far. Six chained interceptors put a dozen frames (each step, grpc-go's
// closure between steps, the provider's reporter) under the tool, which
// made that copy 30% of the server's CPU at 64 callers (BENCHMARKS.md,
// "The cheapest call, again"). Streams are few and long: they keep one
// interceptor per step.
func (a *API) unaryChain() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{a.unary}
}

func (a *API) streamChain() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{
		recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(a.recovered)),
		a.logStream,
		a.metricsStream,
		a.authStream,
		a.sessionStream,
	}
}

// unary is the whole unary chain; see unaryChain for the order. A panic in
// the handler of an Execute becomes its result (the execute guard: the
// core records it, the caller gets is_error with OUTCOME_PANIC, the call
// is counted and logged as answered). Any other panic — in another
// method's handler, or in the steps themselves — unwinds past the metrics
// and the log line, as it would through separate interceptors, to the
// recovery: the wire gets Internal.
func (a *API) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	mm := a.grpcMetrics.method(info.FullMethod, false, false)
	callCtx := ctx   // the caller's context once authenticated
	guarded := false // an Execute's handler is running
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if !guarded {
			resp, err = nil, a.recovered(ctx, p)
			return
		}
		resp, err = a.executePanicked(callCtx, req, p), nil
		a.finishUnary(callCtx, mm, info.FullMethod, start, nil)
	}()
	mm.started.Inc()
	mm.received.Inc()
	callCtx, err = a.authenticate(ctx, info.FullMethod)
	if err == nil {
		err = a.checkSession(callCtx, info.FullMethod)
	}
	if err != nil {
		a.finishUnary(ctx, mm, info.FullMethod, start, err)
		return nil, err
	}
	guarded = info.FullMethod == pb.RegistryService_Execute_FullMethodName
	resp, err = handler(callCtx, req)
	guarded = false
	a.finishUnary(callCtx, mm, info.FullMethod, start, err)
	return resp, err
}

// finishUnary records a finished unary call: its gRPC series and its log
// line.
func (a *API) finishUnary(ctx context.Context, mm *methodMetrics, method string, start time.Time, err error) {
	c := code(err)
	if err == nil {
		mm.sent.Inc()
	}
	mm.handledWith(c).Inc()
	mm.seconds.Observe(time.Since(start).Seconds())
	a.logCall(ctx, method, start, err)
}

// recovered handles a panic anywhere outside Execute: the stack goes to the
// log, the wire gets a plain Internal.
func (a *API) recovered(ctx context.Context, p any) error {
	a.log.ErrorContext(ctx, "panic while handling a request", "panic", panics.Message(p), "stack", panics.Stack())
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

func (a *API) logStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	err := handler(srv, ss)
	a.logCall(ss.Context(), info.FullMethod, start, err)
	return err
}

// logCall logs each finished call with slog. It asks the handler whether
// the level is on before building any attribute, so a call logged at a
// disabled level costs one clock read and one Enabled check.
func (a *API) logCall(ctx context.Context, method string, start time.Time, err error) {
	code := status.Code(err)
	lvl := logLevel(code)
	if !a.log.Enabled(ctx, lvl) {
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
	if pr := auth.From(ctx); pr != nil {
		attrs = append(attrs, slog.String("caller", pr.Name))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", status.Convert(err).Message()))
	}
	a.log.LogAttrs(ctx, lvl, "finished call", attrs...)
}

type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (p principalStream) Context() context.Context { return p.ctx }

func (a *API) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := a.authenticate(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	if ctx == ss.Context() {
		return handler(srv, ss)
	}
	return handler(srv, principalStream{ServerStream: ss, ctx: ctx})
}

// authenticate finds the caller from the "authorization: Bearer X"
// metadata and checks its right to the method. With auth off, or for the
// open methods, ctx is returned as it is.
func (a *API) authenticate(ctx context.Context, fullMethod string) (context.Context, error) {
	au := a.core.Authenticator()
	if au == nil || openMethod(fullMethod) {
		return ctx, nil
	}
	var header string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if vals := md.Get("authorization"); len(vals) > 0 {
			header = vals[0]
		}
	}
	p, err := au.CheckHeader(ctx, header)
	switch {
	case errors.Is(err, auth.ErrMissing):
		return nil, status.Error(codes.Unauthenticated, "missing bearer token: send the metadata \"authorization: Bearer <token>\" (client: --token or TOOLNEXUS_TOKEN)")
	case errors.Is(err, auth.ErrMalformed):
		return nil, status.Error(codes.Unauthenticated, "malformed authorization metadata: expected \"Bearer <token>\"")
	case err != nil:
		return nil, status.Error(codes.Unauthenticated, err.Error()) // a fixed reason, never the token
	}
	if adminMethod(fullMethod) && !p.Admin {
		return nil, status.Errorf(codes.PermissionDenied, "token %q may not call %s: it needs \"admin\": true in auth.tokens (SourceService is for operators: agent tokens neither reload the server nor read its sources and paths)", p.Name, fullMethod)
	}
	return auth.With(ctx, p), nil
}

// adminMethod reports whether an RPC needs a token with "admin": true.
//
// Every SourceService RPC does. Reload changes what the whole server runs
// (sources, child processes, limits, tokens); ListSources and ListSkills
// show every source, its errors, shadowed tool names and the server's
// skill paths, whatever a token's allowlist. An agent token, meant to run
// the tools it is allowed, needs none of that; an operator gives one token
// "admin": true (or sends SIGHUP).
func adminMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/"+pb.SourceService_ServiceDesc.ServiceName+"/")
}

// openMethod needs no token: probes and tooling must work without secrets.
func openMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}

// executePanicked is the result of an Execute whose handler panicked
// (decoding the arguments, encoding the result, the tool outside the
// executor's own guard): the core records the panic and the caller gets
// is_error with OUTCOME_PANIC instead of a broken connection.
func (a *API) executePanicked(ctx context.Context, req any, p any) *pb.ExecuteResponse {
	name := ""
	if r, ok := req.(*pb.ExecuteRequest); ok {
		name = r.GetName()
	}
	res := a.core.Recovered(ctx, name, core.ProtocolGRPC, p)
	return &pb.ExecuteResponse{Result: resultToProto(res)}
}
