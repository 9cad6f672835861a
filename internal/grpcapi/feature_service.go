package grpcapi

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// featureService is FeatureService: the MCP servers' resources, templates,
// prompts and completions, through the core exactly as /mcp serves them.
type featureService struct {
	pb.UnimplementedFeatureServiceServer
	a *API
}

// call is who asks: gRPC serves every resource and prompt its
// caller's token allows (it has no door of its own).
func (f *featureService) call(ctx context.Context) core.FeatureCall {
	return f.a.core.FeatureCall(auth.From(ctx), core.ProtocolGRPC, sessionID(ctx))
}

// pageOf reads a List request's paging.
func pageOf(size int32, token string) (int, string, error) {
	n := int(size)
	switch {
	case n < 0:
		return 0, "", status.Error(codes.InvalidArgument, "page_size must be >= 0 (0 means the default of 1000)")
	case n == 0:
		n = defaultPageSize
	case n > maxPageSize:
		n = maxPageSize
	}
	after, err := decodePageToken(token)
	return n, after, err
}

// page collects up to size visible entries of a sorted list from start,
// and the token of the next page.
func page[E any, P any](list []E, start, size int, visible func(E) bool, key func(E) string, conv func(E) P) ([]P, string) {
	out := make([]P, 0, min(size, max(len(list)-start, 0)))
	last := ""
	for i := start; i < len(list); i++ {
		if !visible(list[i]) {
			continue
		}
		if len(out) == size {
			return out, encodePageToken(last)
		}
		out = append(out, conv(list[i]))
		last = key(list[i])
	}
	return out, ""
}

