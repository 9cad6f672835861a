package grpcapi

import (
	"encoding/json"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// The provider shapes. Schemas go out as the raw JSON the source gave, so
// nothing is lost or reordered on the way.
type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type geminiTools struct {
	FunctionDeclarations []openAIFunction `json:"functionDeclarations"`
}

func exportJSON(format pb.ExportFormat, entries []*registry.Entry) ([]byte, error) {
	switch format {
	case pb.ExportFormat_EXPORT_FORMAT_OPENAI:
		out := make([]openAITool, len(entries))
		for i, e := range entries {
			out[i] = openAITool{Type: "function", Function: openAIFunction{e.Tool.Name, e.Tool.Description, e.Tool.InputSchema}}
		}
		return json.Marshal(out)
	case pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC:
		out := make([]anthropicTool, len(entries))
		for i, e := range entries {
			out[i] = anthropicTool{e.Tool.Name, e.Tool.Description, e.Tool.InputSchema}
		}
		return json.Marshal(out)
	case pb.ExportFormat_EXPORT_FORMAT_GEMINI:
		decls := make([]openAIFunction, len(entries))
		for i, e := range entries {
			decls[i] = openAIFunction{e.Tool.Name, e.Tool.Description, e.Tool.InputSchema}
		}
		return json.Marshal([]geminiTools{{FunctionDeclarations: decls}})
	}
	return nil, status.Error(codes.InvalidArgument, "format is required: EXPORT_FORMAT_OPENAI, EXPORT_FORMAT_ANTHROPIC or EXPORT_FORMAT_GEMINI")
}
