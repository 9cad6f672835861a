package grpcapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// Paging limits for ListTools (AIP-158).
const (
	defaultPageSize = 1000
	maxPageSize     = 10000
)

type registryService struct {
	pb.UnimplementedRegistryServiceServer
	a *API
}

// filter is a ListTools/WatchTools/ExportTools/SearchTools selection plus
// the caller's view (view.go); a nil set means "any".
type filter struct {
	sources map[string]bool
	names   map[string]bool
	view    core.View
}

func (a *API) newFilter(ctx context.Context, sources, names []string) (filter, error) {
	view, err := a.view(ctx)
	if err != nil {
		return filter{}, err
	}
	f := filter{view: view}
	if len(sources) > 0 {
		f.sources = make(map[string]bool, len(sources))
		for _, s := range sources {
			f.sources[s] = true
		}
	}
	if len(names) > 0 {
		f.names = make(map[string]bool, len(names))
		for _, n := range names {
			f.names[n] = true
		}
	}
	return f, nil
}

func (f filter) match(e *registry.Entry) bool {
	if f.sources != nil && !f.sources[e.Tool.Source] {
		return false
	}
	if f.names != nil && !f.names[e.Tool.Name] {
		return false
	}
	return f.view.Sees(e)
}

func (r *registryService) ListTools(ctx context.Context, req *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	size := int(req.GetPageSize())
	switch {
	case size < 0:
		return nil, status.Error(codes.InvalidArgument, "page_size must be >= 0 (0 means the default of 1000)")
	case size == 0:
		size = defaultPageSize
	case size > maxPageSize:
		size = maxPageSize
	}
	after, err := decodePageToken(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	f, err := r.a.newFilter(ctx, req.GetSources(), req.GetNames())
	if err != nil {
		return nil, err
	}
	snap := r.a.core.Snapshot()
	pt := r.a.protos.get(snap)
	entries := snap.Entries()
	start := 0
	if after != "" {
		start = snap.Seek(after)
	}
	resp := &pb.ListToolsResponse{Revision: snap.Revision()}
	wire := make([][]byte, 0, min(size, len(entries)-start))
	last := -1
	for i := start; i < len(entries); i++ {
		if !f.match(entries[i]) {
			continue
		}
		if len(wire) == size {
			resp.NextPageToken = encodePageToken(entries[last].Tool.Name)
			break
		}
		wire = append(wire, pt.wire[i])
		last = i
	}
	preEncoded(resp, listToolsField, wire)
	return resp, nil
}

// Page tokens carry the last name returned, so paging stays correct in name
// order even when the registry changes between pages.
func encodePageToken(lastName string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("after:" + lastName))
}

func decodePageToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || !strings.HasPrefix(string(b), "after:") {
		return "", status.Error(codes.InvalidArgument, "page_token is not one this server issued; pass the next_page_token of a previous response, or empty for the first page")
	}
	return string(b[len("after:"):]), nil
}

func (r *registryService) GetTool(ctx context.Context, req *pb.GetToolRequest) (*pb.GetToolResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	view, err := r.a.view(ctx)
	if err != nil {
		return nil, err
	}
	snap := r.a.core.Snapshot()
	e, ok := snap.Lookup(req.GetName())
	if !ok || !view.Sees(e) {
		return nil, status.Errorf(codes.NotFound, "no tool named %q (ListTools shows the available names)", req.GetName())
	}
	return &pb.GetToolResponse{Tool: r.a.protos.get(snap).byName[e.Tool.Name]}, nil
}

func (r *registryService) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	call, err := callFromRequest(ctx, req)
	if err == nil {
		err = r.a.checkView(ctx, call.View)
	}
	if err != nil {
		return nil, err
	}
	res, _ := r.a.core.Execute(ctx, call)
	if res.Throttled != nil {
		return nil, rateLimited(res.Throttled)
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up: it gets the status it asked for; the call
		// itself was recorded as timeout/canceled.
		return nil, status.FromContextError(err).Err()
	}
	return &pb.ExecuteResponse{Result: resultToProto(res)}, nil
}

