package grpcapi

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
)

// connectionService is ConnectionService: each caller's own OAuth
// connections (pkg/sources/oauthclient). A caller acts on its own; an admin
// (or every caller, with auth off) lists everyone's and its connect also
// makes the connection an upstream's tools are listed with.
type connectionService struct {
	pb.UnimplementedConnectionServiceServer
	m *oauthclient.Manager
}

// RegisterConnections adds ConnectionService for m to gs.
func RegisterConnections(gs *grpc.Server, m *oauthclient.Manager) {
	pb.RegisterConnectionServiceServer(gs, &connectionService{m: m})
}

func (s *connectionService) Connect(req *pb.ConnectRequest, stream grpc.ServerStreamingServer[pb.ConnectResponse]) error {
	ctx := stream.Context()
	if req.GetName() == "" {
		return status.Error(codes.InvalidArgument, "name is required: the MCP server's name under mcpServers (one with an \"oauth\" section)")
	}
	who, admin := caller(ctx)
	f, err := s.m.Connect(ctx, who, req.GetName(), admin)
	if err != nil {
		return connectionError(req.GetName(), err)
	}
	if err := stream.Send(&pb.ConnectResponse{Event: &pb.ConnectResponse_AuthorizationUrl{AuthorizationUrl: f.URL}, ExpiresAt: timestamppb.New(f.ExpiresAt)}); err != nil {
		return err
	}
	wctx, cancel := context.WithDeadline(ctx, f.ExpiresAt)
	defer cancel()
	if err := s.m.Wait(wctx, f.ID); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return status.Errorf(codes.DeadlineExceeded, "the login was not completed before %s; run connect again", f.ExpiresAt.UTC().Format(time.RFC3339))
		}
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return status.Errorf(codes.FailedPrecondition, "the login failed: %v", err)
	}
	list, err := s.m.List(ctx, who, false)
	if err != nil {
		return connectionError(req.GetName(), err)
	}
	for _, c := range list {
		if c.Upstream == req.GetName() {
			return stream.Send(&pb.ConnectResponse{Event: &pb.ConnectResponse_Connected{Connected: connectionToProto(c)}})
		}
	}
	return status.Error(codes.Aborted, "the login completed but the connection is already gone (disconnected meanwhile?)")
}

func (s *connectionService) ListConnections(ctx context.Context, _ *pb.ListConnectionsRequest) (*pb.ListConnectionsResponse, error) {
	who, admin := caller(ctx)
	list, err := s.m.List(ctx, who, admin)
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	out := &pb.ListConnectionsResponse{Connections: make([]*pb.Connection, len(list))}
	for i, c := range list {
		out.Connections[i] = connectionToProto(c)
	}
	return out, nil
}

func (s *connectionService) Disconnect(ctx context.Context, req *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required: the upstream whose connection to remove")
	}
	who, admin := caller(ctx)
	if p := req.GetPrincipal(); p != "" && p != who {
		if !admin {
			return nil, status.Error(codes.PermissionDenied, "only an admin removes another principal's connection")
		}
		who = p
	}
	revoked, err := s.m.Disconnect(ctx, who, req.GetName())
	if err != nil {
		return nil, connectionError(req.GetName(), err)
	}
	return &pb.DisconnectResponse{Revoked: revoked}, nil
}

func connectionError(name string, err error) error {
	switch {
	case errors.Is(err, oauthclient.ErrUnknownUpstream):
		return status.Errorf(codes.NotFound, "%q is not an MCP server with an \"oauth\" section in this server's config", name)
	case errors.Is(err, oauthclient.ErrNoConnection):
		return status.Errorf(codes.NotFound, "you have no connection to %q", name)
	}
	return status.Error(codes.FailedPrecondition, err.Error())
}

func connectionToProto(c oauthclient.Connection) *pb.Connection {
	out := &pb.Connection{Principal: c.Principal, Upstream: c.Upstream, Scope: c.Scope, CreatedAt: timestamppb.New(c.CreatedAt),
		Refreshable: c.Refreshable, ListsTools: c.ListsTools}
	if !c.ExpiresAt.IsZero() {
		out.ExpiresAt = timestamppb.New(c.ExpiresAt)
	}
	if !c.RefreshedAt.IsZero() {
		out.RefreshedAt = timestamppb.New(c.RefreshedAt)
	}
	return out
}
