package grpcapi

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/session"
)

// SessionMetadata is the gRPC metadata key that names the caller's session
// on any RegistryService call. It is a header, so a load balancer can hash
// on it and keep a session on one replica.
const SessionMetadata = "toolnexus-session"

// sessionID is the session the request names, "" for none.
func sessionID(ctx context.Context) string { return metadataValue(ctx, SessionMetadata) }

// metadataValue is the request's first value for key, "" for none.
func metadataValue(ctx context.Context, key string) string {
	if v := metadata.ValueFromIncomingContext(ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// checkSession refuses a RegistryService call whose session id breaks the
// rule, and an Execute without one when sessions.required is on, before the
// handler runs: a malformed request is INVALID_ARGUMENT, not a result.
func (a *API) checkSession(ctx context.Context, fullMethod string) error {
	if !strings.HasPrefix(fullMethod, "/"+pb.RegistryService_ServiceDesc.ServiceName+"/") {
		return nil
	}
	id := sessionID(ctx)
	if id == "" && fullMethod != pb.RegistryService_Execute_FullMethodName && fullMethod != pb.RegistryService_ExecuteStream_FullMethodName {
		return nil // only a call runs in a workspace
	}
	if err := a.core.CheckSession(id); err != nil {
		msg := err.Error()
		if errors.Is(err, core.ErrSessionRequired) {
			msg += `: send the metadata "` + SessionMetadata + `: <id>" (client: --session or TOOLNEXUS_SESSION)`
		}
		return status.Error(codes.InvalidArgument, msg)
	}
	return nil
}

func (a *API) sessionStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := a.checkSession(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

// sessionService is SessionService: a caller sees and deletes its own
// sessions; an admin token sees every principal's and may delete any.
// Without auth every caller is trusted as an admin is.
type sessionService struct {
	pb.UnimplementedSessionServiceServer
	a *API
}

// caller is the principal's token name ("" without auth) and whether it
// may act on other principals' sessions.
func caller(ctx context.Context) (string, bool) {
	p := auth.From(ctx)
	if p == nil {
		return "", true
	}
	return p.Name, p.Admin
}

func (s *sessionService) ListSessions(ctx context.Context, _ *pb.ListSessionsRequest) (*pb.ListSessionsResponse, error) {
	name, admin := caller(ctx)
	infos := s.a.core.Sessions(name, admin)
	resp := &pb.ListSessionsResponse{Sessions: make([]*pb.Session, len(infos))}
	for i, in := range infos {
		resp.Sessions[i] = &pb.Session{Id: in.ID, Principal: in.Principal, Bytes: in.Bytes,
			CreatedAt: timestamppb.New(in.CreatedAt), LastUsedAt: timestamppb.New(in.LastUsedAt)}
	}
	return resp, nil
}

func (s *sessionService) DeleteSession(ctx context.Context, req *pb.DeleteSessionRequest) (*pb.DeleteSessionResponse, error) {
	name, admin := caller(ctx)
	owner := name
	if p := req.GetPrincipal(); p != "" && p != name {
		if !admin {
			return nil, status.Errorf(codes.PermissionDenied, "token %q may only delete its own sessions: leave principal empty, or use a token with \"admin\": true", name)
		}
		owner = p
		if auth.From(ctx) == nil && p == session.Anonymous {
			owner = "" // without auth, sessions belong to no token
		}
	}
	err := s.a.core.DeleteSession(owner, req.GetId())
	switch {
	case err == nil:
		return &pb.DeleteSessionResponse{}, nil
	case errors.Is(err, session.ErrInvalidID):
		return nil, status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, core.ErrSessionNotFound):
		return nil, status.Error(codes.NotFound, err.Error())
	case errors.Is(err, core.ErrSessionBusy):
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return nil, status.Error(codes.Internal, err.Error())
}
