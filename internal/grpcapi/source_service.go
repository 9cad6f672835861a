package grpcapi

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

type sourceService struct {
	pb.UnimplementedSourceServiceServer
	a *API
}

func (r *sourceService) ListSources(ctx context.Context, _ *pb.ListSourcesRequest) (*pb.ListSourcesResponse, error) {
	infos := r.a.core.Sources()
	resp := &pb.ListSourcesResponse{Sources: make([]*pb.Source, 0, len(infos))}
	for _, in := range infos {
		resp.Sources = append(resp.Sources, &pb.Source{
			Kind:      in.Kind,
			Name:      in.Name,
			Status:    string(in.State),
			ToolCount: int32(in.ToolCount),
			Error:     in.Error,
			Shadowed:  in.Shadowed,
			Sandbox:   in.Sandbox,
		})
	}
	resp.Sandbox = sandboxStatus(r.a.core.Sandbox())
	return resp, nil
}

func (r *sourceService) ListSkills(ctx context.Context, _ *pb.ListSkillsRequest) (*pb.ListSkillsResponse, error) {
	resp := &pb.ListSkillsResponse{}
	skills, skipped := r.a.core.Skills()
	for _, k := range skills {
		resp.Skills = append(resp.Skills, &pb.Skill{Name: k.Name, Description: k.Description, Dir: k.Dir, Path: k.Path})
	}
	for _, k := range skipped {
		resp.Skipped = append(resp.Skipped, &pb.SkippedSkill{Path: k.Path, Reason: k.Reason, Detail: k.Detail})
	}
	return resp, nil
}

func (r *sourceService) Reload(ctx context.Context, _ *pb.ReloadRequest) (*pb.ReloadResponse, error) {
	rep, err := r.a.opts.Reload(ctx)
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "reload rejected, the previous config keeps serving: %v", err)
	}
	resp := &pb.ReloadResponse{Revision: rep.Revision, Rebuilt: rep.Started, Removed: rep.Removed}
	for _, r := range rep.Replicas {
		resp.Replicas = append(resp.Replicas, &pb.ReplicaReload{Replica: r.Replica, Applied: r.Applied, Error: r.Error, Revision: r.Revision})
	}
	if rep.ReplicasErr != nil {
		resp.ReplicasError = rep.ReplicasErr.Error()
	}
	return resp, nil
}

func sandboxStatus(st sandbox.Status) *pb.Sandbox {
	out := &pb.Sandbox{Mode: string(st.Mode), Summary: st.String()}
	for _, l := range st.Layers {
		out.Layers = append(out.Layers, &pb.SandboxLayer{Name: l.Name, Active: l.Active, Detail: l.Detail})
	}
	return out
}
