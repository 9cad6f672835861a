package server

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

type sourceService struct {
	pb.UnimplementedSourceServiceServer
	s *Server
}

func (r *sourceService) ListSources(ctx context.Context, _ *pb.ListSourcesRequest) (*pb.ListSourcesResponse, error) {
	infos := r.s.eng.Sources()
	resp := &pb.ListSourcesResponse{Sources: make([]*pb.Source, 0, len(infos))}
	for _, in := range infos {
		resp.Sources = append(resp.Sources, &pb.Source{
			Kind:      in.Layer.Kind.String(),
			Name:      in.Layer.Name,
			Status:    string(in.State),
			ToolCount: int32(in.ToolCount),
			Error:     in.Error,
			Shadowed:  in.Shadowed,
		})
	}
	return resp, nil
}

func (r *sourceService) ListSkills(ctx context.Context, _ *pb.ListSkillsRequest) (*pb.ListSkillsResponse, error) {
	resp := &pb.ListSkillsResponse{}
	sk := r.s.eng.Skills()
	if sk == nil {
		return resp, nil
	}
	skills, skipped := sk.Inventory()
	for _, k := range skills {
		resp.Skills = append(resp.Skills, &pb.Skill{Name: k.Name, Description: k.Description, Dir: k.Dir, Path: k.Path})
	}
	for _, k := range skipped {
		resp.Skipped = append(resp.Skipped, &pb.SkippedSkill{Path: k.Path, Reason: k.Reason, Detail: k.Detail})
	}
	return resp, nil
}

func (r *sourceService) Reload(ctx context.Context, _ *pb.ReloadRequest) (*pb.ReloadResponse, error) {
	rep, err := r.s.Reload()
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "reload rejected, the previous config keeps serving: %v", err)
	}
	resp := &pb.ReloadResponse{Revision: r.s.reg.Snapshot().Revision()}
	for _, id := range rep.Started {
		resp.Rebuilt = append(resp.Rebuilt, id.String())
	}
	for _, id := range rep.Removed {
		resp.Removed = append(resp.Removed, id.String())
	}
	return resp, nil
}

// skillsPrompt is the catalog text, or the pinned "none" text without a
// skill source.
func (s *Server) skillsPrompt() string {
	if sk := s.eng.Skills(); sk != nil {
		return sk.Prompt()
	}
	return "No skills are currently available."
}
