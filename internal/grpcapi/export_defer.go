package grpcapi

import (
	"encoding/json"
	"path"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// Anthropic's server-side tool search: the tool that searches (BM25 over
// the deferred tools' names, descriptions and parameters) and the flag
// that keeps a tool's definition out of the context until it is found.
const (
	anthropicSearchType = "tool_search_tool_bm25_20251119"
	anthropicSearchName = "tool_search_tool_bm25"
)

type anthropicSearchTool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type anthropicDeferredTool struct {
	anthropicTool
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// exportDeferred renders ExportTools with defer_loading: the search tool
// first, then every tool, deferred unless pinned.
func exportDeferred(req *pb.ExportToolsRequest, entries []*registry.Entry) ([]byte, error) {
	if req.GetFormat() != pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC {
		return nil, status.Error(codes.InvalidArgument, "defer_loading and pinned are Anthropic's tool search (EXPORT_FORMAT_ANTHROPIC); for other providers call SearchTools and export only the tools it finds")
	}
	if !req.GetDeferLoading() {
		return nil, status.Error(codes.InvalidArgument, "pinned only applies with defer_loading: set defer_loading, or drop pinned")
	}
	var pinned *auth.Principal
	for i, p := range req.GetPinned() {
		if _, err := path.Match(strings.TrimPrefix(p, "source:"), ""); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "pinned[%d]: bad glob pattern %q: %v", i, p, err)
		}
	}
	if len(req.GetPinned()) > 0 {
		pinned = auth.NewPrincipal("pinned", req.GetPinned(), false)
	}
	out := make([]any, 0, len(entries)+1)
	out = append(out, anthropicSearchTool{Type: anthropicSearchType, Name: anthropicSearchName})
	for _, e := range entries {
		t := e.Tool
		out = append(out, anthropicDeferredTool{
			anthropicTool: anthropicTool{t.Name, t.Description, t.InputSchema},
			DeferLoading:  pinned == nil || !pinned.Allows(t.Name, t.Source),
		})
	}
	return json.Marshal(out)
}
