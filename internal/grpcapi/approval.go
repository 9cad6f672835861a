package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// approvalService is ApprovalService: admins and policy.approvers decide
// the calls a policy holds back; the core checks who may.
type approvalService struct {
	pb.UnimplementedApprovalServiceServer
	a *API
}

// ListApprovals lists the calls and the tool definitions waiting for, or
// decided by, an approver, newest first. A caller who may decide neither
// is refused; one who may decide one kind sees that kind.
func (s *approvalService) ListApprovals(ctx context.Context, _ *pb.ListApprovalsRequest) (*pb.ListApprovalsResponse, error) {
	p := auth.From(ctx)
	calls, cerr := s.a.core.Approvals(ctx, p)
	defs, derr := s.a.core.HeldDefinitions(ctx, p)
	if cerr != nil && derr != nil {
		return nil, approvalError(cerr)
	}
	if cerr != nil && !errors.Is(cerr, core.ErrNotApprover) {
		return nil, approvalError(cerr)
	}
	if derr != nil && !errors.Is(derr, core.ErrNotApprover) {
		return nil, approvalError(derr)
	}
	out := &pb.ListApprovalsResponse{Approvals: make([]*pb.Approval, 0, len(calls)+len(defs))}
	for _, e := range calls {
		out.Approvals = append(out.Approvals, approvalToProto(e))
	}
	for _, h := range defs {
		out.Approvals = append(out.Approvals, definitionToProto(h))
	}
	slices.SortStableFunc(out.Approvals, func(a, b *pb.Approval) int {
		return b.GetCreatedAt().AsTime().Compare(a.GetCreatedAt().AsTime())
	})
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
	if strings.HasPrefix(id, catalog.IDPrefix) {
		h, err := s.a.core.DecideDefinition(ctx, auth.From(ctx), id, approve, reason)
		if err != nil {
			return nil, approvalError(err)
		}
		return definitionToProto(h), nil
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
	case errors.Is(err, approval.ErrUnknown), errors.Is(err, catalog.ErrUnknown):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, approval.ErrDecided), errors.Is(err, approval.ErrExpired), errors.Is(err, catalog.ErrDecided):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func approvalToProto(e approval.Entry) *pb.Approval {
	out := &pb.Approval{Kind: KindCall, Id: e.ID, Status: string(e.Status), Tool: e.Tool, Principal: e.Principal, ArgumentsDigest: e.Digest,
		Policy: e.Policy, Summary: e.Summary, CreatedAt: timestamppb.New(e.CreatedAt), ExpiresAt: timestamppb.New(e.ExpiresAt),
		DecidedBy: e.DecidedBy, Reason: e.Reason, Session: e.Session}
	if !e.DecidedAt.IsZero() {
		out.DecidedAt = timestamppb.New(e.DecidedAt)
	}
	return out
}

// The kinds of Approval.kind.
const (
	KindCall       = "call"
	KindDefinition = "definition"
)

// definitionToProto is a held tool definition as an Approval of kind
// "definition": tool is the name the source publishes, summary says what
// changed, definition carries the old and the new text.
func definitionToProto(h catalog.Held) *pb.Approval {
	out := &pb.Approval{Kind: KindDefinition, Id: h.ID, Status: string(h.Status), Tool: h.Tool,
		Summary: definitionSummary(h), CreatedAt: timestamppb.New(h.SeenAt), DecidedBy: h.DecidedBy, Reason: h.Reason,
		Definition: &pb.DefinitionChange{Source: h.Source, Tool: h.Tool, Change: string(h.Change),
			NewDefinition: string(h.New.Definition), NewDigest: h.New.Digest, ShadowedSource: h.Shadowed}}
	if h.Old != nil {
		out.Definition.OldDefinition, out.Definition.OldDigest = string(h.Old.Definition), h.Old.Digest
	}
	if !h.DecidedAt.IsZero() {
		out.DecidedAt = timestamppb.New(h.DecidedAt)
	}
	return out
}

func definitionSummary(h catalog.Held) string {
	switch h.Change {
	case catalog.Changed:
		return fmt.Sprintf("%s changed its definition of %s", h.Source, h.Tool)
	case catalog.Added:
		return fmt.Sprintf("%s added the tool %s", h.Source, h.Tool)
	case catalog.Shadows:
		return fmt.Sprintf("%s, seen for the first time, offers %s, which %s has pinned", h.Source, h.Tool, h.Shadowed)
	}
	return fmt.Sprintf("%s, seen for the first time, offers %s", h.Source, h.Tool)
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
