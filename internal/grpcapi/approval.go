package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// approvalService is ApprovalService: admins and policy.approvers decide
// the calls a policy holds back; the core checks who may.
type approvalService struct {
	pb.UnimplementedApprovalServiceServer
	a *API
}

func (s *approvalService) ListApprovals(ctx context.Context, _ *pb.ListApprovalsRequest) (*pb.ListApprovalsResponse, error) {
	list, err := s.a.core.Approvals(ctx, auth.From(ctx))
	if err != nil {
		return nil, approvalError(err)
	}
	out := &pb.ListApprovalsResponse{Approvals: make([]*pb.Approval, len(list))}
	for i, e := range list {
		out.Approvals[i] = approvalToProto(e)
	}
	return out, nil
}

func (s *approvalService) Approve(ctx context.Context, req *pb.ApproveRequest) (*pb.ApproveResponse, error) {
	e, err := s.decide(ctx, req.GetId(), true, req.GetReason())
	if err != nil {
		return nil, err
	}
	return &pb.ApproveResponse{Approval: e}, nil
}

func (s *approvalService) Deny(ctx context.Context, req *pb.DenyRequest) (*pb.DenyResponse, error) {
	e, err := s.decide(ctx, req.GetId(), false, req.GetReason())
	if err != nil {
		return nil, err
	}
	return &pb.DenyResponse{Approval: e}, nil
}

func (s *approvalService) decide(ctx context.Context, id string, approve bool, reason string) (*pb.Approval, error) {
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "id is required: the PendingRequest.id shown by ListApprovals")
	}
	e, err := s.a.core.DecideApproval(ctx, auth.From(ctx), id, approve, reason)
	if err != nil {
		return nil, approvalError(err)
	}
	return approvalToProto(e), nil
}

func approvalError(err error) error {
	switch {
	case errors.Is(err, core.ErrNotApprover), errors.Is(err, approval.ErrSelf):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, approval.ErrUnknown):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, approval.ErrDecided), errors.Is(err, approval.ErrExpired):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func approvalToProto(e approval.Entry) *pb.Approval {
	out := &pb.Approval{Id: e.ID, Status: string(e.Status), Tool: e.Tool, Principal: e.Principal, ArgumentsDigest: e.Digest,
		Policy: e.Policy, Summary: e.Summary, CreatedAt: timestamppb.New(e.CreatedAt), ExpiresAt: timestamppb.New(e.ExpiresAt),
		DecidedBy: e.DecidedBy, Reason: e.Reason, Session: e.Session}
	if !e.DecidedAt.IsZero() {
		out.DecidedAt = timestamppb.New(e.DecidedAt)
	}
	return out
}

// rateLimited is the status of a call over a rate limit: RESOURCE_EXHAUSTED
// with a google.rpc.RetryInfo detail, which gRPC retry policies and
// clients' backoff read.
func rateLimited(r *tool.Throttle) error {
	delay := r.RetryAfter.Round(time.Millisecond)
	if delay <= 0 {
		delay = time.Millisecond
	}
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("rate limited by %s: retry after %s", r.Limit, delay))
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)}); err == nil {
		st = d
	}
	return st.Err()
}