// callFromRequest decodes an ExecuteRequest into a core call, for Execute
// and ExecuteStream alike: the name, the arguments, the answer, the caller
// its auth step attached, the view it chose and the call id. A malformed request is a gRPC
// InvalidArgument; everything about the call itself is the core's.
func callFromRequest(ctx context.Context, req *pb.ExecuteRequest) (core.Call, error) {
	if req.GetName() == "" {
		return core.Call{}, status.Error(codes.InvalidArgument, "name is required: set ExecuteRequest.name to the tool to run")
	}
	var args json.RawMessage
	switch in := req.GetInput().(type) {
	case *pb.ExecuteRequest_ArgumentsJson:
		if s := in.ArgumentsJson; s != "" {
			// A copy: a []byte view of the string's memory would let any
			// tool that writes to its arguments corrupt an immutable
			// string. The copy costs one allocation of the arguments'
			// size (BENCHMARKS.md, "gRPC plumbing").
			args = json.RawMessage(s)
		}
	case *pb.ExecuteRequest_Arguments:
		if in.Arguments != nil {
			b, err := protojson.Marshal(in.Arguments)
			if err != nil {
				return core.Call{}, status.Errorf(codes.InvalidArgument, "arguments: %v", err)
			}
			args = b
		}
	}
	return core.Call{Name: req.GetName(), Arguments: args, Answer: answerFromProto(req.GetAnswer()),
		Protocol: core.ProtocolGRPC, View: viewName(ctx), Caller: auth.From(ctx), CallID: req.GetCallId(), Session: sessionID(ctx)}, nil
}

func (r *registryService) WatchTools(req *pb.WatchToolsRequest, stream pb.RegistryService_WatchToolsServer) error {
	ctx := stream.Context()
	release, err := r.a.enterWatch(ctx)
	if err != nil {
		return err
	}
	defer release()
	f, err := r.a.newFilter(ctx, req.GetSources(), req.GetNames())
	if err != nil {
		return err
	}
	w, snap := r.a.core.Watch()
	defer w.Close()

	sendFull := func(snap *registry.Snapshot) error {
		msg := &pb.WatchToolsResponse{Revision: snap.Revision(), Snapshot: true}
		pt := r.a.protos.get(snap)
		var wire [][]byte
		for i, e := range snap.Entries() {
			if f.match(e) {
				wire = append(wire, pt.wire[i])
				msg.Added = append(msg.Added, e.Tool.Name)
			}
		}
		preEncoded(msg, watchToolsField, wire)
		return stream.Send(msg)
	}
	if err := sendFull(snap); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.a.opts.Shutdown:
			return status.Error(codes.Unavailable, "server is shutting down; reconnect to another replica")
		case ch, ok := <-w.C():
			if !ok {
				return nil
			}
			if ch.Resync {
				if err := sendFull(ch.Next); err != nil {
					return err
				}
				continue
			}
			msg := &pb.WatchToolsResponse{Revision: ch.Next.Revision()}
			added, removed, changed := registry.Diff(ch.Prev, ch.Next)
			msg.Added = f.names2(ch.Next, added)
			msg.Removed = f.names2(ch.Prev, removed)
			msg.Changed = f.names2(ch.Next, changed)
			if len(msg.Added)+len(msg.Removed)+len(msg.Changed) == 0 && (f.sources != nil || f.names != nil || f.view.Caller() != nil || f.view.Narrowed()) {
				continue // nothing this watcher can see changed
			}
			pt := r.a.protos.get(ch.Next)
			var wire [][]byte
			for i, e := range ch.Next.Entries() {
				if f.match(e) {
					wire = append(wire, pt.wire[i])
				}
			}
			preEncoded(msg, watchToolsField, wire)
			if err := stream.Send(msg); err != nil {
				return err
			}
		}
	}
}

// names2 keeps the names whose entry in snap passes the filter.
func (f filter) names2(snap *registry.Snapshot, names []string) []string {
	var out []string
	for _, n := range names {
		if e, ok := snap.Lookup(n); ok && f.match(e) {
			out = append(out, n)
		}
	}
	return out
}

func (r *registryService) ExportTools(ctx context.Context, req *pb.ExportToolsRequest) (*pb.ExportToolsResponse, error) {
	f, err := r.a.newFilter(ctx, req.GetSources(), req.GetNames())
	if err != nil {
		return nil, err
	}
	snap := r.a.core.Snapshot()
	var sel []*registry.Entry
	for _, e := range snap.Entries() {
		if f.match(e) {
			sel = append(sel, e)
		}
	}
	var out []byte
	if req.GetDeferLoading() || len(req.GetPinned()) > 0 {
		out, err = exportDeferred(req, sel) // export_defer.go
	} else {
		out, err = exportJSON(req.GetFormat(), sel)
	}
	if err != nil {
		return nil, err
	}
	return &pb.ExportToolsResponse{Json: string(out)}, nil
}

// GetSkillsPrompt is the catalog of the skill tool, as the caller's view
// (its allowlist, and the named view it chose) lets it see it.
func (r *registryService) GetSkillsPrompt(ctx context.Context, _ *pb.GetSkillsPromptRequest) (*pb.GetSkillsPromptResponse, error) {
	view, err := r.a.view(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.GetSkillsPromptResponse{Prompt: r.a.core.SkillsPromptFor(view)}, nil
}