func (f *featureService) ListResources(ctx context.Context, req *pb.ListResourcesRequest) (*pb.ListResourcesResponse, error) {
	size, after, err := pageOf(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	fc, snap := f.call(ctx), f.a.core.Features()
	list, next := page(snap.Resources(), snap.SeekResource(after), size,
		func(e *registry.ResourceEntry) bool { return fc.SeesResource(e.Resource.URI, e.Layer) },
		func(e *registry.ResourceEntry) string { return e.Resource.URI }, resourceToProto)
	return &pb.ListResourcesResponse{Resources: list, NextPageToken: next, Revision: snap.Revision()}, nil
}

func (f *featureService) ListResourceTemplates(ctx context.Context, req *pb.ListResourceTemplatesRequest) (*pb.ListResourceTemplatesResponse, error) {
	size, after, err := pageOf(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	fc, snap := f.call(ctx), f.a.core.Features()
	list, next := page(snap.Templates(), snap.SeekTemplate(after), size,
		func(e *registry.TemplateEntry) bool { return fc.SeesResource(e.Template.URITemplate, e.Layer) },
		func(e *registry.TemplateEntry) string { return e.Template.URITemplate },
		func(e *registry.TemplateEntry) *pb.ResourceTemplate {
			t := e.Template
			return &pb.ResourceTemplate{UriTemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description,
				MimeType: t.MIMEType, Server: e.Layer.Name}
		})
	return &pb.ListResourceTemplatesResponse{ResourceTemplates: list, NextPageToken: next, Revision: snap.Revision()}, nil
}

func (f *featureService) ListPrompts(ctx context.Context, req *pb.ListPromptsRequest) (*pb.ListPromptsResponse, error) {
	size, after, err := pageOf(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	fc, snap := f.call(ctx), f.a.core.Features()
	list, next := page(snap.Prompts(), snap.SeekPrompt(after), size,
		func(e *registry.PromptEntry) bool { return fc.SeesPrompt(e.Prompt.Name, e.Layer) },
		func(e *registry.PromptEntry) string { return e.Prompt.Name }, promptToProto)
	return &pb.ListPromptsResponse{Prompts: list, NextPageToken: next, Revision: snap.Revision()}, nil
}

func resourceToProto(e *registry.ResourceEntry) *pb.Resource {
	r := e.Resource
	out := &pb.Resource{Uri: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MIMEType, Size: r.Size,
		Server: e.Layer.Name}
	if a := r.Annotations; a != nil {
		out.Annotations = &pb.ResourceAnnotations{Audience: a.Audience, Priority: a.Priority, LastModified: a.LastModified}
	}
	return out
}

func promptToProto(e *registry.PromptEntry) *pb.Prompt {
	p := e.Prompt
	out := &pb.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Server: e.Layer.Name}
	for _, a := range p.Arguments {
		out.Arguments = append(out.Arguments, &pb.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
	}
	return out
}

func (f *featureService) ReadResource(ctx context.Context, req *pb.ReadResourceRequest) (*pb.ReadResourceResponse, error) {
	if req.GetUri() == "" {
		return nil, status.Error(codes.InvalidArgument, "uri is required: a URI from ListResources, or one a template from ListResourceTemplates matches")
	}
	contents, err := f.a.core.ReadResource(ctx, f.call(ctx), req.GetUri())
	if err != nil {
		return nil, featureStatus(err)
	}
	out := &pb.ReadResourceResponse{Contents: make([]*pb.ResourceContent, len(contents))}
	for i, c := range contents {
		// A part kept as the MCP server sent it is decoded here: protobuf
		// carries the bytes themselves.
		if c, err = c.Decoded(); err != nil {
			return nil, featureStatus(&feature.Error{Kind: feature.Unavailable, Msg: err.Error()})
		}
		r := &pb.ResourceContent{Uri: c.URI, MimeType: c.MIMEType}
		if c.Blob {
			r.Contents = &pb.ResourceContent_Blob{Blob: c.Data}
		} else {
			r.Contents = &pb.ResourceContent_Text{Text: c.Text}
		}
		out.Contents[i] = r
	}
	return out, nil
}

func (f *featureService) GetPrompt(ctx context.Context, req *pb.GetPromptRequest) (*pb.GetPromptResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required: a prompt name from ListPrompts")
	}
	res, err := f.a.core.GetPrompt(ctx, f.call(ctx), req.GetName(), req.GetArguments())
	if err != nil {
		return nil, featureStatus(err)
	}
	out := &pb.GetPromptResponse{Description: res.Description, Messages: make([]*pb.PromptMessage, 0, len(res.Messages))}
	for _, m := range res.Messages {
		if parts := contentToProto([]tool.Content{m.Content}); len(parts) == 1 {
			out.Messages = append(out.Messages, &pb.PromptMessage{Role: m.Role, Content: parts[0]})
		}
	}
	return out, nil
}

func (f *featureService) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	ref := core.CompleteRef{Prompt: req.GetPrompt(), URITemplate: req.GetUriTemplate()}
	if ref.Prompt == "" && ref.URITemplate == "" || req.GetArgument() == "" {
		return nil, status.Error(codes.InvalidArgument, "Complete needs a prompt (or a uri_template) and the argument's name")
	}
	res, err := f.a.core.Complete(ctx, f.call(ctx), ref,
		feature.CompleteRequest{Argument: req.GetArgument(), Value: req.GetValue(), Context: req.GetContext()})
	if err != nil {
		return nil, featureStatus(err)
	}
	return &pb.CompleteResponse{Values: res.Values, Total: int32(res.Total), HasMore: res.HasMore}, nil
}

// WatchResource subscribes to one resource until the caller cancels or the
// server shuts down. Each open stream counts towards
// server.limits.watchStreams, as WatchTools streams do.
func (f *featureService) WatchResource(req *pb.WatchResourceRequest, stream pb.FeatureService_WatchResourceServer) error {
	ctx := stream.Context()
	release, err := f.a.enterWatch(ctx)
	if err != nil {
		return err
	}
	defer release()
	changed := make(chan struct{}, 1) // one pending change: more collapse into it
	cancel, err := f.a.core.SubscribeResource(ctx, f.call(ctx), req.GetUri(), func(string) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return featureStatus(err)
	}
	defer cancel()
	if err := stream.Send(&pb.WatchResourceResponse{Uri: req.GetUri(), Subscribed: true}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.a.opts.Shutdown:
			return status.Error(codes.Unavailable, "server is shutting down; watch again on another replica")
		case <-changed:
			if err := stream.Send(&pb.WatchResourceResponse{Uri: req.GetUri()}); err != nil {
				return err
			}
		}
	}
}

// featureStatus is a feature error as a gRPC status: a hidden resource or
// prompt is NOT_FOUND exactly as one that does not exist.
func featureStatus(err error) error {
	var fe *feature.Error
	if !errors.As(err, &fe) {
		return status.Error(codes.Unavailable, err.Error())
	}
	switch fe.Kind {
	case feature.NotFound:
		return status.Error(codes.NotFound, fe.Msg)
	case feature.Denied:
		return status.Error(codes.PermissionDenied, fe.Msg)
	case feature.InvalidArgument:
		return status.Error(codes.InvalidArgument, fe.Msg)
	case feature.TooLarge:
		return status.Error(codes.ResourceExhausted, fe.Msg)
	case feature.Throttled:
		return rateLimited(&tool.Throttle{Limit: fe.Limit, RetryAfter: fe.RetryAfter})
	case feature.Upstream:
		return status.Error(codes.Unknown, fe.Msg)
	}
	return status.Error(codes.Unavailable, fe.Msg)
}
