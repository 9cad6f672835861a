package grpcapi

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// SearchTools limits: a query is a sentence, not a document, and a page is
// what a model reads in one turn.
const (
	defaultSearchSize = 10
	maxSearchSize     = 100
	maxQueryBytes     = 1024
)

func (r *registryService) SearchTools(ctx context.Context, req *pb.SearchToolsRequest) (*pb.SearchToolsResponse, error) {
	q := req.GetQuery()
	switch {
	case q == "":
		return nil, status.Error(codes.InvalidArgument, "query is required: describe the tool you need in words, e.g. \"open an issue on github\"")
	case len(q) > maxQueryBytes:
		return nil, status.Errorf(codes.InvalidArgument, "query is %d bytes; the limit is %d: describe the tool in a sentence", len(q), maxQueryBytes)
	}
	size := int(req.GetPageSize())
	switch {
	case size < 0:
		return nil, status.Error(codes.InvalidArgument, "page_size must be >= 0 (0 means the default of 10)")
	case size == 0:
		size = defaultSearchSize
	case size > maxSearchSize:
		size = maxSearchSize
	}
	// One snapshot for the ranking and the protos: the response is the
	// registry at exactly one revision, whatever reloads meanwhile.
	f, err := r.a.newFilter(ctx, req.GetSources(), nil)
	if err != nil {
		return nil, err
	}
	// The ranking is made within the caller's view alone, so neither its
	// scores nor its work depend on tools the view hides; sources only
	// narrow it.
	snap := r.a.core.Snapshot()
	hits := r.a.search.For(snap, f.view.Search()).Search(q, size, sourcesFilter(req.GetSources())).Hits
	pt := r.a.protos.get(snap)
	resp := &pb.SearchToolsResponse{Revision: snap.Revision(), Tools: make([]*pb.ScoredTool, len(hits))}
	for i, h := range hits {
		resp.Tools[i] = &pb.ScoredTool{Tool: pt.byName[h.Entry.Tool.Name], Score: h.Score, Reason: h.Reason}
	}
	return resp, nil
}

// sourcesFilter keeps the tools of the named sources; none keeps all.
func sourcesFilter(sources []string) func(*registry.Entry) bool {
	if len(sources) == 0 {
		return nil
	}
	return func(e *registry.Entry) bool { return slices.Contains(sources, e.Tool.Source) }
}
